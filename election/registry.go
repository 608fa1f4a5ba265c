package election

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redlease/redlease/internal/backoff"
	"github.com/redlease/redlease/internal/notice"
)

// The candidates' registry (docs/design.md §6.4): every running elector
// publishes a record (ID, priority, since when it campaigns) on the
// election's notice channel every third of its TTL, and every elector
// keeps the records it hears until they lapse. It is soft state, for
// steering only: a record names who may be handed over to and who goes
// first; no safety rests on it.

// record is a candidate's registry record as an elector heard it.
type record struct {
	id       string
	priority int
	since    time.Time // when it began to campaign, by its clock
	first    time.Time // when this elector first heard it (since it last lapsed)
	expires  time.Time // when it lapses unless refreshed
}

// registry is the records heard, by ID; safe for concurrent use.
type registry struct {
	mu   sync.Mutex
	recs map[string]record
}

// heard records m, a Candidate notice.
func (r *registry) heard(m notice.Message) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.recs == nil {
		r.recs = map[string]record{}
	}
	first := now
	if old, ok := r.recs[m.ID]; ok && now.Before(old.expires) {
		first = old.first
	}
	r.recs[m.ID] = record{id: m.ID, priority: m.Priority, since: m.Since, first: first, expires: now.Add(m.Window)}
}

// live returns the records that have not lapsed, by ID.
func (r *registry) live() []record {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []record
	for id, rec := range r.recs {
		if now.Before(rec.expires) {
			out = append(out, rec)
		} else {
			delete(r.recs, id)
		}
	}
	slices.SortFunc(out, func(a, b record) int { return strings.Compare(a.id, b.id) })
	return out
}

// find returns the live record of id.
func (r *registry) find(id string) (record, bool) {
	recs := r.live()
	i := slices.IndexFunc(recs, func(rec record) bool { return rec.id == id })
	if i < 0 {
		return record{}, false
	}
	return recs[i], true
}

// ids lists the live records' IDs, for error messages.
func (r *registry) ids() string {
	var s []string
	for _, rec := range r.live() {
		s = append(s, rec.id)
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// above returns the live candidate of the highest priority above p (the
// lowest ID among equals), other than the IDs in not, heard for at least
// ready; false when none.
func (r *registry) above(p int, ready time.Duration, not ...string) (record, bool) {
	var best record
	found := false
	for _, rec := range r.live() {
		if rec.priority <= p || slices.Contains(not, rec.id) || time.Since(rec.first) < ready {
			continue
		}
		if !found || rec.priority > best.priority {
			best, found = rec, true
		}
	}
	return best, found
}

// announce publishes this elector's record until ctx ends: at once, then
// every third of the TTL (jittered), the record lasting a TTL, and at a
// roll call or a change of Config.Leaderships (rollCall); while
// Config.Leaderships is full and this elector does not lead, a record that
// lapses at once instead, once.
func (e *Elector) announce(ctx context.Context, since time.Time) {
	m := notice.Message{Kind: notice.Candidate, ID: e.cfg.Lease.ID, Priority: e.cfg.Priority,
		Since: since, Window: e.cfg.Lease.TTL}
	payload, ch := m.Encode(), notice.Channel(e.name)
	m.Window = time.Millisecond
	withdraw, withdrawn := m.Encode(), false
	for {
		p := payload
		if l := e.cfg.Leaderships; l != nil && len(l) == cap(l) && !e.IsLeader() {
			// Its process leads its cap of elections: it could not take
			// over, so it withdraws its record (once: it lapses at once).
			p = withdraw
		}
		if p == payload || !withdrawn {
			if _, err := e.client.Internal().Publish(ctx, ch, p); err != nil && ctx.Err() == nil {
				e.log.Debug("publishing the registry record failed", "error", err)
			}
			withdrawn = p == withdraw
		}
		t := time.NewTimer(backoff.Jitter(e.cfg.Lease.TTL / 3))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-e.roll:
			t.Stop()
		}
	}
}

// rollCall makes announce publish the record now, without waiting.
func (e *Elector) rollCall() {
	select {
	case e.roll <- struct{}{}:
	default:
	}
}
