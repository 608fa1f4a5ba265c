package readme_test

// The docs' snippets, as Example functions run on real redis-servers:
// serve, watchLeader, leaseJob and nightlyReports are quoted in the
// README, slogClient and Example_health in docs/observability.md, as they
// are here (readme_test.go checks it). Each Example makes its client from
// the test servers' addresses; the helpers below the snippets stand for
// the user's code.

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/redlease/redlease/election"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/observer"
	"github.com/redlease/redlease/redlock"
)

// serve is a complete leader-elected service.
func serve(ctx context.Context, addrs []string, mux *http.ServeMux) error {
	client, err := redlock.Dial(ctx, redlock.Config{}, addrs, redlock.DialOptions{}) // Password, TLS, DialTimeout
	if err != nil {
		return err // errors.Is(err, redlock.ErrAccessDenied): wrong password or ACL
	}
	defer client.Close()
	e, err := election.New(client, "reports/leader", election.Config{
		Lease: lease.Config{ID: "worker-1"},
		OnElected: func(ctx context.Context, t election.Term) {
			// Lead until ctx ends: it is cancelled before the term's validity
			// ends, and no new leader starts before this returns.
			runReports(ctx, t.Token) // the store refuses tokens below the highest it saw
		},
		OnDemoted: func(t election.Term, cause error) { fmt.Println("term ended:", cause) },
	})
	if err != nil {
		return err
	}
	if err := e.Healthy(time.Second); err != nil { // new nodes vote only MaxTTL (30s) after first contact
		fmt.Println("not ready:", err) // "... waiting: 3 of 3 nodes quarantined, 30s left (0 votes, 2 needed)"
	}
	mux.Handle("/readyz", election.HealthCheck(e, time.Second))  // 503 while no majority can vote (quarantined, silent), the key is unusable, or Run is over
	mux.Handle("/livez", election.LivenessCheck(e, time.Second)) // 503 when stalled past the term's deadline, or Run is over
	return e.Run(ctx)                                            // campaigns until ctx ends; e.Resign(ctx) hands over at once, e.Resign(ctx, "worker-2") to worker-2
}

func Example_service() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, addrs, http.NewServeMux()) }()
	fmt.Println("leading with a fencing token:", <-reports > 0)
	cancel() // the service shuts down: the leader hands its term over
	fmt.Println("serve:", <-done)
	// Output:
	// leading with a fencing token: true
	// term ended: election: stopped: context canceled
	// serve: election: stopped: context canceled
}

// reports carries the token of each term that runReports served.
var reports = make(chan uint64, 1)

// runReports stands for a leader's work: it runs until its term ends.
func runReports(ctx context.Context, token uint64) {
	reports <- token
	<-ctx.Done()
}

// watchLeader is a standby that never campaigns: it prints every change
// of leader until ctx ends.
func watchLeader(ctx context.Context, client *redlock.Client) error {
	o, err := observer.New(client, "reports/leader", observer.Config{})
	if err != nil {
		return err
	}
	for ev := range o.Watch(ctx) {
		fmt.Println(ev) // a new leader, no leader, or unknown (no majority answered for Config.UnknownGrace, 1s)
	}
	return ctx.Err() // the channel closes when ctx ends
}

func Example_observer() {
	client := dial()
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	fmt.Println("watch:", watchLeader(ctx, client))
	// Output:
	// no leader
	// watch: context deadline exceeded
}

// leaseJob holds a key without an election.
func leaseJob(ctx context.Context, client *redlock.Client) error {
	l, err := lease.Acquire(ctx, client, "jobs/42", lease.Config{TTL: 10 * time.Second, ID: "worker-1"})
	if err != nil {
		return err
	}
	defer l.Release(ctx)
	lctx := l.Context() // cancelled when the lease ends, with the reason as its cause
	select {
	case <-lctx.Done(): // lost, before its validity ended
		return context.Cause(lctx) // matches lease.ErrLeaseLost, with the reason
	case <-work(lctx, l.Token()):
		return nil
	}
}

func Example_lease() {
	client := dial()
	defer client.Close()
	fmt.Println("job:", leaseJob(context.Background(), client))
	// Output:
	// working with a fencing token: true
	// job: <nil>
}

// crawl takes one of 4 permits of a semaphore: at most 4 crawlers at once.
func crawl(ctx context.Context, client *redlock.Client) error {
	l, err := lease.Acquire(ctx, client, "crawlers", lease.Config{ID: "worker-1", Permits: 4}) // waits for a free permit
	if err != nil {
		return err
	}
	defer l.Release(ctx)
	h := l.Holder() // h.Permit: which of the 4 (h.Key is its key); h.Token orders that permit's holders
	return crawlShard(l.Context(), h.Permit, h.Token)
}

func Example_semaphore() {
	client := dial()
	defer client.Close()
	fmt.Println("crawl:", crawl(context.Background(), client))
	// Output:
	// crawling one of 4 shards: true
	// crawl: <nil>
}

// crawlShard stands for work done under one permit.
func crawlShard(ctx context.Context, permit int, token uint64) error {
	fmt.Println("crawling one of 4 shards:", permit >= 0 && permit < 4 && token > 0 && ctx.Err() == nil)
	return nil
}

// work stands for a job done under a lease: the channel closes when it is
// done.
func work(ctx context.Context, token uint64) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fmt.Println("working with a fencing token:", token > 0 && ctx.Err() == nil)
	}()
	return done
}

// nightlyReports uses the algorithm itself: one lock, extended by hand.
func nightlyReports(ctx context.Context, client *redlock.Client) error {
	lock, err := client.Acquire(ctx, "reports", 3*time.Second) // retries, backing off, until ctx ends
	if err != nil {
		return err // errors.Is(err, redlock.ErrNotAcquired); a *redlock.QuorumError has every node's answer
	}
	defer lock.Release(ctx)
	for lock.Held() { // re-checks the local deadline on every call
		if finished := writeReport(lock.Token()); finished {
			return nil
		}
		select { // wait a third of the validity left, then extend: long before the lock lapses
		case <-time.After(time.Until(lock.ValidUntil()) / 3):
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := lock.Extend(ctx, 0); err != nil {
			return err // lost, or not extended in time: stop writing
		}
	}
	return redlock.ErrNotHeld
}

func Example_lock() {
	client := dial()
	defer client.Close()
	written = 0
	fmt.Println("reports:", nightlyReports(context.Background(), client), written)
	// Output: reports: <nil> 2
}

// slogClient connects with a *slog.Logger as the client's logger (the
// Configs of lease, election and observer take it the same way).
func slogClient(ctx context.Context, addrs []string) (*redlock.Client, error) {
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
	return redlock.Dial(ctx, redlock.Config{Logger: redlock.SlogLogger(logger)}, addrs, redlock.DialOptions{})
}

// Fresh servers, never bootstrapped, are quarantined: the client says so in
// one record that names them all.
func Example_slog() {
	g, stop, err := redistest.StartMain(3)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()
	client, err := slogClient(context.Background(), g.Addrs())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	// Output:
	// level=WARN msg="nodes are quarantined: they have no marker, or restarted, and may have forgotten locks; they vote after the quarantine"
}

func Example_health() {
	client := dial()
	defer client.Close()
	e, _ := election.New(client, "reports/leader", election.Config{Lease: lease.Config{ID: "worker-1"}})

	mux := http.NewServeMux()
	mux.Handle("/readyz", election.HealthCheck(e, time.Second))  // Redis down, key unusable, Run over
	mux.Handle("/livez", election.LivenessCheck(e, time.Second)) // stalled leader, Run over
	probe := func(path string) {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		fmt.Println(path, w.Code, strings.TrimSpace(w.Body.String()))
	}

	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	for ev := range e.Events() {
		if ev.Kind == election.EventElected {
			break
		}
	}
	probe("/readyz")
	probe("/livez")
	stop()
	<-done
	probe("/readyz")
	probe("/livez")
	// Output:
	// /readyz 200 ok
	// /livez 200 ok
	// /readyz 503 election: unhealthy: "reports/leader": Run returned: election: stopped: context canceled
	// /livez 503 election: unhealthy: "reports/leader": Run returned: election: stopped: context canceled
}

// written counts writeReport's calls.
var written int

// writeReport stands for a write fenced by token; it reports whether the
// work is finished (after two reports).
func writeReport(token uint64) (finished bool) {
	if token > 0 {
		written++
	}
	return written == 2
}

// dial makes a Client over the test servers.
func dial() *redlock.Client {
	c, err := redlock.Dial(context.Background(), redlock.Config{}, addrs, redlock.DialOptions{})
	if err != nil {
		panic(err)
	}
	return c
}
