package redlock

import (
	"errors"
	"fmt"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"
	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/quarantine"
	"github.com/redlease/redlease/internal/testing/testnodes"
)

// Readiness (docs/design.md §4.9), on the fake clock
// of testing/synctest with in-memory miniredis nodes: a node that lost its
// state is Ready again at the end of its quarantine whatever the traffic,
// while a key stays held elsewhere throughout. miniredis has no run_id, so
// a restart is a FLUSHALL (the marker is gone, as after an empty restart).

const readinessMaxTTL = 5 * time.Second

// lateBy is how late the slow node of a test answers.
const lateBy = 10 * time.Millisecond

// readinessCfg: requests take no fake time, so NodeTimeout only bounds the TTLs.
var readinessCfg = Config{NodeTimeout: 100 * time.Millisecond, MaxTTL: readinessMaxTTL}

// readMarker reads a node's marker straight from miniredis (no contact
// through a client): when its quarantine started, and whether its floor is
// raised.
func readMarker(m *miniredis.Miniredis) (created time.Time, raised, ok bool) {
	c := m.HGet(markerKey, "c")
	if c == "" {
		return time.Time{}, false, false
	}
	ms, _ := strconv.ParseInt(c, 10, 64)
	return time.UnixMilli(ms), m.HGet(markerKey, "ok") == "1", true
}

// repeatEvery runs f every period until the test ends, and fails t on its
// error unless the test is ending.
func repeatEvery(t *testing.T, period time.Duration, f func() error) {
	go func() {
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-t.Context().Done():
				return
			case <-tick.C:
				if err := f(); t.Context().Err() == nil {
					assert.NoError(t, err)
				}
			}
		}
	}()
}

// holdExtended takes key on c and extends it every second until the test ends.
func holdExtended(t *testing.T, c *Client, key string) *Lock {
	l, err := c.TryAcquire(t.Context(), key, 3*time.Second)
	require.NoError(t, err)
	repeatEvery(t, time.Second, func() error { return l.Extend(t.Context(), 0) })
	return l
}

func TestReadyAfterQuarantineWhileKeyHeld(t *testing.T) {
	for _, tc := range readyAfterQuarantineCases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { checkReadyAfterQuarantine(t, tc) })
		})
	}
}

// readyAfterQuarantineCase is one case of TestReadyAfterQuarantineWhileKeyHeld.
type readyAfterQuarantineCase struct {
	name string
	// traffic is what the other client does, every period, besides
	// the holder's extensions (nil: nothing), and its error on an
	// unexpected outcome.
	traffic func(t *testing.T, c *Client) error
	period  time.Duration
	// startBy bounds when the node's quarantine starts after the
	// restart: at the next contact that reaches it.
	startBy time.Duration
}

var readyAfterQuarantineCases = []readyAfterQuarantineCase{
	{"candidate retries on the held key", func(t *testing.T, c *Client) error {
		if _, err := c.TryAcquire(t.Context(), "held", time.Second); !errors.Is(err, ErrNotAcquired) {
			return fmt.Errorf("acquired a held key, or %w", err)
		}
		return nil
	}, DefaultRetryDelay, DefaultRetryDelay},
	{"observer inspects", func(t *testing.T, c *Client) error {
		in, err := c.Inspect(t.Context(), "held")
		if err == nil && in.Value == "" {
			err = errors.New("no holder")
		}
		return err
	}, time.Second, 2 * time.Second},
	// Only the holder's extensions: the periodic pass (quarantine.ProbeEvery).
	{"holder extends only", nil, 0, quarantine.ProbeEvery + time.Second},
}

// checkReadyAfterQuarantine runs one case, in a synctest bubble.
func checkReadyAfterQuarantine(t *testing.T, tc readyAfterQuarantineCase) {
	ms, other := startHeldWithLateNode(t)

	restart := time.Now()
	ms[2].FlushAll()
	if tc.traffic != nil {
		repeatEvery(t, tc.period, func() error { return tc.traffic(t, other) })
	}
	// The quarantine starts at the next contact.
	var created time.Time
	for {
		var ok bool
		if created, _, ok = readMarker(ms[2]); ok {
			break
		}
		require.LessOrEqual(t, time.Since(restart), tc.startBy+lateBy, "no marker on the restarted node")
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("quarantine started %s after the restart", created.Sub(restart))

	// A healthy majority answered during the quarantine: the
	// floor is raised by its end, with no free key.
	time.Sleep(time.Until(created.Add(readinessMaxTTL)))
	synctest.Wait()
	_, raised, _ := readMarker(ms[2])
	assert.True(t, raised, "floor not raised at the end of the quarantine")
	in, err := other.Inspect(t.Context(), "held")
	require.NoError(t, err)
	assert.False(t, in.Nodes[2].Quarantined, "%+v", in.Nodes[2])
	assert.Zero(t, in.Nodes[2].Quarantine)
	// It votes: another key is granted by all three nodes.
	l, err := other.TryAcquire(t.Context(), "free", time.Second)
	require.NoError(t, err)
	time.Sleep(lateBy) // node 2's answer
	synctest.Wait()
	v, _ := ms[2].Get("free")
	assert.Equal(t, l.Value(), v, "the restarted node voted yes")
	err = l.Release(t.Context())
	require.NoError(t, err)
}

// startHeldWithLateNode starts three nodes, node 2 late, and a holder of
// "held" that extends it; it returns the nodes and another client, in a
// steady state.
func startHeldWithLateNode(t *testing.T) ([]*miniredis.Miniredis, *Client) {
	ms, nodes := testnodes.MemMinis(t, 3)
	// Node 2 answers scripts late: an acquisition that fails
	// on the two others returns without its answer.
	ms[2].Server().SetPreHook(func(_ *server.Peer, cmd string, _ ...string) bool {
		if cmd == "EVAL" || cmd == "EVALSHA" {
			time.Sleep(lateBy)
		}
		return false
	})
	cfg := readinessCfg
	cfg.Logger = testnodes.Logger(t, hclog.Info)
	holder := newClient(t, cfg, nodes)
	other := newClient(t, cfg, nodes)
	holdExtended(t, holder, "held")
	// A steady state, periodic passes included; the restart
	// comes a second after one, so that the next falls after
	// the quarantine and the others must raise the node.
	time.Sleep(2*quarantine.ProbeEvery + time.Second)
	synctest.Wait()
	return ms, other
}

// raisedFromHealthy is the line of a raise from a healthy majority.
const raisedFromHealthy = "fencing floor raised; the node votes once its quarantine is over"

// assertRaisesLogged checks the lines of a readiness pass that raised
// all three nodes of a test without a healthy majority (msg is its line
// for a node) while an acquisition ran: each raise is logged once, by the
// pass, or by the acquisition when it saw a healthy majority (the nodes
// the pass raised before its requests came) and logged first, which it
// can for at most the one node outside that majority. before is the
// count of raisedFromHealthy lines before the pass; it returns the count
// after.
func assertRaisesLogged(t *testing.T, logs *testnodes.LogBuffer, msg string, before int) int {
	t.Helper()
	byPass, fromHealthy := logs.Count(msg), logs.Count(raisedFromHealthy)
	assert.Equal(t, 3, byPass+fromHealthy-before, "every raise logged once")
	assert.GreaterOrEqual(t, byPass, 2, "the pass logged a majority's raises")
	return fromHealthy
}

func linesLogger(l *testnodes.LogBuffer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: l})
}

const repeatWarning = "tokens may repeat"

// Without a healthy majority the floor can only be raised when the
// quarantines are over: the first call after their end does it. Fresh
// nodes (never bootstrapped, no token anywhere) have nothing to repeat:
// no warning. Nodes that all lost their state after tokens were handed
// out get the warning, and the floor from the highest token this client
// saw, so that its tokens still increase.
func TestReadyWithoutHealthyMajority(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms, nodes := testnodes.MemMinis(t, 3)
		logs := &testnodes.LogBuffer{}
		cfg := readinessCfg
		cfg.Logger = linesLogger(logs)
		c, err := New(t.Context(), cfg, nodes...) // not bootstrapped: every node quarantined
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		start := time.Now()
		acquireAt := func(at time.Time) (*Lock, error) {
			time.Sleep(time.Until(at))
			return c.TryAcquire(t.Context(), "k", time.Second)
		}
		_, err = acquireAt(start.Add(readinessMaxTTL / 2))
		require.ErrorIs(t, err, ErrNotAcquired, "every node is quarantined")
		synctest.Wait()
		for i, m := range ms {
			_, raised, _ := readMarker(m)
			require.False(t, raised, "node %d raised without a healthy majority, during the quarantines", i)
		}

		// The first call after the quarantines' end (this one) starts the
		// pass; the next one finds every node ready. This one acquires if
		// the pass was quicker than its requests (TestReadyAtQuarantineEnd).
		if l, err := acquireAt(start.Add(readinessMaxTTL)); err == nil {
			require.NoError(t, l.Release(t.Context()))
		}
		synctest.Wait()
		for i, m := range ms {
			_, raised, _ := readMarker(m)
			require.True(t, raised, "node %d not raised by the first call after the quarantines", i)
		}
		l, err := acquireAt(time.Now())
		require.NoError(t, err)
		first := l.Token()
		require.NoError(t, l.Release(t.Context()))
		assert.Zero(t, logs.Count(repeatWarning), "fresh nodes: nothing can repeat")
		fromHealthy := assertRaisesLogged(t, logs, "fresh nodes", 0)

		// Every node loses its state: no node reports a token, but this
		// client handed one out.
		for _, m := range ms {
			m.FlushAll()
		}
		lost := time.Now()
		_, err = acquireAt(lost)
		require.ErrorIs(t, err, ErrNotAcquired)
		l, err = acquireAt(lost.Add(readinessMaxTTL + DefaultRetryDelay))
		if err != nil { // the pass started by the call before
			synctest.Wait()
			l, err = acquireAt(time.Now())
		}
		require.NoError(t, err)
		assert.Greater(t, l.Token(), first, "the floor is the highest token this client saw")
		synctest.Wait() // the pass may still be logging: this call may have acquired before it ended
		assertRaisesLogged(t, logs, repeatWarning, fromHealthy)
		require.NoError(t, l.Release(t.Context()))
	})
}

// At the quarantines' end the call that starts the readiness pass races
// it: the pass runs in the background, and the call's own requests may
// reach the nodes before the pass raised them (the call fails) or after
// (it acquires). Both orders forced: either way every node is raised and
// its raise logged once, and the next call acquires. (The first order was
// once all that TestReadyWithoutHealthyMajority allowed: it flaked.)
func TestReadyAtQuarantineEnd(t *testing.T) {
	for _, tc := range []struct {
		name     string
		late     func(args []string) bool // which scripts the nodes answer lateBy late
		acquired bool
	}{
		{"pass first", func(args []string) bool { return len(args) > 2 && args[2] == "k" }, true},        // acquire.lua on "k"
		{"call first", func(args []string) bool { return len(args) > 2 && args[2] == markerKey }, false}, // probe.lua, raise.lua
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ms, nodes := testnodes.MemMinis(t, 3)
				logs := &testnodes.LogBuffer{}
				cfg := readinessCfg
				cfg.Logger = linesLogger(logs)
				c, err := New(t.Context(), cfg, nodes...) // not bootstrapped
				require.NoError(t, err)
				t.Cleanup(func() { _ = c.Close() })
				end := time.Now().Add(readinessMaxTTL)
				time.Sleep(readinessMaxTTL / 2)
				_, err = c.TryAcquire(t.Context(), "k", time.Second) // notes when the quarantines end
				require.ErrorIs(t, err, ErrNotAcquired)
				synctest.Wait()

				for _, m := range ms {
					m.Server().SetPreHook(func(_ *server.Peer, cmd string, args ...string) bool {
						if (cmd == "EVALSHA" || cmd == "EVAL") && tc.late(args) {
							time.Sleep(lateBy)
						}
						return false
					})
				}
				time.Sleep(time.Until(end))
				l, err := c.TryAcquire(t.Context(), "k", time.Second)
				if tc.acquired {
					require.NoError(t, err, "the pass raised every node before the call's requests came")
					require.NoError(t, l.Release(t.Context()))
				} else {
					require.ErrorIs(t, err, ErrNotAcquired)
				}
				time.Sleep(4 * lateBy) // the pass's late answers: a probe, then a raise a node
				synctest.Wait()
				assert.Equal(t, 3, logs.Count("fresh nodes"), "every raise logged once, by the pass")
				for i, m := range ms {
					_, raised, _ := readMarker(m)
					require.True(t, raised, "node %d not raised by the pass at the quarantines' end", i)
				}
				l, err = c.TryAcquire(t.Context(), "k", time.Second)
				require.NoError(t, err)
				require.NoError(t, l.Release(t.Context()))
			})
		})
	}
}
