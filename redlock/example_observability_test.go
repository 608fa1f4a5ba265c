package redlock_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/redlease/redlease/redlock"
)

// A *slog.Logger as the logger of a client (the Configs of lease,
// election and observer take it the same way). Fresh nodes are
// quarantined: New says so in one record that names them all.
func ExampleSlogLogger() {
	ctx := context.Background()
	nodes, stop := embedded(3)
	defer stop()

	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		Level: slog.LevelWarn,
		// Level and message only, for a stable Output: yours keeps the rest.
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key != slog.LevelKey && a.Key != slog.MessageKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	client, err := redlock.New(ctx, redlock.Config{Logger: redlock.SlogLogger(logger), NodeTimeout: time.Second}, nodes...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	// Output:
	// level=WARN msg="nodes are quarantined: they have no marker, or restarted, and may have forgotten locks; they vote after the quarantine"
}

// counts counts the events given to its Observe (Config.Hooks) by kind
// and outcome (the labels "op" and "outcome" of contrib/prometheus and
// contrib/otel, the ready-made adapters).
type counts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counts) Observe(ev redlock.Event) {
	if ev.Kind == redlock.EventQuarantine {
		return // a node's state, not an operation: the adapters keep it as a gauge per node
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[string(ev.Kind)+" "+ev.Outcome]++
}

// Config.Hooks sees every acquisition, extension, release, node error,
// quarantine, lost lease and term of a client and of what is built on it.
func ExampleConfig_hooks() {
	ctx := context.Background()
	nodes, stop := embedded(3)
	defer stop()

	h := &counts{n: map[string]int{}}
	client, err := redlock.New(ctx, redlock.Config{Hooks: h.Observe, NodeTimeout: time.Second}, nodes...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	_ = client.Bootstrap(ctx) // brand-new nodes: no quarantine to wait for

	lock, _ := client.TryAcquire(ctx, "reports", 10*time.Second)
	_, err = client.TryAcquire(ctx, "reports", 10*time.Second) // held: a majority says no
	fmt.Println(err != nil)
	_ = lock.Release(ctx)

	h.mu.Lock()
	defer h.mu.Unlock()
	for _, k := range slices.Sorted(maps.Keys(h.n)) {
		fmt.Println(k, h.n[k])
	}
	// Output:
	// true
	// acquire busy 1
	// acquire ok 1
	// release ok 1
}
