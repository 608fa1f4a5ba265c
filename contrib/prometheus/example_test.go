package redleaseprom_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	redleaseprom "github.com/redlease/redlease/contrib/prometheus"
	"github.com/redlease/redlease/internal/testing/testnodes"
	"github.com/redlease/redlease/redlock"
)

// embedded starts n in-process Redis servers for the examples.
var embedded = testnodes.Embedded

// Prometheus metrics of a client and of everything built on it, served
// on /metrics.
func ExampleNew() {
	ctx := context.Background()
	nodes, stop := embedded(3)
	defer stop()

	reg := prometheus.NewRegistry() // or prometheus.DefaultRegisterer
	hooks, err := redleaseprom.New(reg)
	if err != nil {
		fmt.Println(err)
		return
	}
	client, err := redlock.New(ctx, redlock.Config{Hooks: hooks.Observe}, nodes...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	_ = client.Bootstrap(ctx) // brand-new nodes: no quarantine to wait for
	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))

	lock, _ := client.Acquire(ctx, "reports", 10*time.Second)
	_ = lock.Release(ctx)

	w := httptest.NewRecorder()
	http.DefaultServeMux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, line := range strings.Split(w.Body.String(), "\n") {
		if strings.HasPrefix(line, "redlease_events_total") {
			fmt.Println(line)
		}
	}
	// Output:
	// redlease_events_total{op="acquire",outcome="ok"} 1
	// redlease_events_total{op="release",outcome="ok"} 1
}
