package faults

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/notice"
	"github.com/redlease/redlease/internal/testing/checker/wire"
)

// infoInt reads one integer field of an INFO section.
func infoInt(t *testing.T, c *redis.Client, section, field string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(infoField(t, c, section, field), 10, 64)
	require.NoError(t, err)
	return n
}

// Eviction. An evicting node forgets lock keys without a quarantine:
// redlock refuses it, in New and while in use (redlock/conf.go): a
// vote-bearing request re-checks a node's configuration in the background
// once its last check began more than a second ago, and waits for a check
// begun since once it began more than 5s ago; the refused node's votes
// count as errors naming its policy, and the acquire and extend scripts
// are not sent to it. Config.AllowEviction documents the bound: a change
// is seen within 5s.
const (
	// confStale is how old redlock lets a node's last configuration check
	// get before a vote waits for a new one (redlock's confStale).
	confStale = 5 * time.Second
	// confLand: a script admitted just before the bound may still reach the
	// node after it; the candidates' read timeout is 300ms, their
	// NodeTimeout 100ms.
	confLand = time.Second
)

// evicting is the world of the eviction scenarios: a leader L held on a
// bare majority (node v and the third node, cut from node b), and a watch
// of v's key events.
type evicting struct {
	r        *rig
	v, b, c  int // c: the third node
	a        *redis.Client
	bm       bare
	w        *keyWatch
	switched int64 // when v turned evicting
	limit    int64
}

// startEvicting starts the rig, watches node v's key events (evictions
// are announced, and every write of the election's keys), and makes a
// leader hold its term on v and the third node only.
func startEvicting(t *testing.T, bin string, o rigOptions) *evicting {
	r := newRig(t, bin, o)
	r.start()
	perm := r.rng.Perm(r.o.nodes)
	e := &evicting{r: r, v: perm[0], b: perm[1], c: perm[2]}
	e.a = r.admin[e.v]
	e.w = watchKeys(t, e.a)
	e.bm = r.bareMajority(e.v, e.b, func(string) bool { return true })
	return e
}

// switchPolicy turns node v evicting: volatile-random (keys with a TTL, as
// lock keys have, may go). Nothing is evicted yet: v has no maxmemory
// (see tighten).
func (e *evicting) switchPolicy() {
	t, ctx := e.r.t, context.Background()
	require.NoError(t, e.a.ConfigSet(ctx, "maxmemory-policy", "volatile-random").Err())
	e.switched = e.r.mark("node %d: maxmemory-policy volatile-random (no maxmemory yet)", e.v)
}

// tighten sets node v's maxmemory just above its usage, so that the
// filler makes it evict.
func (e *evicting) tighten() {
	t, ctx := e.r.t, context.Background()
	e.limit = infoInt(t, e.a, "memory", "used_memory") + 64<<10
	require.NoError(t, e.a.ConfigSet(ctx, "maxmemory", strconv.FormatInt(e.limit, 10)).Err())
	e.r.mark("node %d: maxmemory %d (its usage + 64KiB)", e.v, e.limit)
}

// fill presses on node v's memory: a 16KiB filler key with a TTL every
// 2ms (8 keys in turn, OOM now and then), until the returned func is
// called.
func (e *evicting) fill() (stop func()) {
	var filler sync.WaitGroup
	done := make(chan struct{})
	filler.Go(func() {
		ctx := context.Background()
		value := bytes.Repeat([]byte("x"), 16<<10)
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
			_ = e.a.Set(ctx, fmt.Sprintf("evict:filler:%d", i%8), value, time.Hour).Err() // OOM now and then
		}
	})
	e.r.mark("node %d: 16KiB filler keys with a TTL every 2ms", e.v)
	stop = sync.OnceFunc(func() {
		close(done)
		filler.Wait()
	})
	e.r.t.Cleanup(stop)
	return stop
}

// keyWatch records a node's key events (__keyevent@0__:<event>) in the
// order the node sent them, in a history of their own: Ev is the event
// ("set", "expire", "del", "expired", "evicted"), What the key; marks the
// test puts in the stream (a PING's reply) are Ev "mark", What the mark's
// name; a failed read of the stream is Ev "error" (events may be lost).
type keyWatch struct {
	sub    *redis.PubSub
	h      *history
	mu     sync.Mutex
	closed bool
	done   sync.WaitGroup
}

func (w *keyWatch) isClosed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.closed
}

// watchKeys subscribes to node a's writes of strings (set), expiry
// changes and deletions (expire, del), expirations and evictions.
func watchKeys(t *testing.T, a *redis.Client) *keyWatch {
	ctx := context.Background()
	require.NoError(t, a.ConfigSet(ctx, "notify-keyspace-events", "E$gxe").Err())
	w := &keyWatch{h: newHistory()}
	w.sub = a.PSubscribe(ctx, "__keyevent@0__:*")
	_, err := w.sub.Receive(ctx)
	require.NoError(t, err)
	w.done.Go(func() {
		for {
			m, err := w.sub.Receive(ctx)
			switch m := m.(type) {
			case nil:
				if w.isClosed() {
					return
				}
				w.h.add(wire.Event{Ev: "error", Cause: fmt.Sprint(err)})
				time.Sleep(10 * time.Millisecond)
			case *redis.Message:
				w.h.add(wire.Event{Ev: strings.TrimPrefix(m.Channel, "__keyevent@0__:"), What: m.Payload})
			case *redis.Pong:
				w.h.add(wire.Event{Ev: "mark", What: m.Payload})
			}
		}
	})
	t.Cleanup(func() {
		w.mu.Lock()
		w.closed = true
		w.mu.Unlock()
		_ = w.sub.Close()
		w.done.Wait()
	})
	return w
}

// mark puts a mark in the node's event stream and waits for it: the events
// after it (from the index returned) happened on the node after the mark
// was sent.
func (w *keyWatch) mark(t *testing.T, name string) int {
	t.Helper()
	require.NoError(t, w.sub.Ping(context.Background(), name))
	_, i := w.wait(t, 0, waitLong, "the mark "+name, func(ev wire.Event) bool { return ev.Ev == "mark" && ev.What == name })
	return i + 1
}

// wait waits for the first event at index >= from that matches, and
// returns it with its index.
func (w *keyWatch) wait(t *testing.T, from int, timeout time.Duration, what string, match func(wire.Event) bool) (wire.Event, int) {
	t.Helper()
	ev, i, ok := w.h.next(from, timeout, match)
	if !ok {
		t.Fatalf("no %s within %s", what, timeout)
	}
	return ev, i
}

// span returns the events at indexes [from, to) that match; to < 0: up to
// the last.
func (w *keyWatch) span(from, to int, match func(wire.Event) bool) []wire.Event {
	evs, _ := w.h.snapshot()
	if to < 0 || to > len(evs) {
		to = len(evs)
	}
	return slices.DeleteFunc(evs[min(from, to):to], func(ev wire.Event) bool { return !match(ev) })
}

// onElectionKeys: an event of the election's key or fencing counter, or a
// gap in the watch.
func onElectionKeys(ev wire.Event) bool {
	return ev.What == electionKey || ev.What == fenceKey || ev.Ev == "error"
}

func evicted(ev wire.Event) bool { return ev.Ev == "evicted" }

func evictedFiller(ev wire.Event) bool {
	return evicted(ev) && strings.HasPrefix(ev.What, "evict:filler:")
}

// scEvictingPolicy: a node switched to an evicting policy under a running
// election is refused at run time. A leader L is made to hold its term on
// a bare majority (cut from node b until its key there lapses: node v and
// the third node c), then v is switched to volatile-random (keys with a
// TTL, as lock keys have, may go), with no maxmemory yet.
// L's client re-checks v within about a second, counts its extend votes
// as errors naming the policy and, left with c alone, steps down by its
// local deadline (C4); its demotion's cause names the policy. Once the
// documented bound has passed (every vote of v that any client counts
// then comes from a check made after the switch), v gets a maxmemory just
// above its usage and filler keys press on it (evictions), the leader's links are cut and the next leader
// is elected by b and c: neither the election key nor its fencing counter
// is written on v after the bound (no script is sent to a refused node).
// A candidate restarted against v is refused by redlock.New, with an
// error naming the node and its policy, and starts with AllowEviction.
// C1-C4 hold.
func scEvictingPolicy(t *testing.T, bin string) {
	e := startEvicting(t, bin, rigOptions{})
	r, l, el := e.r, e.bm.l, e.bm.el
	e.switchPolicy()
	sd, _ := r.waitEv(e.bm.from, waitLong, "the leader's stepdown", ended(wire.Stepdown, l, el.TS))
	dm, _ := r.waitEv(e.bm.from, waitLong, "the leader's demotion", ended(wire.Demoted, l, el.TS))
	t.Logf("leader %s saw its term end %s after the switch; demoted: %s", l.id, gap(e.switched, sd.T), dm.Cause)
	l.slot.proxies[e.b].Heal()
	r.mark("healed %s's link to node %d", l.id, e.b)

	// A vote of v counted at time t goes by a check that began after
	// t - confStale (an older one is waited for, within the request's
	// deadline): from switched + confStale on, every vote of v a client
	// counts comes from a check begun after the switch, which refuses it
	// (Config.AllowEviction: "a change is seen within 5s"). confLand more
	// for a script admitted just before the bound to reach v or be given
	// up. This is the wait for a guarantee, not for an outcome.
	bound := e.switched + (confStale + confLand).Nanoseconds()
	sleepUntil(bound)
	after := e.w.mark(t, "bound")
	// No pressure yet: v has no maxmemory before the bound, so nothing
	// is evicted inside the window the guard does not cover
	// (Config.AllowEviction); an eviction there would void the scenario.
	if early := e.w.span(0, after, evicted); len(early) > 0 {
		t.Errorf("node %d evicted keys before the bound, inside the window the guard does not cover: %v", e.v, early)
	}
	r.mark("%s after the switch: no client counts node %d's votes", gap(e.switched, bound), e.v)
	e.tighten()
	stop := e.fill()
	e.w.wait(t, after, waitLong, "an eviction of a filler key on node "+strconv.Itoa(e.v), evictedFiller)
	partitionLeader(r)
	p, pel := r.leader()
	stop()
	require.Greater(t, pel.TS, bound, "the leader %s was not elected after the bound", p.id)
	for _, n := range []int{e.b, e.c} {
		if h := notice.DecodeValue(get(r.admin[n], electionKey)); h.ID != p.id {
			t.Errorf("node %d holds %q, not leader %s's key", n, h.Raw, p.id)
		}
	}
	// Writes, not evictions: the fencing counter expires (it has a TTL), so
	// the evicting node may evict the copy it held from before the bound.
	late := e.w.span(after, -1, func(ev wire.Event) bool { return onElectionKeys(ev) && !evicted(ev) })
	nEvicted := len(e.w.span(after, -1, evictedFiller))
	t.Logf("%s elected by nodes %d and %d, %s after the bound; node %d: %d filler keys evicted, %d events of the election's keys since the bound",
		p.id, e.b, e.c, gap(bound, pel.TS), e.v, nEvicted, len(late))
	if len(late) > 0 || get(e.a, electionKey) != "" {
		t.Errorf("node %d was written the election's keys after the bound, although refused: %v (now %q)", e.v, late, get(e.a, electionKey))
	}
	e.guardActed(t, l, dm.Cause)

	e.restartRefused(t)
	rep := r.finish()
	r.expect(rep)
}

// guardActed asserts positive evidence that the guard acted on node v's
// policy: usually the cause of leader l's demotion is a refresh that
// failed on v's refusal, not on a vote (no key of l's was evicted: no
// pressure yet). On a loaded host the refreshes may instead have seen no
// node answer within NodeTimeout (the configuration check's own reads
// too): then a candidate's log, read after the bound, names the refusal
// (a failed refresh at debug, or the check's "node refused" at error),
// each by its own proxy's address of v.
func (e *evicting) guardActed(t *testing.T, l *proc, cause string) {
	refusal := func(sl *slot) string {
		return "node " + sl.proxies[e.v].Addr() + " has maxmemory-policy volatile-random"
	}
	if strings.Contains(cause, refusal(l.slot)) {
		return
	}
	for _, sl := range e.r.slots {
		if logb, _ := os.ReadFile(sl.cur.log); strings.Contains(string(logb), refusal(sl)) {
			return
		}
	}
	t.Errorf("neither %s's demotion nor any candidate's log names node %d's refusal", l.id, e.v)
}

// restartRefused restarts the first candidate against the evicting node:
// redlock.New refuses it, with an error naming the node and its policy,
// and it starts with AllowEviction.
func (e *evicting) restartRefused(t *testing.T) {
	r := e.r
	sl := r.slots[0]
	r.stop(sl.cur)
	ev := r.spawnRefused(sl)
	assert.True(t, ev.OK, "the refusal is not a redlock.ErrInvalidArgument: %s", ev.Cause)
	for _, want := range []string{"node " + sl.proxies[e.v].Addr(), "maxmemory-policy volatile-random", "AllowEviction"} {
		assert.Contains(t, ev.Cause, want)
	}
	from := r.hist.len()
	np := r.spawn(sl, "-allow-eviction")
	r.waitEv(from, waitLong, "candidate "+np.id+" ready with AllowEviction", func(ev wire.Event) bool {
		return ev.Ev == wire.Ready && ev.PID == np.pid
	})
}

// ctlEvictingAllowEviction: the negative control of the eviction guard:
// the same deployment with every candidate allowing eviction
// (AllowEviction), so that v's votes count whatever its policy. Under
// memory pressure v evicts L's key, and v and b elect another candidate
// while L still leads: C1 must see the two leaders (as after the clock
// jump); fencing holds (C2, C3: the counters have no TTL, they are not
// evicted), and C4 too.
func ctlEvictingAllowEviction(t *testing.T, bin string) {
	e := startEvicting(t, bin, rigOptions{allowEviction: true})
	r, l, el := e.r, e.bm.l, e.bm.el
	e.switchPolicy()
	e.tighten()
	stop := e.fill()
	e.w.wait(t, 0, waitLong, "the election key's eviction on node "+strconv.Itoa(e.v), func(ev wire.Event) bool {
		return evicted(ev) && ev.What == electionKey
	})
	stop()
	evictedAt := r.mark("%s's key evicted on node %d, %s after the switch (%d keys evicted); the filler stopped",
		l.id, e.v, gap(e.switched, wire.Now()), infoInt(t, e.a, "stats", "evicted_keys"))
	next, _ := r.waitEv(e.bm.from, waitLong, "a second leader, elected by nodes "+strconv.Itoa(e.v)+" and "+strconv.Itoa(e.b), electedOther(l))
	t.Logf("%s elected %s after the eviction, while %s leads", next.ID, gap(evictedAt, next.TS), l.id)
	r.waitEv(e.bm.from, waitLong, "the old leader's stepdown", ended(wire.Stepdown, l, el.TS))
	l.slot.proxies[e.b].Heal()
	rep := r.finish()
	caughtOverlap(t, rep, "the two leaders the eviction made")
	t.Logf("caught, as it must be: %v", rep.c1)
	r.expect(rep, "C1")
}

// scDuplicateServer: a candidate whose nodes reach one server twice is
// refused by redlock.New (docs/design.md S7, one server, one vote), whether the two
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
	assert.True(t, ev.OK, "the refusal is not a redlock.ErrInvalidArgument: %s", ev.Cause)
	assert.Contains(t, ev.Cause, fmt.Sprintf("nodes %s and %s are the same server (run_id %s)",
		twice.proxies[0].Addr(), twice.proxies[2].Addr(), runID(t, r.admin[d])))

	same := r.newSlot("dup-addr", addrs[d], addrs[o])
	same.proxies = append(same.proxies, same.proxies[0])
	r.mark("candidate %s: nodes %v, one address twice", same.name, same.addrs())
	ev = r.spawnRefused(same)
	assert.True(t, ev.OK, "the refusal is not a redlock.ErrInvalidArgument: %s", ev.Cause)
	assert.Contains(t, ev.Cause, fmt.Sprintf("nodes 0 and 2 are the same server (%s)", same.proxies[0].Addr()))

	r.waitTerms(3, wire.Now(), waitLong)
	rep := r.finish()
	r.expect(rep)
}
