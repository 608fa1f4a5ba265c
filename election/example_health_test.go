package election_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/redlease/redlease/election"
	"github.com/redlease/redlease/internal/testnodes"
	"github.com/redlease/redlease/redlock"
)

// embedded starts n in-process Redis servers for the examples.
var embedded = testnodes.Embedded

// Readiness and liveness probes of an elector: ok while it campaigns or
// leads, 503 with the reason once Run has returned (or, for readiness,
// while no majority of nodes answers, or the key is unusable).
func ExampleHealthCheck() {
	ctx := context.Background()
	nodes, stopNodes := embedded(3)
	defer stopNodes()
	client, _ := redlock.New(ctx, redlock.Config{}, nodes...)
	defer client.Close()
	_ = client.Bootstrap(ctx) // brand-new nodes: no quarantine to wait for
	e, _ := election.New(client, "reports/leader", election.Config{ID: "worker-1"})

	mux := http.NewServeMux()
	mux.Handle("/readyz", election.HealthCheck(e, time.Second))  // Redis down, key unusable, Run over
	mux.Handle("/livez", election.LivenessCheck(e, time.Second)) // stalled leader, Run over
	probe := func(path string) {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		fmt.Println(path, w.Code, strings.TrimSpace(w.Body.String()))
	}

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- e.Run(runCtx) }()
	for ev := range e.Events() {
		if ev.Kind == redlock.EventElected {
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
