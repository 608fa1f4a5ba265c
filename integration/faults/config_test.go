package faults

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/integration/faults/internal/wire"
)

// infoInt reads one integer field of an INFO section.
func infoInt(t *testing.T, c *redis.Client, section, field string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(infoField(t, c, section, field), 10, 64)
	require.NoError(t, err)
	return n
}

// scEvictingPolicy: mid-run, one node of three is switched to an evicting
// policy (volatile-random: keys with a TTL, such as lock keys, may go)
// with a maxmemory just above its usage, and filler keys with a TTL keep
// it under pressure, until the election key is evicted while a term holds
// it. A minority that forgets locks cannot grant a term twice: elections
// go on and the checkers pass. A candidate restarted against that node is
// refused by redlock.New, with an error naming the node and its policy,
// and starts with AllowEviction.
func scEvictingPolicy(t *testing.T, bin string) {
	r := newRig(t, bin, rigOptions{resignAfter: 300 * time.Millisecond})
	r.start()
	r.waitTerms(2, 0, waitLong)
	ctx := context.Background()
	v := r.rng.IntN(r.o.nodes)
	a := r.admin[v]
	// Evictions are announced, so that the test sees the election key go.
	require.NoError(t, a.ConfigSet(ctx, "notify-keyspace-events", "Ee").Err())
	sub := a.Subscribe(ctx, "__keyevent@0__:evicted")
	defer sub.Close()
	_, err := sub.Receive(ctx)
	require.NoError(t, err)
	limit := infoInt(t, a, "memory", "used_memory") + 64<<10
	require.NoError(t, a.ConfigSet(ctx, "maxmemory-policy", "volatile-random").Err())
	require.NoError(t, a.ConfigSet(ctx, "maxmemory", strconv.FormatInt(limit, 10)).Err())
	var filler sync.WaitGroup
	stop := make(chan struct{})
	filler.Go(func() {
		value := bytes.Repeat([]byte("x"), 16<<10)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			_ = a.Set(ctx, fmt.Sprintf("evict:filler:%d", i%8), value, time.Hour).Err() // OOM now and then
		}
	})
	stopFiller := sync.OnceFunc(func() {
		close(stop)
		filler.Wait()
	})
	defer stopFiller()
	at := r.mark("node %d: maxmemory-policy volatile-random, maxmemory %d (its usage + 64KiB), 16KiB filler keys with a TTL every 2ms", v, limit)
	deadline := time.Now().Add(waitLong)
	for evicted := false; !evicted; {
		m, err := sub.ReceiveTimeout(ctx, time.Until(deadline))
		require.NoError(t, err, "the election key was not evicted on node %d within %s", v, waitLong)
		msg, ok := m.(*redis.Message)
		evicted = ok && msg.Payload == electionKey
	}
	evictedAt := r.mark("the election key was evicted on node %d, %s after the switch (%d keys evicted so far)",
		v, gap(at, wire.Now()), infoInt(t, a, "stats", "evicted_keys"))
	r.waitTerms(3, evictedAt, waitLong)

	sl := r.slots[0]
	r.stop(sl.cur)
	ev := r.spawnRefused(sl)
	assert.True(t, ev.OK, "the refusal is not a redlock.ErrInvalidConfig: %s", ev.Cause)
	for _, want := range []string{"node " + sl.proxies[v].Addr(), "maxmemory-policy volatile-random", "AllowEviction"} {
		assert.Contains(t, ev.Cause, want)
	}
	from := r.hist.len()
	p := r.spawn(sl, "-allow-eviction")
	r.waitEv(from, waitLong, "candidate "+p.id+" ready with AllowEviction", func(ev wire.Event) bool {
		return ev.Ev == wire.Ready && ev.PID == p.pid
	})
	r.waitTerms(2, wire.Now(), waitLong)
	stopFiller()
	r.mark("memory pressure on node %d ended", v)
	rep := r.finish()
	r.expect(rep)
}

// scDuplicateServer: a candidate whose nodes reach one server twice is
// refused by redlock.New (S7, one server, one vote), whether the two
// addresses differ (two proxies to one server: the same run_id) or not;
// the error names both nodes. The other candidates go on electing.
func scDuplicateServer(t *testing.T, bin string) {
	r := newRig(t, bin, rigOptions{resignAfter: 300 * time.Millisecond})
	r.start()
	addrs := r.g.Addrs()
	perm := r.rng.Perm(r.o.nodes)
	d, o := perm[0], perm[1]
	twice := r.newSlot("dup-server", addrs[d], addrs[o], addrs[d])
	r.mark("candidate %s: nodes %v, the first and the last two proxies to server %d", twice.name, twice.addrs(), d)
	ev := r.spawnRefused(twice)
	assert.True(t, ev.OK, "the refusal is not a redlock.ErrInvalidConfig: %s", ev.Cause)
	assert.Contains(t, ev.Cause, fmt.Sprintf("nodes %s and %s are the same server (run_id %s)",
		twice.proxies[0].Addr(), twice.proxies[2].Addr(), runID(t, r.admin[d])))

	same := r.newSlot("dup-addr", addrs[d], addrs[o])
	same.proxies = append(same.proxies, same.proxies[0])
	r.mark("candidate %s: nodes %v, one address twice", same.name, same.addrs())
	ev = r.spawnRefused(same)
	assert.True(t, ev.OK, "the refusal is not a redlock.ErrInvalidConfig: %s", ev.Cause)
	assert.Contains(t, ev.Cause, fmt.Sprintf("nodes 0 and 2 are the same server (%s)", same.proxies[0].Addr()))

	r.waitTerms(3, wire.Now(), waitLong)
	rep := r.finish()
	r.expect(rep)
}
