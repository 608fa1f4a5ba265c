// Command standbyhttp is an HTTP service with one leader and hot standbys.
// Every instance campaigns, publishing its URL with its ID; every instance
// serves
//
//	/leader   who leads, from an observer's watch (no request reaches Redis)
//	/healthz  the liveness probe (election.LivenessCheck)
//	/readyz   the readiness probe (election.HealthCheck: no majority of nodes, key unusable)
//	/         the service: the leader answers, a standby redirects to it
//
// By default it starts two instances in one process, on 127.0.0.1:8080 and
// 127.0.0.1:8081, until interrupted:
//
//	go run ./examples/standbyhttp
//	curl -s localhost:8081/leader; curl -si localhost:8081/
//
// -listen sets the instances' addresses (one instance each), -for stops
// after a while. It runs on 3 embedded miniredis servers unless
// REDLEASE_NODES names real ones (host:port,...; REDLEASE_BOOTSTRAP=1 for
// brand-new ones): then run one instance per process, on several hosts.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redlease/redlease/election"
	"github.com/redlease/redlease/examples/internal/nodes"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/observer"
	"github.com/redlease/redlease/redlock"
)

const name = "standbyhttp/leader"

func main() {
	listen := flag.String("listen", "127.0.0.1:8080,127.0.0.1:8081", "comma-separated addresses, one instance each")
	dur := flag.Duration("for", 0, "stop after this long (0: until interrupted)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *dur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *dur)
		defer cancel()
	}
	if err := run(ctx, os.Stdout, strings.Split(*listen, ","), nil); err != nil {
		log.Fatal(err)
	}
}

// run serves one instance per address until ctx ends. When ready is not
// nil, it receives the instances' URLs once they listen.
func run(ctx context.Context, w io.Writer, listen []string, ready chan<- []string) error {
	ns, err := nodes.Open(3)
	if err != nil {
		return err
	}
	defer ns.Close()
	logf := logger(w)
	logf("%d nodes (%s)", len(ns.Clients), ns.Where())

	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		urls []string
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for i, addr := range listen {
		inst, err := newInstance(ctx, ns, fmt.Sprintf("web-%d", i+1), strings.TrimSpace(addr), logf)
		if err != nil {
			cancel()
			wg.Wait()
			return err
		}
		urls = append(urls, inst.url)
		wg.Go(func() {
			if err := inst.serve(ctx); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				cancel() // one instance failing stops them all
			}
		})
	}
	if ready != nil {
		ready <- urls
	}
	wg.Wait()
	return errors.Join(errs...)
}

// instance is one process of the service: an HTTP server, a candidate,
// and an observer.
type instance struct {
	id, url string
	ln      net.Listener
	client  *redlock.Client
	e       *election.Elector
	o       *observer.Observer
	logf    func(string, ...any)
	seen    atomic.Pointer[observer.Event] // the observer's last event
}

func newInstance(ctx context.Context, ns *nodes.Nodes, id, addr string, logf func(string, ...any)) (*instance, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	client, err := ns.Client(ctx, redlock.Config{})
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	in := &instance{id: id, url: "http://" + ln.Addr().String(), ln: ln, client: client, logf: logf}
	in.e, err = election.New(client, name, election.Config{
		Lease: lease.Config{ID: id, Metadata: map[string]string{"url": in.url}, TTL: 3 * time.Second},
		OnElected: func(ctx context.Context, t election.Term) {
			logf("%s: leading (token %d) at %s", id, t.Token, in.url)
			<-ctx.Done() // the service's leader-only work would run here, under ctx
		},
	})
	if err == nil {
		in.o, err = observer.New(client, name, observer.Config{PollInterval: 500 * time.Millisecond})
	}
	if err != nil {
		_ = ln.Close()
		_ = client.Close()
		return nil, err
	}
	return in, nil
}

// serve runs the candidate, the observer and the HTTP server until ctx
// ends, then steps down and closes everything.
func (in *instance) serve(ctx context.Context) error {
	defer in.client.Close()
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { _ = in.e.Run(ctx) }) // hands the term over when ctx ends
	w := in.o.Watch(ctx)
	wg.Go(func() {
		for ev := range w {
			in.seen.Store(&ev)
			in.logf("%s: sees %s", in.id, ev) // "leader b (token 2)", "no leader", "unknown: ..."
		}
	})

	mux := http.NewServeMux()
	mux.HandleFunc("GET /leader", in.leader)
	mux.Handle("GET /healthz", election.LivenessCheck(in.e, time.Second))
	mux.Handle("GET /readyz", election.HealthCheck(in.e, time.Second))
	mux.HandleFunc("GET /{$}", in.root)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	in.logf("%s: serving at %s", in.id, in.url)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(in.ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	<-errc
	return err
}

// leaderView is the body of /leader.
type leaderView struct {
	State       string `json:"state"` // "leader", "no leader", "unknown"
	Leader      string `json:"leader,omitempty"`
	URL         string `json:"url,omitempty"`
	Token       uint64 `json:"token,omitempty"`
	RemainingMs int64  `json:"remaining_ms,omitempty"`
	Self        string `json:"self"`
	IsLeader    bool   `json:"is_leader"`
}

// leader serves /leader from the observer's last event: 200 when a
// majority answered (a leader, or none), 503 when unknown.
func (in *instance) leader(w http.ResponseWriter, _ *http.Request) {
	v := leaderView{State: "unknown", Self: in.id, IsLeader: in.e.IsLeader()}
	code := http.StatusServiceUnavailable
	if ev := in.seen.Load(); ev != nil && ev.Err == nil { // a majority answered
		v.State, code = "no leader", http.StatusOK
		if l := ev.Leader; l.Value != "" {
			v.State = "leader"
			v.Leader, v.URL, v.Token = l.ID, l.Metadata["url"], l.Token
			v.RemainingMs = time.Until(l.Expires).Milliseconds()
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// root is the service: the leader answers, a standby redirects to the
// leader it knows, or answers 503 when it knows none.
func (in *instance) root(w http.ResponseWriter, r *http.Request) {
	if t, ok := in.e.Term(); ok {
		fmt.Fprintf(w, "%s leads (token %d)\n", in.id, t.Token)
		return
	}
	if ev := in.seen.Load(); ev != nil && ev.Leader.Metadata["url"] != "" {
		http.Redirect(w, r, ev.Leader.Metadata["url"]+r.URL.RequestURI(), http.StatusTemporaryRedirect)
		return
	}
	http.Error(w, "no leader known; retry", http.StatusServiceUnavailable)
}

// logger prints lines with the time since the start, from any goroutine.
func logger(w io.Writer) func(string, ...any) {
	var mu sync.Mutex
	start := time.Now()
	return func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "[%5.2fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}
}
