package faults

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
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

// scEvictingPolicy: eviction is forgetting without quarantine, which is
// why redlock.New refuses evicting nodes. A leader L is made to hold its
// term on a bare majority (cut from node b until its key there lapses),
// then, mid-run, node v of that majority is switched to an evicting
// policy (volatile-random: keys with a TTL, as lock keys have, may go)
// with a maxmemory just above its usage, and filler keys with a TTL press
// on it until L's key is evicted there. v and b then elect another
// candidate while L still leads: C1 must see the two leaders (as after the
// clock jump); fencing must hold (C2, C3: the counters have no TTL, they
// are not evicted), and C4 too. A candidate restarted against v is
// refused by redlock.New, with an error naming the node and its policy,
// and starts with AllowEviction.
func scEvictingPolicy(t *testing.T, bin string) {
	r := newRig(t, bin, rigOptions{})
	r.start()
	ctx := context.Background()
	perm := r.rng.Perm(r.o.nodes)
	v, b := perm[0], perm[1]
	a := r.admin[v]
	// Evictions are announced, so that the test sees the election key go.
	require.NoError(t, a.ConfigSet(ctx, "notify-keyspace-events", "Ee").Err())
	sub := a.Subscribe(ctx, "__keyevent@0__:evicted")
	defer sub.Close()
	_, err := sub.Receive(ctx)
	require.NoError(t, err)
	bm := r.bareMajority(v, b, func(string) bool { return true })

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
	stopFiller()
	evictedAt := r.mark("%s's key evicted on node %d, %s after the switch (%d keys evicted); the filler stopped",
		bm.l.id, v, gap(at, wire.Now()), infoInt(t, a, "stats", "evicted_keys"))
	next, _ := r.waitEv(bm.from, waitLong, "a second leader, elected by nodes "+strconv.Itoa(v)+" and "+strconv.Itoa(b), electedOther(bm.l))
	t.Logf("%s elected %s after the eviction, while %s leads", next.ID, gap(evictedAt, next.TS), bm.l.id)
	r.waitEv(bm.from, waitLong, "the old leader's stepdown", ended(wire.Stepdown, bm.l, bm.el.TS))
	bm.l.slot.proxies[b].Heal()

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
	rep := r.finish()
	require.NotEmpty(t, rep.c1, "C1 did not see the two leaders the eviction made")
	assert.Contains(t, strings.Join(rep.c1, "\n"), "tenures overlap")
	t.Logf("C1 reports the double leadership, as it must: %v", rep.c1)
	r.expect(rep, "C1")
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
