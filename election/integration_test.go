package election

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/faultproxy"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/observer"
	"github.com/redlease/redlease/redlock"
)

// Integration tests against 5 real redis-server processes. Every candidate
// reaches them through its own proxies, so that it can "crash": its
// proxies refuse every connection, it can neither refresh nor release,
// and it keeps believing it leads until its term's deadline.

// realNodes returns one go-redis client per server, through proxies when
// given, with short timeouts and no retries.
func realNodes(t testing.TB, addrs []string) []redis.UniversalClient {
	t.Helper()
	var nodes []redis.UniversalClient
	for _, a := range addrs {
		nodes = append(nodes, redistest.NewClient(t, &redis.Options{Addr: a, DialTimeout: 250 * time.Millisecond,
			ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond, MaxRetries: -1}))
	}
	return nodes
}

// proxies starts one proxy per address, closed on cleanup.
func proxies(t testing.TB, addrs []string) []*faultproxy.Proxy {
	t.Helper()
	var ps []*faultproxy.Proxy
	for _, a := range addrs {
		ps = append(ps, redistest.NewProxy(t, a))
	}
	return ps
}

func proxyAddrs(ps []*faultproxy.Proxy) []string { return faultproxy.Addrs(ps) }

// seen records the leaders an observer's watch reported.
type seen struct {
	mu      sync.Mutex
	tokens  map[uint64]map[string]bool // every leader ID reported with each token
	unknown int
	changed chan struct{} // closed and replaced on every event
}

func watchAll(t testing.TB, ctx context.Context, o *observer.Observer) *seen {
	s := &seen{tokens: map[uint64]map[string]bool{}, changed: make(chan struct{})}
	w := o.Watch(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w {
			s.mu.Lock()
			switch {
			case ev.Err != nil:
				s.unknown++
			case ev.Leader.Value != "":
				if s.tokens[ev.Leader.Token] == nil {
					s.tokens[ev.Leader.Token] = map[string]bool{}
				}
				s.tokens[ev.Leader.Token][ev.Leader.ID] = true
			}
			close(s.changed)
			s.changed = make(chan struct{})
			s.mu.Unlock()
		}
	}()
	t.Cleanup(func() { <-done })
	return s
}

// waitUnknown waits until the observer reported the leader unknown.
func (s *seen) waitUnknown(t testing.TB, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		s.mu.Lock()
		n, ch := s.unknown, s.changed
		s.mu.Unlock()
		if n > 0 {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("the observer did not report the leader unknown within %s", timeout)
		}
	}
}

// waitToken waits until the observer reported the term of token.
func (s *seen) waitToken(t testing.TB, token uint64, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		s.mu.Lock()
		_, ok := s.tokens[token]
		ch := s.changed
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("the observer did not report term %d within %s", token, timeout)
		}
	}
}

// candidate of the integration test: an elector with its own client,
// through its own proxies; replaced by a fresh Elector when its Run is
// cancelled.
type member struct {
	id     string
	client *redlock.Client
	ps     []*faultproxy.Proxy
	run    *running
}

// TestIntegrationManyTerms: 5 candidates on 5 real servers, 30+ terms
// ended by Resign, by cancelling the leader's Run, and by crashing the
// leader (no refresh, no release). No two terms' contexts are alive at
// once and no term's work runs into the next term (on the monotonic
// clock), tokens strictly increase, every OnElected is followed by exactly
// one OnDemoted, and two observers report every leader.
func TestIntegrationManyTerms(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real redis-server processes")
	}
	const terms = 33
	g := redistest.Start(t, 5)
	// NodeTimeout: room for a busy machine under -race (at 100ms a Resign's
	// release timed out on a majority in a loaded run here).
	clientCfg := redlock.Config{NodeTimeout: 250 * time.Millisecond}
	h := newHistory()
	cfgFor := func(id string) Config {
		c := Config{
			Lease: lease.Config{ID: id, TTL: time.Second, RenewInterval: 300 * time.Millisecond, SafetyMargin: 200 * time.Millisecond,
				RetryDelay: 50 * time.Millisecond, Logger: testLogger(t)},
		}
		h.record(&c, id, nil)
		return c
	}

	var members []*member
	for i := range 5 {
		ps := proxies(t, g.Addrs())
		m := &member{id: fmt.Sprintf("c%d", i), ps: ps, client: newClient(t, clientCfg, realNodes(t, proxyAddrs(ps)))}
		m.run = start(t, newElector(t, m.client, "many", cfgFor(m.id)))
		members = append(members, m)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var observers []*seen
	for range 2 {
		o, err := observer.New(newClient(t, clientCfg, realNodes(t, g.Addrs())), "many", observer.Config{PollInterval: 200 * time.Millisecond})
		require.NoError(t, err)
		observers = append(observers, watchAll(t, ctx, o))
	}
	t.Cleanup(cancel) // before the watches' cleanups wait for them

	byID := func(id string) *member {
		for _, m := range members {
			if m.id == id {
				return m
			}
		}
		t.Fatalf("no member %s", id)
		return nil
	}
	var crashes, resigns, stops int
	var failover []time.Duration
	waited := map[uint64]bool{} // the terms the observers were waited for
	for i := range terms {
		tn := h.next(t, 10*time.Second)
		for _, s := range observers {
			s.waitToken(t, tn.token, 10*time.Second)
		}
		waited[tn.token] = true
		m := byID(tn.id)
		switch {
		case i == terms-1:
		case i%3 == 2: // crash: the leader's proxies refuse everything
			crashes++
			for _, p := range m.ps {
				p.Disable()
			}
			at := time.Now()
			nextTerm := h.next(t, 10*time.Second)
			failover = append(failover, time.Since(at))
			h.elected <- nextTerm // the loop takes it next
			for _, p := range m.ps {
				p.Enable()
			}
		case i%5 == 4: // the leader's process stops: cancel Run, start afresh
			stops++
			require.ErrorIs(t, m.run.stop(t), context.Canceled)
			m.run = start(t, newElector(t, m.client, "many", cfgFor(m.id)))
		default:
			resigns++
			require.NoError(t, m.run.Resign(context.Background()))
		}
	}
	for _, m := range members {
		require.ErrorIs(t, m.run.stop(t), context.Canceled)
	}
	// With a majority of servers frozen, observers say "unknown", not the
	// last leader and not "no leader".
	t.Cleanup(func() {
		for _, s := range g.Servers() {
			_ = s.Resume()
		}
	})
	for i := range 3 {
		require.NoError(t, g.Server(i).Pause())
	}
	for _, s := range observers {
		s.waitUnknown(t, 10*time.Second)
	}
	cancel()

	ts := h.tenures()
	require.NoError(t, checkTenures(ts))
	assert.GreaterOrEqual(t, len(ts), terms)
	for _, s := range observers {
		s.mu.Lock()
		slices.SortFunc(ts, func(a, b tenure) int { return cmp.Compare(a.token, b.token) })
		for _, tn := range ts {
			// A term begun while the candidates stop may be too short to read.
			if waited[tn.token] {
				assert.True(t, s.tokens[tn.token][tn.id], "observer saw term %d of %s", tn.token, tn.id)
			}
			// No other leader is reported with this token: a term read
			// before its own token showed is reported with Token 0, then
			// again with its token (#32: standbys saw the previous term's).
			for id := range s.tokens[tn.token] {
				assert.Equal(t, tn.id, id, "token %d (term of %s) reported for %s", tn.token, tn.id, id)
			}
		}
		s.mu.Unlock()
	}
	for _, d := range failover {
		// A sanity bound only (the machine may be loaded, -race is on):
		// BenchmarkHandover measures failover times.
		assert.Less(t, d, 5*time.Second, "crash failover")
	}
	t.Logf("%d terms: %d resigns, %d stops, %d crashes; crash failovers: %v", len(ts), resigns, stops, crashes, failover)
}
