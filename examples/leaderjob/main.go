// Command leaderjob runs a periodic job that only the leader runs: two
// workers campaign, the leader runs the job on a ticker under its term's
// context, and when its term ends (here: its process stops in the middle
// of a run) the run is cut short before the term's validity ends, and the
// other worker carries on with the schedule. A ledger that checks fencing
// tokens records every run, and would report two runs at once.
//
//	go run ./examples/leaderjob [-every 300ms] [-runs 6]
//
// It runs on 3 embedded miniredis servers unless REDLEASE_NODES names real
// ones (host:port,...; REDLEASE_BOOTSTRAP=1 for brand-new ones).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"sync"
	"time"

	"github.com/redlease/redlease/election"
	"github.com/redlease/redlease/examples/internal/nodes"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

const name = "leaderjob/leader"

func main() {
	every := flag.Duration("every", 300*time.Millisecond, "how often the leader runs the job")
	runs := flag.Int("runs", 6, "runs to complete before exiting")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, *every, *runs); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, w io.Writer, every time.Duration, runs int) error {
	if every <= 0 || runs < 2 {
		return fmt.Errorf("want -every > 0 and -runs >= 2, got %s and %d", every, runs)
	}
	ns, err := nodes.Open(3)
	if err != nil {
		return err
	}
	defer ns.Close()
	l := &ledger{w: w, start: time.Now(), started: make(chan string, runs*2), done: make(chan struct{}, runs*2)}
	l.printf("%d nodes (%s); the job runs every %s, on the leader only", len(ns.Clients), ns.Where(), every)

	var workers []*worker
	defer func() {
		for _, wk := range workers {
			wk.stop()
		}
	}()
	for _, id := range []string{"worker-1", "worker-2"} {
		wk, err := startWorker(ctx, ns, id, every, l)
		if err != nil {
			return err
		}
		workers = append(workers, wk)
	}

	// Stop the first leader's process in the middle of its run half way
	// through the schedule; the other worker then takes over.
	first := ""
	for n := 0; n < runs/2; n++ {
		if first, err = l.waitStarted(ctx); err != nil {
			return err
		}
	}
	for _, wk := range workers {
		if wk.id == first {
			l.printf("%s: its process stops, in the middle of a run", first)
			wk.stop()
		}
	}
	for l.completed() < runs {
		if err := l.waitDone(ctx); err != nil {
			return err
		}
	}
	if err := l.err(); err != nil {
		return err
	}
	l.printf("%d runs, never two at once; tokens %v", l.completed(), l.tokens())
	return nil
}

// worker is one process of the service.
type worker struct {
	id     string
	client *redlock.Client
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

func startWorker(ctx context.Context, ns *nodes.Nodes, id string, every time.Duration, l *ledger) (*worker, error) {
	client, err := ns.Client(ctx, redlock.Config{})
	if err != nil {
		return nil, err
	}
	e, err := election.New(client, name, election.Config{Lease: lease.Config{ID: id, TTL: 2 * time.Second, RetryDelay: 50 * time.Millisecond},
		OnElected: func(ctx context.Context, t election.Term) { lead(ctx, t, every, l) }})
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	wk := &worker{id: id, client: client, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(wk.done)
		_ = e.Run(runCtx) // returns once the term, if any, was handed over
	}()
	return wk, nil
}

// stop stops the worker: its term, if it leads, ends and is handed over.
func (wk *worker) stop() {
	wk.once.Do(func() {
		wk.cancel()
		<-wk.done
		_ = wk.client.Close()
	})
}

// lead is the leader's loop: the job every `every`, under the term's
// context. When the term ends, ctx is cancelled (before the term's
// validity ends): a run in progress stops, and lead returns, after which
// the term is released and another worker may lead.
func lead(ctx context.Context, t election.Term, every time.Duration, l *ledger) {
	l.printf("%s: elected (token %d); running the job every %s", t.ID, t.Token, every)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			l.printf("%s: term over (%v): no more runs", t.ID, context.Cause(ctx))
			return
		case <-tick.C:
		}
		if err := l.job(ctx, t, every*2/3); err != nil {
			l.printf("%s: run stopped: %v", t.ID, err)
		}
	}
}

// ledger is what the job writes to: it refuses tokens lower than the
// highest it has seen (fencing), records the runs, and catches two runs
// at once.
type ledger struct {
	w       io.Writer
	start   time.Time
	started chan string   // the ID of the worker, per run started
	done    chan struct{} // per run completed

	mu      sync.Mutex
	running int
	maxTok  uint64
	runs    []uint64 // the token of each completed run
	overlap error
}

// job is one run: some work that takes d, cut short when ctx ends.
func (l *ledger) job(ctx context.Context, t election.Term, d time.Duration) error {
	if err := l.begin(t.Token); err != nil {
		return err
	}
	notify(l.started, t.ID)
	n := l.completed() + 1
	l.printf("%s: run %d started (token %d)", t.ID, n, t.Token)
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		l.end(t.Token, true)
		l.printf("%s: run %d done", t.ID, n)
		notify(l.done, struct{}{})
		return nil
	case <-ctx.Done():
		l.end(t.Token, false)
		return fmt.Errorf("run %d interrupted: the term ended", n)
	}
}

func (l *ledger) begin(token uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if token < l.maxTok {
		return fmt.Errorf("refused: token %d is below %d", token, l.maxTok)
	}
	l.maxTok = token
	if l.running++; l.running > 1 && l.overlap == nil {
		l.overlap = errors.New("two runs at once")
	}
	return nil
}

func (l *ledger) end(token uint64, completed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.running--
	if completed {
		l.runs = append(l.runs, token)
	}
}

func (l *ledger) completed() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.runs)
}

func (l *ledger) tokens() []uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]uint64(nil), l.runs...)
}

func (l *ledger) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.overlap
}

func (l *ledger) waitStarted(ctx context.Context) (string, error) {
	select {
	case id := <-l.started:
		return id, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (l *ledger) waitDone(ctx context.Context) error {
	select {
	case <-l.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// notify sends v without waiting: the runs never wait for the watcher.
func notify[T any](ch chan<- T, v T) {
	select {
	case ch <- v:
	default:
	}
}

// printf prints a line with the time since the start, from any goroutine.
func (l *ledger) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "[%5.2fs] %s\n", time.Since(l.start).Seconds(), fmt.Sprintf(format, args...))
}
