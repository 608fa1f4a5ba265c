// Package placement watches where the copies of a cluster Client's locks
// live (redlock.NewCluster, docs/design.md §4.11): which master serves
// each copy's slot, whether two copies of one bucket share a master (one
// failure then costs two votes), and when to look again. It logs the
// placement once per change and records each copy's master for the names
// in errors and logs. It imports nothing of redlock; redlock's Client
// holds one [Watcher] and tells it what its replies show.
package placement

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/clusterkey"
)

// Every is how often a cluster Client in use checks its placement when
// nothing else made it look: it covers a move that no reply revealed
// (quarantine off, so no run_id in replies) and a node that answered the
// check with a stale view of a move.
const Every = 10 * time.Second

// soon is how often the placement is checked while a copy is unsettled
// (see Watcher).
const soon = time.Second

// Copy is one copy of a cluster Client's locks: copy Index of the keys of
// bucket Bucket, in the slot of hash tag Tag, where Marker is a key (the
// quarantine marker). Master is where the Watcher records the master it
// finds serving that slot.
type Copy struct {
	Index, Bucket int
	Tag, Marker   string
	Master        *Master
}

// Master is the master serving one copy's slot, as the last placement
// check saw it. The zero Master knows none. Safe for concurrent use.
type Master struct{ p atomic.Pointer[string] }

// Set records addr.
func (m *Master) Set(addr string) {
	if old := m.p.Load(); old == nil || *old != addr {
		m.p.Store(&addr)
	}
}

// Get returns the master last recorded; "" if none.
func (m *Master) Get() string {
	if p := m.p.Load(); p != nil {
		return *p
	}
	return ""
}

// Replica is where one copy lives: copy Index of bucket Bucket, in Slot
// (the slot of Tag), on Master ("" if unknown, and Err says why).
type Replica struct {
	Index  int
	Bucket int
	Tag    string
	Slot   uint16
	Master string
	Err    error
}

// Watcher watches the placement of a cluster Client's copies, and
// reloads the slot map of a cluster whose node failed. Its checks run in
// the background, counted by the Client's WaitGroup (its Close waits for
// them). The zero Watcher watches no copies (a Client over independent
// nodes): it only reloads the slot maps of cluster nodes that fail; Watch
// gives it copies. Safe for concurrent use; not to be copied.
type Watcher struct {
	cluster *redis.ClusterClient // nil: no copies to watch (New)
	copies  []Copy               // bucket after bucket, n copies each
	buckets int
	log     hclog.Logger
	wg      *sync.WaitGroup
	// base bounds every background check; Stop cancels it, so that a check
	// waiting in the cluster client's retry back-off ends at Close.
	base context.Context
	stop context.CancelFunc

	mu         sync.Mutex
	last       string    // placement signature last logged
	lastReload time.Time // rate limit of reloads after errors

	checking  atomic.Bool  // a recheck goroutine runs
	again     atomic.Bool  // a recheck was asked for since it last looked
	lastCheck atomic.Int64 // UnixNano of the last recheck asked for
	// A copy answered from another server but the slot map had not
	// changed: a slot being migrated, whose keys the new master already
	// serves after an ASK. Until unsettled (UnixNano), the placement is
	// checked every soon, so that the end of the migration is seen even if
	// no reply comes from yet another server.
	moved     atomic.Bool
	unsettled atomic.Int64
}

// Watch makes w watch copies (buckets sets of them) on cluster, logging
// to log; wg counts its background checks. Call it once, before any other
// method.
func (w *Watcher) Watch(cluster *redis.ClusterClient, copies []Copy, buckets int, log hclog.Logger, wg *sync.WaitGroup) {
	w.cluster, w.copies, w.buckets, w.log, w.wg = cluster, copies, buckets, log, wg
	w.base, w.stop = context.WithCancel(context.Background())
}

// Stop ends the background check running, if any, and makes later ones
// end at once (the Client is closing). It does nothing before Watch.
func (w *Watcher) Stop() {
	if w.stop != nil {
		w.stop()
	}
}

// Now reports which master serves each copy now (bucket after bucket, n
// copies each), and whether two copies of one bucket share a master. It
// asks the cluster (CLUSTER SLOTS, one request through the cluster
// client), and reads the cluster client's slot map if that request fails.
// It is nil for a Client over independent nodes.
func (w *Watcher) Now(ctx context.Context) (replicas []Replica, shared bool) {
	if w.cluster == nil {
		return nil, false
	}
	// CLUSTER SLOTS, not SHARDS: it answers on every Redis version, it is
	// what go-redis reads its slot map from, and the ACL in SECURITY.md
	// allows it.
	//lint:ignore SA1019 see above
	slots, slotsErr := w.cluster.ClusterSlots(ctx).Result()
	var seen map[string]bool
	for _, cp := range w.copies {
		if cp.Index == 0 {
			seen = map[string]bool{} // a new bucket
		}
		r := Replica{Index: cp.Index, Bucket: cp.Bucket, Tag: cp.Tag, Slot: clusterkey.Slot(cp.Tag)}
		if slotsErr == nil {
			r.Master, r.Err = slotMaster(slots, r.Slot)
		} else if m, err := w.cluster.MasterForKey(ctx, cp.Marker); err != nil {
			r.Err = errors.Join(slotsErr, err)
		} else {
			r.Master = m.Options().Addr
		}
		if r.Master != "" {
			if seen[r.Master] {
				shared = true
			}
			seen[r.Master] = true
		}
		replicas = append(replicas, r)
	}
	return replicas, shared
}

// slotMaster finds the master of slot in a CLUSTER SLOTS reply.
func slotMaster(slots []redis.ClusterSlot, slot uint16) (string, error) {
	for _, r := range slots {
		if int(slot) >= r.Start && int(slot) <= r.End && len(r.Nodes) > 0 {
			return r.Nodes[0].Addr, nil
		}
	}
	return "", fmt.Errorf("slot %d is not served", slot)
}

// Start records that the placement was looked at now (New's first check
// follows), so that the first fan-out does not check it again.
func (w *Watcher) Start() { w.lastCheck.Store(time.Now().UnixNano()) }

// Recheck checks the placement again in the background: at most one
// check runs at a time, and a request made while one runs makes it look
// once more.
func (w *Watcher) Recheck() {
	if w.cluster == nil {
		return
	}
	w.lastCheck.Store(time.Now().UnixNano())
	w.again.Store(true)
	if !w.checking.CompareAndSwap(false, true) {
		return
	}
	w.wg.Go(func() {
		for {
			for w.again.Swap(false) {
				moved := w.moved.Swap(false)
				ctx, cancel := context.WithTimeout(w.base, time.Second)
				if !w.Check(ctx) && moved {
					w.unsettled.Store(time.Now().Add(Every).UnixNano())
				}
				cancel()
			}
			w.checking.Store(false)
			// A request that came after the last look but before the flag
			// was cleared found the check running: look again.
			if !w.again.Load() || !w.checking.CompareAndSwap(false, true) {
				return
			}
		}
	})
}

// Due rechecks the placement if it was not looked at for Every (soon
// while a copy is unsettled); every fan-out of a cluster Client calls it.
func (w *Watcher) Due() {
	if w.cluster == nil {
		return
	}
	every, now := Every, time.Now().UnixNano()
	if now < w.unsettled.Load() {
		every = soon
	}
	if time.Duration(now-w.lastCheck.Load()) > every {
		w.Recheck()
	}
}

// AnsweredBy records which server answered for a cluster copy, in server
// (the first 48 bits of its run_id; id 0: unknown); a change means the
// copy's slot moved (a migration, a failover), so the placement is
// checked again. Replies carry the server anyway (one vote per server,
// the quarantine): this costs no request.
func (w *Watcher) AnsweredBy(server *atomic.Int64, id int64) {
	if id == 0 {
		return
	}
	if old := server.Load(); old == id {
		return
	}
	if old := server.Swap(id); old != 0 && old != id {
		w.moved.Store(true)
		w.Recheck()
	}
}

// Failed reacts to an error from a node on cluster: reload its slot map
// (at most every 100ms), and check the placement again.
func (w *Watcher) Failed(cluster *redis.ClusterClient, err error) {
	if err == nil || err == redis.Nil {
		return
	}
	w.mu.Lock()
	due := time.Since(w.lastReload) > 100*time.Millisecond
	if due {
		w.lastReload = time.Now()
	}
	w.mu.Unlock()
	if !due {
		return
	}
	cluster.ReloadState(context.Background())
	w.Recheck()
}
