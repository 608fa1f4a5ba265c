package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redlease/redlease/internal/testing/testnodes"
	"github.com/redlease/redlease/redlock"
)

// embedded starts n in-process Redis servers for the examples.
var embedded = testnodes.Embedded

func Example() {
	ctx := context.Background()
	nodes, stop := embedded(5)
	defer stop()

	// NodeTimeout (default 50ms) raised for in-process nodes that share
	// the CPU with a busy test run.
	c, err := redlock.New(ctx, redlock.Config{NodeTimeout: time.Second}, nodes...)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	_ = c.Bootstrap(ctx) // brand-new nodes: no lock can exist yet

	lock, err := c.Acquire(ctx, "nightly-report", 10*time.Second)
	if err != nil {
		panic(err)
	}
	fmt.Println("held:", lock.Held(), "token:", lock.Token())

	_, err = c.TryAcquire(ctx, "nightly-report", 10*time.Second)
	fmt.Println("second acquire refused:", errors.Is(err, redlock.ErrNotAcquired))

	err = lock.Release(ctx)
	fmt.Println("released:", err == nil, "held:", lock.Held())
	// Output:
	// held: true token: 1
	// second acquire refused: true
	// released: true held: false
}

// fencedStore is a resource protected by fencing tokens: it remembers the
// highest token it has seen and refuses writes that carry a lower one.
type fencedStore struct {
	mu      sync.Mutex
	highest uint64
	value   string
}

var errStale = errors.New("stale fencing token")

func (s *fencedStore) Write(token uint64, v string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if token < s.highest {
		return fmt.Errorf("%w: %d < %d", errStale, token, s.highest)
	}
	s.highest, s.value = token, v
	return nil
}

// A holder that paused past its deadline still carries its old token; the
// store refuses its late write once a newer holder has written.
func ExampleLock_Token() {
	ctx := context.Background()
	nodes, stop := embedded(3)
	defer stop()
	c, err := redlock.New(ctx, redlock.Config{NodeTimeout: time.Second}, nodes...)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	_ = c.Bootstrap(ctx)

	store := &fencedStore{}
	first, _ := c.Acquire(ctx, "ledger", 5*time.Second)
	_ = store.Write(first.Token(), "from first")
	_ = first.Release(ctx) // stands in for "first paused until its lock expired"

	second, _ := c.Acquire(ctx, "ledger", 5*time.Second)
	fmt.Println("second token is higher:", second.Token() > first.Token())
	fmt.Println("second write:", store.Write(second.Token(), "from second"))
	late := store.Write(first.Token(), "late, from first")
	fmt.Println("late first write refused:", errors.Is(late, errStale))
	fmt.Println("store holds:", store.value)
	// Output:
	// second token is higher: true
	// second write: <nil>
	// late first write refused: true
	// store holds: from second
}

// A Holder prints as its ID; a value not written by package lease (a
// plain Lock's, another tool's) as "foreign:" and the value; nobody as
// "none".
func ExampleHolder_String() {
	fmt.Println(redlock.Holder{Key: "jobs", Value: "rl1:q2sS-1bQ3v8_Xx9aZQ0kDg:id=web-1", ID: "web-1"})
	fmt.Println(redlock.Holder{Key: "jobs", Value: "Zm9vYmFyYmF6cXV4"})
	fmt.Println(redlock.Holder{Key: "jobs"})
	// Output:
	// web-1
	// foreign:Zm9vYmFyYmF6cXV4
	// none
}
