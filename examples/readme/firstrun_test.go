package readme_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/redistest"
)

// The README's serve, run as it is on servers new to redlease that nobody
// bootstrapped, with no logger: it says at once why nobody leads yet and
// for how long (its nodes vote only MaxTTL after first contact), and
// /readyz says the same.
func TestServeSaysWhyOnFreshNodes(t *testing.T) {
	g := redistest.Start(t, 3)
	out := captureStdout(t)
	ctx, cancel := context.WithCancel(context.Background())
	mux := http.NewServeMux()
	done := make(chan error, 1)
	go func() { done <- serve(ctx, g.Addrs(), mux) }()
	defer func() { cancel(); <-done }()

	require.Eventually(t, func() bool { return strings.Contains(out(), "not ready:") }, 10*time.Second, time.Millisecond,
		"serve printed nothing about the wait")
	assert.Regexp(t, `^not ready: election: unhealthy: "reports/leader": waiting: 3 of 3 nodes quarantined, (30|29)s left \(0 votes, 2 needed\)\n$`, out())
	// serve prints before it registers its handlers: wait for /readyz.
	var w *httptest.ResponseRecorder
	require.Eventually(t, func() bool {
		w = httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		return w.Code != http.StatusNotFound
	}, 10*time.Second, time.Millisecond, "serve registered no /readyz")
	assert.Equal(t, http.StatusServiceUnavailable, w.Code)
	assert.Contains(t, w.Body.String(), "waiting: 3 of 3 nodes quarantined, ")
}

// captureStdout sends os.Stdout to a pipe until the test ends, and returns
// what was written to it so far.
func captureStdout(t *testing.T) func() string {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	saved := os.Stdout
	os.Stdout = w
	var (
		mu  sync.Mutex
		buf strings.Builder
		wg  sync.WaitGroup
	)
	wg.Go(func() {
		p := make([]byte, 4096)
		for {
			n, err := r.Read(p)
			mu.Lock()
			buf.Write(p[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	})
	t.Cleanup(func() {
		os.Stdout = saved
		_ = w.Close()
		wg.Wait()
		_ = r.Close()
		t.Logf("stdout: %q", buf.String())
	})
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return buf.String()
	}
}
