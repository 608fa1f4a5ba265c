package election

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/hookstest"
	"github.com/redlease/redlease/internal/testing/testnodes"
	"github.com/redlease/redlease/redlock"
)

// notified is one elector with every path recorded: its callbacks (in the
// order they were called), its Events (read by a goroutine, forwarded on
// fwd for the test to wait on) and its client's Hooks.
type notified struct {
	*running
	callbacks, events recorder
	hooks             *hookstest.Recorder
	fwd               chan Event
	read              chan struct{} // closed when Events was closed and read
}

// line is what the paths are compared by: the kind and the leader.
func line(k redlock.EventKind, h redlock.Holder) string {
	return fmt.Sprintf("%s %s %d", k, h, h.Token)
}

// startNotified starts an elector with ID id whose callbacks record, and
// whose OnLeaderChange first waits for gate (nil: no wait).
func startNotified(t *testing.T, nodes []redis.UniversalClient, id string, gate <-chan struct{}) *notified {
	n := &notified{hooks: &hookstest.Recorder{}, fwd: make(chan Event, 64), read: make(chan struct{})}
	ccfg := unitClientCfg
	ccfg.Hooks = n.hooks.Observe
	cfg := unitCfg(t, id)
	cfg.OnElected = func(ctx context.Context, term Term) {
		n.callbacks.add(line(EventElected, term.Holder))
		<-ctx.Done()
	}
	cfg.OnDemoted = func(term Term, _ error) { n.callbacks.add(line(EventDemoted, term.Holder)) }
	cfg.OnLeaderChange = func(l redlock.Holder) {
		if gate != nil {
			<-gate
		}
		n.callbacks.add(line(EventLeaderChanged, l))
	}
	n.running = start(t, newElector(t, newClient(t, ccfg, nodes), "notify", cfg))
	go func() {
		defer close(n.read)
		defer close(n.fwd)
		for ev := range n.Events() {
			n.events.add(line(ev.Kind, ev.Leader))
			n.fwd <- ev
		}
	}()
	return n
}

// hookLines is what the Hooks saw of the election's kinds.
func (n *notified) hookLines() []string {
	var got []string
	for _, ev := range n.hooks.Events() {
		switch ev.Kind {
		case EventElected, EventDemoted, EventLeaderChanged:
			got = append(got, fmt.Sprintf("%s %d", ev.Kind, ev.Token))
		}
	}
	return got
}

// The callbacks and the Events channel carry the same events in the same
// order, even when a callback blocks: OnElected waits for the callbacks
// queued before it (b's OnLeaderChange of a is held until b's term began).
// Nothing is reported twice on a path: a term is EventElected, not also a
// change of leader, and the Hooks see the same events once each.
func TestEventsAndCallbacksAgree(t *testing.T) {
	_, nodes := testnodes.Minis(t, 3)
	a := startNotified(t, nodes, "a", nil)
	waitEvent(t, a.fwd, wait, kind(EventElected))

	gate := make(chan struct{})
	b := startNotified(t, nodes, "b", gate)
	waitEvent(t, b.fwd, wait, kind(EventLeaderChanged)) // b sees a (OnLeaderChange held)
	require.NoError(t, a.Resign(context.Background()))
	waitEvent(t, b.fwd, wait, kind(EventElected))
	close(gate) // only now may b's OnLeaderChange of a return
	waitEvent(t, a.fwd, wait, func(ev Event) bool { return ev.Kind == EventLeaderChanged && ev.Leader.ID == "b" })

	// a first: stopped after b, a took the term b's stop released
	// ("elected a 3" in a clean-clone run).
	require.ErrorIs(t, a.stop(t), context.Canceled)
	require.ErrorIs(t, b.stop(t), context.Canceled)
	<-a.read
	<-b.read

	for _, n := range []*notified{a, b} {
		events := n.events.get()
		assert.Equal(t, events, n.callbacks.get(), "%s: the callbacks, in the order of the events", n.cfg.Lease.ID)
		var hooks []string
		for i, ev := range events {
			var k redlock.EventKind
			var who string
			var token uint64
			_, err := fmt.Sscanf(ev, "%s %s %d", &k, &who, &token)
			require.NoError(t, err)
			if i == 0 && k == EventLeaderChanged {
				continue // the first look is no change: not a hook
			}
			hooks = append(hooks, fmt.Sprintf("%s %d", k, token))
		}
		assert.Equal(t, hooks, n.hookLines(), "%s: the hooks saw the same events", n.cfg.Lease.ID)
		seen := map[string]bool{}
		for _, ev := range events {
			assert.False(t, seen[ev], "%s: %q reported twice: %v", n.cfg.Lease.ID, ev, events)
			seen[ev] = true
		}
	}
	// (A look between a's release and b's term may see nobody.)
	assert.Equal(t, []string{"elected a 1", "demoted a 1", "leader_changed b 2"}, someone(a.events.get()))
	assert.Equal(t, []string{"leader_changed a 1", "elected b 2", "demoted b 2"}, someone(b.events.get()))
}

// someone drops the changes to nobody from lines.
func someone(lines []string) []string {
	var got []string
	for _, l := range lines {
		if l != line(EventLeaderChanged, redlock.Holder{}) {
			got = append(got, l)
		}
	}
	return got
}
