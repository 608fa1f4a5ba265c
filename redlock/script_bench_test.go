package redlock_test

// Server time of each script, from INFO commandstats on one real server:
//
//	go test -run '^$' -bench ScriptServerTime ./redlock/
//
// Each case runs one script through a redlock Client on one node, so that
// every EVALSHA the server counts in the measured stretch is that script;
// srv-us/call is the server's usec per call. The budget (the hot-path
// issue): acquire <= 10us, extend and release <= 4us. extend-all-256 is one
// ExtendAll of 256 locks (one extend_many call); srv-us/lock divides its
// time by the locks.

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/redistest"
	"github.com/redlease/redlease/redlock"
)

func BenchmarkScriptServerTime(b *testing.B) {
	s := redistest.Start(b, 1).Server(0)
	admin := s.Client(b)
	node := redis.NewClient(&redis.Options{Addr: s.Addr(), ContextTimeoutEnabled: true})
	b.Cleanup(func() { _ = node.Close() })
	// A long NodeTimeout: a loaded machine must not fail the calls, whose
	// server time is what is measured.
	c := newBenchRedlock(b, redlock.Config{NodeTimeout: time.Second}, []redis.UniversalClient{node})
	ctx := context.Background()
	const ttl = redlock.DefaultMaxTTL // the stock of locks for release lasts
	var held *redlock.Lock            // "held", taken again by each case that needs it
	hold := func(b *testing.B) {
		if held != nil {
			_, _ = held.Release(ctx)
		}
		var err error
		if held, err = c.TryAcquire(ctx, "held", redlock.DefaultMaxTTL); err != nil {
			b.Fatal(err)
		}
	}
	seq := 0
	acquire := func() *redlock.Lock {
		seq++
		l, err := c.TryAcquire(ctx, "k"+strconv.Itoa(seq), ttl)
		if err != nil {
			b.Fatal(err)
		}
		return l
	}
	var stock []*redlock.Lock // locks for release to release
	var batch []*redlock.Lock // 256 locks for extend-all-256, held for the run
	cases := []struct {
		name string
		op   func(b *testing.B)
	}{
		// A grant of a key never locked before: the marker and the
		// server's identity, the counter from the node's high-water mark,
		// SET of key and counter.
		{"acquire-grant", func(*testing.B) { stock = append(stock, acquire()) }},
		// A key held by another holder: the vote is no.
		{"acquire-held", func(b *testing.B) {
			if _, err := c.TryAcquire(ctx, "held", ttl); err == nil {
				b.Fatal("acquired a held key")
			}
		}},
		{"extend", func(b *testing.B) {
			if err := held.Extend(ctx, 0); err != nil {
				b.Fatal(err)
			}
		}},
		// One extend_many call of 256 locks (one TTL, the counters' TTL
		// not due): srv-us/lock is the server time per lock refreshed.
		{"extend-all-256", func(b *testing.B) {
			for i, err := range c.ExtendAll(ctx, batch) {
				if err != nil {
					b.Fatal(i, err)
				}
			}
		}},
		{"release", func(b *testing.B) {
			if len(stock) == 0 {
				b.Fatal("no lock left to release")
			}
			l := stock[len(stock)-1]
			stock = stock[:len(stock)-1]
			if _, err := l.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			hold(b) // a case runs for a few seconds: far within MaxTTL
			if tc.name == "extend-all-256" {
				for _, l := range batch {
					_, _ = l.Release(ctx)
				}
				batch = batch[:0]
				for range 256 {
					batch = append(batch, acquire())
				}
			}
			var calls, usec int64
			for b.Loop() {
				if tc.name == "release" && len(stock) == 0 {
					b.StopTimer()
					for range 1000 {
						stock = append(stock, acquire())
					}
					b.StartTimer()
				}
				c0, u0 := evalshaStats(b, admin)
				tc.op(b)
				c1, u1 := evalshaStats(b, admin)
				calls, usec = calls+c1-c0, usec+u1-u0
			}
			b.ReportMetric(float64(usec)/float64(calls), "srv-us/call")
			if tc.name == "extend-all-256" {
				b.ReportMetric(float64(usec)/float64(calls)/float64(len(batch)), "srv-us/lock")
			}
		})
	}
}

// evalshaStats reads EVALSHA's calls and usec from INFO commandstats.
func evalshaStats(b *testing.B, admin *redis.Client) (calls, usec int64) {
	info, err := admin.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.SplitSeq(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_evalsha:")
		if !ok {
			continue
		}
		for field := range strings.SplitSeq(rest, ",") {
			k, v, _ := strings.Cut(field, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				calls = n
			case "usec":
				usec = n
			}
		}
	}
	return calls, usec
}
