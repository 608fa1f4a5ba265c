package redlock

import (
	"slices"
	"time"

	"github.com/redlease/redlease/internal/notice"
)

// Holder is who holds a key: the one answer to "who holds it" of every
// package. [Client.Inspect] returns it from a majority read, and so do
// observer.Observer.Leader and the events of a Watch; lease.Lease.Holder
// gives a lease's own; election.Term embeds it. The zero Holder (Value
// empty) means nobody holds the key: the error that says so matches
// [ErrNoHolder]. A Holder is a plain value; its Metadata map must not be
// modified once shared.
type Holder struct {
	// Key is the key held: for a semaphore's permit (lease.Config.Permits),
	// the permit's own key.
	Key string
	// Permit is the index of the semaphore permit held, in [0, Permits)
	// (lease.Config.Permits), as a lease and an observer of the semaphore
	// report it; 0 for a plain lock or lease (its one permit) and from
	// [Client.Inspect], which reads one key.
	Permit int
	// Value is the value stored in the key: unique per acquisition, so
	// two Holders with the same Value are the same acquisition (the same
	// term of an election). Empty for nobody.
	Value string
	// ID and Metadata are the identity a lease or an elector published in
	// its value (lease.Config.ID and Metadata; Metadata nil when none).
	// ID is empty for a value not written by package lease (a plain
	// Lock's random value, another tool's): see [Holder.String].
	ID       string
	Metadata map[string]string
	// Token is the fencing token of the acquisition (see [Lock.Token]);
	// from a majority read, exactly the holder's once its acquisition
	// completed, whichever nodes are silent (docs/design.md §4.4); 0 (not
	// known yet) from a read that found no counter a majority vouches
	// for (made while the acquisition was on its way). An observer also
	// reports 0 for a new holder read before its token was written back.
	Token uint64
	// Remaining is the validity the holder had left when read, as far as
	// the nodes tell: the lowest PTTL of the majority, less the read's
	// duration and the drift allowance. An estimate for display and
	// waiting, not a guarantee: only the holder knows its deadline.
	Remaining time.Duration
	// Expires estimates, on this process's clock, when a majority of
	// nodes will have dropped the key unless the holder extends it: the
	// earliest another client can take over after a crash. Zero when
	// unknown (a key without expiry). For a holder's own Holder (a
	// lease's, a term's), its validity's end when the Holder was made.
	Expires time.Time
}

// String returns the holder's ID; "foreign:" and the value for a value
// not written by package lease; "none" for the zero Holder.
func (h Holder) String() string {
	switch {
	case h.Value == "":
		return "none"
	case h.ID == "" && notice.DecodeValue(h.Value).Foreign:
		return "foreign:" + h.Value
	}
	return h.ID
}

// holderOf is the Holder of value stored in key, its ID and Metadata
// decoded (internal/notice); the timing fields are left zero.
func holderOf(key, value string) Holder {
	h := Holder{Key: key, Value: value}
	if value != "" {
		d := notice.DecodeValue(value)
		h.ID, h.Metadata = d.ID, d.Metadata
	}
	return h
}

// expires estimates when a majority will have dropped the key whose
// holder's value is on nodes with the given TTLs (of n nodes in all), read
// at t0: the nodes without it count already, so it is the k-th lowest TTL
// among the holder's, k = quorum - (n - holders).
func expires(ttls []time.Duration, n, quorum int, t0 time.Time) time.Time {
	k := quorum - (n - len(ttls))
	if k < 1 || k > len(ttls) {
		return time.Time{}
	}
	slices.Sort(ttls)
	if ttls[k-1] <= 0 {
		return time.Time{} // no TTL (a foreign key without expiry)
	}
	return t0.Add(ttls[k-1])
}
