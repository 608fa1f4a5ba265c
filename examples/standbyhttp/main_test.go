package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/redlease/redlease/internal/testing/testnodes"
)

// Two instances on free ports: the standby serves /leader from its
// observer and redirects / to the leader; both are healthy; the service
// stops when its context ends.
func TestStandbyHTTP(t *testing.T) {
	defer goleak.VerifyNone(t)
	t.Setenv("REDLEASE_NODES", "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ready := make(chan []string, 1)
	var out testnodes.LogBuffer
	defer func() {
		if t.Failed() {
			t.Log(out.String())
		}
	}()
	done := make(chan error, 1)
	go func() { done <- run(ctx, &out, []string{"127.0.0.1:0", "127.0.0.1:0"}, ready) }()
	var urls []string
	select {
	case urls = <-ready:
	case err := <-done:
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	defer client.CloseIdleConnections()

	views := sameLeader(t, client, urls)
	leaderURL := views[0].URL
	require.Contains(t, urls, leaderURL)
	standby := urls[0]
	if standby == leaderURL {
		standby = urls[1]
	}
	for i, v := range views {
		assert.Equal(t, v.URL == urls[i], v.IsLeader, "instance %d knows whether it leads", i)
	}

	code, body := get(t, client, leaderURL+"/")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "leads (token ")
	resp, err := client.Get(standby + "/")
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusTemporaryRedirect, resp.StatusCode)
	assert.Equal(t, leaderURL+"/", resp.Header.Get("Location"))
	for _, u := range urls {
		for _, probe := range []string{"/healthz", "/readyz"} {
			code, body := get(t, client, u+probe)
			assert.Equal(t, http.StatusOK, code, probe)
			assert.Equal(t, "ok\n", body, probe)
		}
	}

	cancel()
	require.NoError(t, <-done)
	t.Log(out.String())
}

// sameLeader waits until both instances see the same leader on /leader
// (once their observers have read the election) and returns their views.
func sameLeader(t *testing.T, client *http.Client, urls []string) [2]leaderView {
	var views [2]leaderView
	var last string
	defer func() {
		if t.Failed() {
			t.Log("last /leader:", last)
		}
	}()
	require.Eventually(t, func() bool {
		for i, u := range urls {
			code, body := get(t, client, u+"/leader")
			if code != http.StatusOK || json.Unmarshal([]byte(body), &views[i]) != nil || views[i].State != "leader" {
				last = body
				return false
			}
		}
		// Leader and URL, not the token: an observer that read the very
		// first term while its token was being written shows token 0 for it.
		return views[0].Leader == views[1].Leader && views[0].URL == views[1].URL
	}, 10*time.Second, 10*time.Millisecond, "both instances see a leader")
	return views
}

func get(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}
