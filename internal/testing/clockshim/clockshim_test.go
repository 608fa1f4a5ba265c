package clockshim_test

import (
	"context"
	"testing"
	"time"

	"github.com/redlease/redlease/internal/testing/clockshim"
	"github.com/redlease/redlease/internal/testing/redistest"
)

// TestStep: a server started with the Clock's Env answers TIME shifted by
// the step, at once, and expires a key by the shifted clock.
func TestStep(t *testing.T) {
	clk := clockshim.New(t)
	g := redistest.Start(t, 1, redistest.Options{Env: clk.Env()})
	rdb := g.Server(0).Client(t)
	ctx := context.Background()
	before, err := rdb.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(before); d < -time.Second || d > time.Second {
		t.Fatalf("TIME before the step is %v off the local clock", d)
	}
	if err := rdb.Set(ctx, "k", "v", 30*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := clk.Step(time.Minute); err != nil {
		t.Fatal(err)
	}
	after, err := rdb.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if d := after.Sub(before); d < time.Minute || d > time.Minute+5*time.Second {
		t.Fatalf("TIME moved by %v over a step of 1m", d)
	}
	if n, err := rdb.Exists(ctx, "k").Result(); err != nil || n != 0 {
		t.Fatalf("a key with 30s left is still there (%d, %v) after a 1m step", n, err)
	}
}
