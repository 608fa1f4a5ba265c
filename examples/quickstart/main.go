// Command quickstart shows a leader election at work: three candidates
// (alice, bob, carol) campaign on 5 nodes while an observer prints every
// change of leader. The first leader crashes (it stops refreshing its term
// without releasing it): the others take over once its key lapses, within
// the TTL. The next leader resigns: the last one takes over at once. Every
// term carries a fencing token above the last one's, and a store that
// checks tokens refuses the crashed leader when it wakes up late.
//
//	go run ./examples/quickstart
//
// It runs on 5 embedded miniredis servers unless REDLEASE_NODES names real
// ones (host:port,...). Real nodes seen for the first time are quarantined
// for MaxTTL (30s) unless REDLEASE_BOOTSTRAP=1 declares them brand new.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"sync"
	"time"

	"github.com/redlease/redlease/election"
	"github.com/redlease/redlease/examples/internal/nodes"
	"github.com/redlease/redlease/observer"
	"github.com/redlease/redlease/redlock"
)

const (
	name = "quickstart/leader"
	ttl  = 2 * time.Second // a crashed leader is replaced within it
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, w io.Writer) error {
	ns, err := nodes.Open(5)
	if err != nil {
		return err
	}
	defer ns.Close()
	out := &printer{w: w, start: time.Now()}
	out.say("%d nodes (%s); 3 candidates campaign for %q with a %s TTL", len(ns.Clients), ns.Where(), name, ttl)

	d := &demo{out: out, store: &store{}, elected: make(chan elected, 8)}
	stopWatch, err := d.watch(ctx, ns)
	if err != nil {
		return err
	}
	defer stopWatch()
	for _, id := range []string{"alice", "bob", "carol"} {
		if err := d.start(ctx, ns, id); err != nil {
			return err
		}
	}
	defer d.stopAll()
	return d.script(ctx)
}

// demo is the state of the show: the candidates, the store they write, and
// the terms as they begin.
type demo struct {
	out     *printer
	store   *store
	elected chan elected // from OnElected; buffered, one per term
	cands   map[string]*candidate
	wg      sync.WaitGroup
}

// elected is a term as OnElected saw it begin.
type elected struct {
	id    string
	token uint64
	at    time.Time
}

// candidate is one process of the service: its own redlock.Client (as
// each process has its own connections) and its Elector.
type candidate struct {
	client *redlock.Client
	e      *election.Elector
	cancel context.CancelFunc
	runErr error // Run's result, once it returned
}

// start makes and runs the candidate id.
func (d *demo) start(ctx context.Context, ns *nodes.Nodes, id string) error {
	client, err := ns.Client(ctx, redlock.Config{})
	if err != nil {
		return err
	}
	e, err := election.New(client, name, election.Config{ID: id, TTL: ttl, RetryDelay: 50 * time.Millisecond,
		Callbacks: election.Callbacks{
			OnElected: func(ctx context.Context, t election.Term) { d.lead(ctx, t) },
			OnDemoted: func(t election.Term, cause error) {
				d.out.say("%s: term %d over: %v", t.ID, t.Token, short(cause))
			},
		}})
	if err != nil {
		_ = client.Close()
		return err
	}
	runCtx, cancel := context.WithCancel(ctx)
	c := &candidate{client: client, e: e, cancel: cancel}
	if d.cands == nil {
		d.cands = map[string]*candidate{}
	}
	d.cands[id] = c
	d.wg.Go(func() { c.runErr = e.Run(runCtx) })
	return nil
}

// lead is the leader's work: a report every 300ms, written with the term's
// fencing token, until the term's context ends.
func (d *demo) lead(ctx context.Context, t election.Term) {
	d.out.say("%s: elected, fencing token %d", t.ID, t.Token)
	d.elected <- elected{id: t.ID, token: t.Token, at: time.Now()}
	tick := time.NewTicker(300 * time.Millisecond)
	defer tick.Stop()
	for n := 1; ; n++ {
		if err := d.store.write(t.Token); err != nil {
			d.out.say("%s: report %d refused: %v", t.ID, n, err)
		}
		select {
		case <-ctx.Done():
			return // the term ended: stop before its validity does
		case <-tick.C:
		}
	}
}

// script is the show: wait for a leader, crash it, wait for the next,
// have it resign, wait for the last.
func (d *demo) script(ctx context.Context) error {
	first, err := d.next(ctx)
	if err != nil {
		return err
	}
	if err := pause(ctx, time.Second); err != nil { // let it lead a while
		return err
	}
	d.out.say("%s crashes: it can neither refresh nor release its term; the others wait for its key to lapse (TTL %s)", first.id, ttl)
	crashed := time.Now()
	_ = d.cands[first.id].client.Close() // every call of its client fails from now on

	second, err := d.next(ctx)
	if err != nil {
		return err
	}
	d.out.say("%s took over %s after the crash", second.id, time.Since(crashed).Round(10*time.Millisecond))
	// A leader that froze (a GC pause, a stopped VM) wakes up after it was
	// replaced and writes with its old token: the store refuses it.
	if err := d.store.write(first.token); err != nil {
		d.out.say("%s, waking up late, writes with token %d: refused: %v", first.id, first.token, err)
	} else {
		return errors.New("the store accepted a stale token")
	}

	if err := pause(ctx, time.Second); err != nil {
		return err
	}
	d.out.say("%s resigns: it stops its work, releases its term, and a standby takes over at once", second.id)
	resigned := time.Now()
	if err := d.cands[second.id].e.Resign(ctx); err != nil {
		return err
	}
	third, err := d.next(ctx)
	if err != nil {
		return err
	}
	d.out.say("%s took over %s after the resignation", third.id, time.Since(resigned).Round(time.Millisecond))
	if err := pause(ctx, 500*time.Millisecond); err != nil {
		return err
	}
	d.out.say("fencing tokens: %s %d, %s %d, %s %d: each term's above the last; the store saw up to %d",
		first.id, first.token, second.id, second.token, third.id, third.token, d.store.highest())
	return nil
}

// next waits for the next term to begin.
func (d *demo) next(ctx context.Context) (elected, error) {
	select {
	case e := <-d.elected:
		return e, nil
	case <-ctx.Done():
		return elected{}, fmt.Errorf("waiting for a leader: %w", ctx.Err())
	}
}

// stopAll stops every candidate (the leader hands its term over on its
// way out) and closes their clients.
func (d *demo) stopAll() {
	for _, c := range d.cands {
		c.cancel()
	}
	d.wg.Wait()
	for id, c := range d.cands {
		if errors.Is(c.runErr, redlock.ErrClosed) {
			d.out.say("%s: Run returned: its client was closed (the crash)", id)
		}
		_ = c.client.Close()
	}
}

// watch starts an observer that prints every change of leader; the
// returned function stops it.
func (d *demo) watch(ctx context.Context, ns *nodes.Nodes) (func(), error) {
	client, err := ns.Client(ctx, redlock.Config{})
	if err != nil {
		return nil, err
	}
	o, err := observer.New(client, name, observer.Config{PollInterval: 100 * time.Millisecond})
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	w := o.Watch(wctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.C() {
			switch ev.State {
			case observer.StateLeader:
				d.out.say("observer: leader %s (token %d)", ev.Leader.ID, ev.Leader.Token)
			default:
				d.out.say("observer: %s", ev.State)
			}
		}
	}()
	return func() {
		cancel()
		<-done
		_ = client.Close()
	}, nil
}

// store is a resource that checks fencing tokens: it refuses a write with
// a token below the highest it has seen.
type store struct {
	mu  sync.Mutex
	max uint64
}

func (s *store) write(token uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if token < s.max {
		return fmt.Errorf("token %d is below %d", token, s.max)
	}
	s.max = token
	return nil
}

func (s *store) highest() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.max
}

// printer prints lines with the time since the start, from any goroutine.
type printer struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
}

func (p *printer) say(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "[%5.2fs] %s\n", time.Since(p.start).Seconds(), fmt.Sprintf(format, args...))
}

// short names why a term ended.
func short(cause error) string {
	switch {
	case errors.Is(cause, election.ErrResigned):
		return "resigned"
	case errors.Is(cause, election.ErrStopped):
		return "stopped"
	case errors.Is(cause, redlock.ErrClosed):
		return "its client was closed (crashed)"
	default:
		return cause.Error()
	}
}

// pause waits d, for the show, unless ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
