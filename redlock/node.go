package redlock

import (
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/nodecheck"
	"github.com/redlease/redlease/internal/placement"
	"github.com/redlease/redlease/internal/quarantine"
	"github.com/redlease/redlease/internal/quorum"
	"github.com/redlease/redlease/internal/reach"
	"github.com/redlease/redlease/internal/workers"
)

// Every kind of go-redis client can be a node.
var (
	_ redis.UniversalClient = (*redis.Client)(nil)
	_ redis.UniversalClient = (*redis.ClusterClient)(nil)
	_ redis.UniversalClient = (*redis.Ring)(nil)
)

// markerKey is the quarantine marker of a standalone node: one per server.
const markerKey = "{redlease}:marker"

// node is one voter: a standalone server, or one hash slot of a cluster.
type node struct {
	client redis.UniversalClient
	addr   string              // its stable name (NodeResult.Node, notices); name() for errors and logs
	nm     nodeName            // its name for errors and logs where the server names it (see identity.go)
	ident  quarantine.Identity // what its answers said about its server
	idx    int                 // position in its set (Client.sets): the copy of a cluster lock
	bucket int                 // its set: the bucket of a cluster Client's keys (docs/design.md §4.11)
	// ownDeadline: the go-redis client cuts its own requests at the
	// context's deadline (a *redis.Client with ContextTimeoutEnabled), so
	// a request to it may run in the caller's goroutine (quorum.Fanout).
	ownDeadline bool
	// tag, when set, is the hash tag that every key of this node carries,
	// so that the lock, its counter and the marker share one slot.
	tag string

	// cluster is set when the node is (a slot of) a Redis Cluster: errors
	// reload its slot map, and run_ids are not compared (copies of one lock
	// may share a master; see internal/placement).
	cluster *redis.ClusterClient
	// bySlot: the node is named by its slot (a copy of a one-bucket
	// cluster Client), and name adds the master serving it.
	bySlot bool

	// fcall: the node runs the scripts as the Function library (FCALL),
	// with its incarnation token; otherwise by EVALSHA (docs/design.md
	// §4.7.5). Set by the start-up probe (functions.go).
	fcall      atomic.Bool
	modeLogged atomic.Bool // its mode was logged (functions.go)

	batch batcher                   // requests to this node (see batch.go)
	jobs  *workers.Pool[quorum.Job] // its requests' worker goroutines (docs/design.md §4.13)
	conf  nodecheck.Conf            // what its configuration allows (see conf.go)

	// For a copy of a NewCluster Client: the master that serves its slot
	// as the last placement check saw it, and the server that last
	// answered for it (the first 48 bits of its run_id; see
	// placement.Watcher.AnsweredBy).
	master placement.Master
	server atomic.Int64

	// heard is when the node last gave a vote, and what the last answer
	// that read its quarantine marker said (redlockx.Client.Heard).
	heard reach.Heard
	// clock is its server clock's sanity (clock.go).
	clock clockWatch
}

// name names the node in errors and logs: its address, and for a copy on
// a Redis Cluster its slot and the address of the master serving it, as
// last seen ("slot 5461 (127.0.0.1:7001)"): a slot alone says nothing to
// an operator, and the master behind it can change.
func (n *node) name() string {
	if !n.bySlot {
		return n.nm.get() // the address, or for a FailoverClient "failover#<i>@<server>"
	}
	m := n.master.Get() // as last seen
	if m == "" {
		m = "master unknown"
	}
	return n.addr + " (" + m + ")"
}

// newNode makes a node named name; fixed says that the name names one
// server (see configuredName).
func newNode(c redis.UniversalClient, name string, fixed bool) *node {
	n := &node{client: c, addr: name, jobs: workers.New[quorum.Job]()}
	n.nm.init(name, fixed)
	return n
}

// Workers is the pool that runs the node's requests (quorum.Node).
func (n *node) Workers() *workers.Pool[quorum.Job] { return n.jobs }

// OwnDeadline reports that the node's go-redis client cuts its requests
// at the context's deadline (quorum.Node).
func (n *node) OwnDeadline() bool { return n.ownDeadline }

func (n *node) lockKey(key string) string {
	if n.tag == "" {
		return key
	}
	return "{" + n.tag + "}:" + key
}

// fenceKey is the fencing counter beside a lock key. Appending keeps any
// hash tag of the key, so both live in the same slot.
func (n *node) fenceKey(key string) string { return n.lockKey(key) + ":fence" }

func (n *node) marker() string {
	if n.tag == "" {
		return markerKey
	}
	return "{" + n.tag + "}:marker"
}

// answer is one node's parsed reply to one script.
type answer struct {
	vote    vote
	err     error
	counter int64  // fencing counter (acquire, inspect)
	ms      int64  // PTTL of the other holder, or quarantine left
	created int64  // marker incarnation, for raise
	high    int64  // the node's highest token, for raise
	server  int64  // the first 48 bits of the server's run_id (0: unknown)
	value   string // inspect
	ready   bool   // inspect: fencing floor raised
}

// errBadReply marks a reply that does not have the shape of its script:
// a server that returns garbage gets a no vote, not a panic.
var errBadReply = errors.New("unexpected reply")

func badReply(v any) error { return fmt.Errorf("%w: %#v", errBadReply, v) }

// replyInts reads an array reply of at least n elements whose first n-1
// ... are integers; it returns them as int64 and the raw slice.
func replyArray(v any, n int) ([]any, error) {
	a, ok := v.([]any)
	if !ok || len(a) < n {
		return nil, badReply(v)
	}
	return a, nil
}

func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case string:
		i, err := strconv.ParseInt(x, 10, 64)
		return i, err == nil
	default:
		return 0, false
	}
}

// intsOf reads the integers at the given positions into out (no
// allocation: the hot paths parse every reply).
func intsOf(a []any, out []int64, idx ...int) error {
	for j, i := range idx {
		v, ok := asInt(a[i])
		if !ok {
			return badReply(a)
		}
		out[j] = v
	}
	return nil
}

// asInts is intsOf into a new slice.
func asInts(a []any, idx ...int) ([]int64, error) {
	out := make([]int64, len(idx))
	if err := intsOf(a, out, idx...); err != nil {
		return nil, err
	}
	return out, nil
}

func asString(v any) string {
	s, _ := v.(string)
	return s
}

// quarantineVote maps the script codes 2 and 3 onto a quarantined vote.
func scriptVote(code int64) (vote, bool) {
	switch code {
	case 1:
		return voteYes, true
	case 0:
		return voteNo, true
	case 2, 3:
		return voteQuarantined, true
	}
	return voteError, false
}

// intReply reads an integer script reply.
func intReply(res any, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	v, ok := res.(int64)
	if !ok {
		return 0, badReply(res)
	}
	return v, nil
}
