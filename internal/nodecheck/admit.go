package nodecheck

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Conf is what a client knows of one node's configuration. The zero Conf
// was never checked. Safe for concurrent use.
type Conf struct {
	mu sync.Mutex
	// checkedAt is when the newest check that got an answer started (the
	// answer shows the node as it was at that moment or later); zero:
	// never.
	checkedAt   time.Time
	uncheckable bool    // the node refuses CONFIG GET: never checked again
	refused     error   // non-nil: the node's votes do not count
	flight      *flight // the check under way, if any
}

// flight is one check of a node's configuration, shared by the requests
// that wait for it.
type flight struct {
	start time.Time
	done  chan struct{} // closed when err is set
	err   error         // the refusal, a failed check, or nil: the vote may count
}

// Admit reports whether n's vote may count: nil, or why not. It may check
// n's configuration first (see the package doc), bounded by ctx: a vote
// counted at time t is backed by a check that started after t - Stale.
func (ch *Checker) Admit(ctx context.Context, n Node) error {
	nc := n.Conf()
	nc.mu.Lock()
	if nc.uncheckable {
		nc.mu.Unlock()
		return nil
	}
	now := time.Now()
	age := now.Sub(nc.checkedAt)
	fresh := !nc.checkedAt.IsZero() && age < Stale
	f := nc.flight
	if f != nil && now.Sub(f.start) >= Stale {
		f = nil // a check that hangs (go-redis may not honour its deadline) is no use
	}
	if f == nil && (!fresh || age >= Recheck) {
		f = ch.start(n)
	}
	refused := nc.refused
	nc.mu.Unlock()
	if fresh {
		return refused
	}
	select {
	case <-f.done:
		return f.err
	case <-ctx.Done():
		return fmt.Errorf("configuration check (maxmemory-policy) not answered: %w", ctx.Err())
	}
}

// start starts a check of n's configuration in the background and makes
// it n's flight. The caller holds n.Conf().mu.
func (ch *Checker) start(n Node) *flight {
	nc := n.Conf()
	f := &flight{start: time.Now(), done: make(chan struct{})}
	nc.flight = f
	ch.WG.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), ch.Timeout)
		defer cancel()
		conf, err := n.ReadConf(ctx)
		nc.mu.Lock()
		defer nc.mu.Unlock()
		if nc.flight == f {
			nc.flight = nil
		}
		defer close(f.done)
		switch {
		case err != nil && Refused(err):
			if !nc.uncheckable {
				ch.Log.Debug("cannot read node configuration; maxmemory-policy not checked", "node", n.Name(), "error", err)
			}
			nc.uncheckable, nc.refused = true, nil
			return
		case err != nil:
			f.err = stepErr(err)
			return
		}
		f.err = ch.Evicting(n.Name(), conf)
		ch.record(n, f)
	})
	return f
}

// record makes flight f's answer n's, unless a newer check has answered
// already, and logs a change of verdict. The caller holds n.Conf().mu.
func (ch *Checker) record(n Node, f *flight) {
	nc := n.Conf()
	if !f.start.After(nc.checkedAt) {
		return // a newer check has answered already
	}
	was := nc.refused
	nc.checkedAt, nc.refused = f.start, f.err
	switch {
	case nc.refused != nil && was == nil:
		ch.Log.Error("node refused: its votes do not count until it stops evicting", "node", n.Name(), "error", nc.refused)
	case nc.refused == nil && was != nil:
		ch.Log.Warn("node no longer evicts: its votes count again", "node", n.Name())
	}
}
