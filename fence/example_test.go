package fence_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/election"
	"github.com/redlease/redlease/fence"
	"github.com/redlease/redlease/redlock"
)

// A leader writes a Redis key through the guard; a paused leader's
// older token is refused afterwards.
func ExampleRedis() {
	rc, stopNode := embeddedNode()
	defer stopNode()
	ctx := context.Background()

	g := fence.NewRedis(rc)
	fmt.Println(g.Set(ctx, "config", 12, "written in term 12", 0))
	fmt.Println(g.Set(ctx, "config", 11, "written by a paused leader of term 11", 0))
	fmt.Println(rc.Get(ctx, "config").Val())
	// Output:
	// <nil>
	// fence: stale token 11 for resource "config": it has accepted token 12
	// written in term 12
}

// A server that owns its state puts fence.Middleware in front of its
// handler; clients send their token with fence.Transport.
func ExampleMiddleware() {
	var state string
	srv := httptest.NewServer(fence.Middleware(&fence.Local{}, http.HandlerFunc(
		func(_ http.ResponseWriter, r *http.Request) {
			state = r.Header.Get(fence.HeaderToken) // the write, under the resource's lock
		})))
	defer srv.Close()

	post := func(token uint64) {
		c := &http.Client{Transport: &fence.Transport{Resource: "jobs"}}
		req, _ := http.NewRequestWithContext(fence.WithToken(context.Background(), token), http.MethodPost, srv.URL, nil)
		resp, err := c.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer resp.Body.Close()
		fmt.Println(resp.StatusCode, fence.ResponseError(resp))
	}
	post(7)
	post(6)
	fmt.Println("state written by token", state)
	// Output:
	// 200 <nil>
	// 409 fence: stale token 6 for resource "jobs": it has accepted token 7
	// state written by token 7
}

// The elected leader's context carries its term's token: the guards get
// it with fence.TokenFrom, nothing is copied by hand.
func ExampleTokenFrom() {
	rc, stopNode := embeddedNode()
	defer stopNode()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	client, err := redlock.New(ctx, redlock.Config{}, rc)
	if err != nil {
		panic(err)
	}
	defer client.Close()
	if err := client.Bootstrap(ctx); err != nil { // a brand-new node
		panic(err)
	}
	g := fence.NewRedis(rc)
	e, err := election.New(client, "example/leader", election.Config{OnElected: func(ctx context.Context, t election.Term) {
		token, ok := fence.TokenFrom(ctx)
		fmt.Println("context carries the term's token:", ok && token == t.Token)
		fmt.Println("write:", g.Set(ctx, "report", token, "done", 0))
		stop()
	}})
	if err != nil {
		panic(err)
	}
	if err := e.Run(ctx); ctx.Err() == nil {
		fmt.Println(err)
	}
	// Output:
	// context carries the term's token: true
	// write: <nil>
}

// embeddedNode is an embedded Redis (miniredis) and a client of it.
func embeddedNode() (*redis.Client, func()) {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		panic(err)
	}
	rc := redis.NewClient(&redis.Options{Addr: m.Addr()})
	return rc, func() { _ = rc.Close(); m.Close() }
}
