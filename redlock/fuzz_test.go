package redlock

import (
	"context"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/notice"
	"github.com/redlease/redlease/internal/redlockx"
	"github.com/redlease/redlease/internal/scripts"
)

// Fuzzing of every reply redlock reads. Replies are trees of the values
// go-redis returns (int64, string, []any, map[any]any, float64, bool, nil,
// and Redis errors nested in arrays), or top-level errors, decoded from the
// fuzz input by replyReader (encodeReply is its inverse, for seeds).
//
// FuzzParseReply calls the parsers that are functions of their own.
// FuzzClientReplies reaches the ones written inline in closures (extend,
// inspect, probe, fence, raise) through the public API, over go-redis
// clients whose hook answers every command with a fuzzed reply and never
// touches the network.
//
// Run longer: go test -run '^$' -fuzz '^FuzzParseReply$' -fuzztime 30s ./redlock/

// Top-level reply kinds.
const (
	kindValue    = iota // a value, no error
	kindRedisErr        // a Redis error reply (text follows)
	kindNil             // redis.Nil
	kindNetErr          // a timeout or a closed connection
	kinds
)

// Value tags.
const (
	tagNil      = iota
	tagSmallInt // one byte, signed
	tagInt      // eight bytes, big endian
	tagString   // length byte (< maxString), bytes
	tagArray    // count byte (< maxArray), values
	tagMap      // count byte (< maxMap), key and value pairs
	tagFloat    // eight bytes, IEEE 754 bits
	tagBool     // one byte
	tagErr      // a Redis error inside an array: its text, as tagString
	tagNumStr   // one byte, signed, as a decimal string
	tags
)

// Bounds of a decoded reply: at most maxValues values, maxDepth levels,
// strings of maxString bytes. The parsers must not allocate beyond what
// they are given; these bounds keep each input's tree small.
const (
	maxValues = 64
	maxDepth  = 4
	maxString = 64
	maxArray  = 8
	maxMap    = 4
)

// fakeRedisErr is a Redis error reply, as go-redis' proto.RedisError.
type fakeRedisErr string

func (e fakeRedisErr) Error() string { return string(e) }
func (fakeRedisErr) RedisError()     {}

// redisErrs are the error replies a node may give; the fuzzed text is
// appended, so that prefixes and free text are both tried.
var redisErrs = []string{
	"NOPERM this user has no permissions to run the 'evalsha' command",
	"NOSCRIPT No matching script. Please use EVAL.",
	"WRONGTYPE Operation against a key holding the wrong kind of value",
	"REDLEASE TTL 1000ms is above this node's MaxTTL 10ms",
	"ERR ACL failure in script: No permissions to access a key",
	"READONLY You can't write against a read only replica.",
	"LOADING Redis is loading the dataset in memory",
	"ERR The user executing the script can't run this command or subcommand",
	"",
}

type replyReader struct {
	b      []byte
	values int
}

func (r *replyReader) byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *replyReader) uint64() uint64 {
	var b [8]byte
	for i := range b {
		b[i] = r.byte()
	}
	return binary.BigEndian.Uint64(b[:])
}

func (r *replyReader) string() string {
	n := int(r.byte()) % maxString
	n = min(n, len(r.b))
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// reply reads one top-level reply: a value, or an error.
func (r *replyReader) reply() (any, error) {
	r.values = 0
	switch r.byte() % kinds {
	case kindRedisErr:
		i := int(r.byte()) % len(redisErrs)
		return nil, fakeRedisErr(redisErrs[i] + r.string())
	case kindNil:
		return nil, redis.Nil
	case kindNetErr:
		if r.byte()%2 == 0 {
			return nil, context.DeadlineExceeded
		}
		return nil, io.EOF
	default:
		return r.value(0), nil
	}
}

func (r *replyReader) value(depth int) any {
	r.values++
	if r.values > maxValues {
		return nil
	}
	switch r.byte() % tags {
	case tagSmallInt:
		return int64(int8(r.byte()))
	case tagInt:
		return int64(r.uint64())
	case tagString:
		return r.string()
	case tagArray:
		n := int(r.byte()) % maxArray
		if depth >= maxDepth {
			n = 0
		}
		a := make([]any, n)
		for i := range a {
			a[i] = r.value(depth + 1)
		}
		return a
	case tagMap:
		n := int(r.byte()) % maxMap
		if depth >= maxDepth {
			n = 0
		}
		m := make(map[any]any, n)
		for range n {
			k := r.value(depth + 1)
			if k == nil || !isComparable(k) {
				k = strconv.Itoa(len(m))
			}
			m[k] = r.value(depth + 1)
		}
		return m
	case tagFloat:
		return math.Float64frombits(r.uint64())
	case tagBool:
		return r.byte()%2 == 1
	case tagErr:
		return fakeRedisErr(r.string())
	case tagNumStr:
		return strconv.Itoa(int(int8(r.byte())))
	default:
		return nil
	}
}

func isComparable(v any) bool {
	switch v.(type) {
	case []any, map[any]any:
		return false
	}
	return true
}

// encodeReply is the inverse of replyReader.reply for the values seeds
// use: nil, int64, string, []any, bool, fakeRedisErr as a top-level
// error, redis.Nil and io.EOF.
func encodeReply(v any, err error) []byte {
	switch {
	case errors.Is(err, redis.Nil):
		return []byte{kindNil}
	case err != nil:
		var re fakeRedisErr
		if errors.As(err, &re) {
			return append([]byte{kindRedisErr, byte(len(redisErrs) - 1)}, encodeString(string(re))...)
		}
		return []byte{kindNetErr, 1}
	}
	return append([]byte{kindValue}, encodeValue(v)...)
}

func encodeValue(v any) []byte {
	switch x := v.(type) {
	case nil:
		return []byte{tagNil}
	case int:
		return encodeValue(int64(x))
	case int64:
		if x >= math.MinInt8 && x <= math.MaxInt8 {
			return []byte{tagSmallInt, byte(int8(x))}
		}
		return binary.BigEndian.AppendUint64([]byte{tagInt}, uint64(x))
	case string:
		return append([]byte{tagString}, encodeString(x)...)
	case bool:
		if x {
			return []byte{tagBool, 1}
		}
		return []byte{tagBool, 0}
	case []any:
		b := []byte{tagArray, byte(len(x))}
		for _, e := range x {
			b = append(b, encodeValue(e)...)
		}
		return b
	}
	panic(fmt.Sprintf("encodeValue: unsupported %T", v))
}

func encodeString(s string) []byte {
	if len(s) >= maxString {
		s = s[:maxString-1]
	}
	return append([]byte{byte(len(s))}, s...)
}

// seedReplies are well-formed and nearly well-formed replies of every
// script, for both fuzzers' seeds.
var seedReplies = [][]byte{
	encodeReply([]any{1, 0, 0, 0, 0, strings.Repeat("a", 40)}, nil),   // acquire: yes
	encodeReply([]any{0, 7, 900, 1, 7, strings.Repeat("b", 40)}, nil), // acquire: held elsewhere
	encodeReply([]any{2, 0, 30000, 1, 0, ""}, nil),                    // acquire: quarantined
	encodeReply([]any{9, 0, 0, 0, 0, ""}, nil),                        // acquire: unknown vote
	encodeReply([]any{1, "x", 0, 0, 0}, nil),                          // acquire: short, bad counter
	encodeReply([]any{1, 0}, nil),                                     // extend: the old array reply, refused
	encodeReply([]any{"rl1:n:id=a", 900, 3, 0, 1}, nil),               // inspect
	encodeReply([]any{0, 1, strings.Repeat("c", 40), 1, 3}, nil),      // probe
	encodeReply(1, nil),  // release, fence, raise: yes
	encodeReply(-1, nil), // fence: counter above
	encodeReply(nil, redis.Nil),
	encodeReply(nil, fakeRedisErr("NOPERM this user has no permissions")),
	encodeReply(nil, io.EOF),
}

func FuzzParseReply(f *testing.F) {
	for _, s := range seedReplies {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &replyReader{b: data}
		res, err := r.reply()

		a := parseAcquire(res, err)
		if (a.vote == voteError) != (a.err != nil) {
			t.Fatalf("parseAcquire(%#v, %v): vote %s with error %v", res, err, a.vote, a.err)
		}
		if err != nil && a.err != err {
			t.Fatalf("parseAcquire lost the node's error %v: %v", err, a.err)
		}
		if a.vote != voteError {
			arr, ok := res.([]any)
			code, isInt := asInt(arr[0])
			if !ok || len(arr) < 6 || !isInt {
				t.Fatalf("parseAcquire(%#v) voted %s", res, a.vote)
			}
			if v, _ := scriptVote(code); v != a.vote {
				t.Fatalf("parseAcquire(%#v): code %d voted %s", res, code, a.vote)
			}
		}

		rel := releaseReply(res, err)
		if yes := err == nil && res == int64(1); yes != (rel.vote == voteYes) {
			t.Fatalf("releaseReply(%#v, %v) = %s", res, err, rel.vote)
		}
		if (rel.vote == voteError) != (rel.err != nil) {
			t.Fatalf("releaseReply(%#v, %v): vote %s with error %v", res, err, rel.vote, rel.err)
		}

		if n, ierr := intReply(res, err); ierr == nil && res != any(n) {
			t.Fatalf("intReply(%#v) = %d", res, n)
		}
		for n := range 7 {
			if arr, aerr := replyArray(res, n); aerr == nil {
				if len(arr) < n {
					t.Fatalf("replyArray(%#v, %d) = %d elements", res, n, len(arr))
				}
				idx := make([]int, n)
				for i := range idx {
					idx[i] = i
				}
				_, _ = asInts(arr, idx...)
				for _, e := range arr {
					_ = asString(e)
				}
			} else if !errors.Is(aerr, errBadReply) {
				t.Fatalf("replyArray: %v does not match errBadReply", aerr)
			}
		}
		if err != nil {
			_ = IsFinal(&QuorumError{Need: 1, Nodes: []NodeResult{{Err: err}}, target: ErrNotAcquired})
		}
	})
}

// The scripts a fake node answers, by the name used for its replies.
var fuzzScripts = []struct {
	name string
	s    *redis.Script
}{
	{"acquire", scripts.Acquire}, {"fence", scripts.Fence}, {"extend", scripts.Extend}, {"release", scripts.Release},
	{"probe", scripts.Probe}, {"raise", scripts.Raise}, {"inspect", scripts.Inspect},
}

// fakeNode is a go-redis hook that answers every command from fixed,
// fuzzed replies (one per script, whatever the order of the calls) and
// never dials.
type fakeNode struct {
	replies    map[string]fuzzReply // by script name
	byHash     map[string]string    // EVALSHA digest -> script name
	bySrc      map[string]string    // EVAL source -> script name
	loadErr    error
	digest     func(src string) string // SCRIPT LOAD's reply; nil: the SHA-1
	config     map[string]string
	configErr  error
	publishErr error
}

// The scripts by EVALSHA digest and by EVAL source, and the SHA-1 of
// every source, computed once: hashing the sources again for every input
// (several kB each, on three nodes) took a seventh of each execution.
var (
	fuzzByHash = sync.OnceValue(func() map[string]string {
		m := map[string]string{}
		for _, s := range fuzzScripts {
			m[s.s.Hash()] = s.name
		}
		return m
	})
	fuzzBySrc = sync.OnceValue(func() map[string]string {
		m := map[string]string{}
		for _, s := range fuzzScripts {
			m[scripts.Source(s.s)] = s.name
		}
		return m
	})
	knownDigests = sync.OnceValue(func() map[string]string {
		m := map[string]string{}
		for _, s := range fuzzScripts {
			m[scripts.Source(s.s)] = s.s.Hash()
		}
		return m
	})
)

type fuzzReply struct {
	res any
	err error
}

var maxmemoryPolicies = []string{"noeviction", "allkeys-lru", "volatile-ttl", ""}

func newFakeNode(r *replyReader) *fakeNode {
	f := &fakeNode{replies: make(map[string]fuzzReply, len(fuzzScripts)), byHash: fuzzByHash(), bySrc: fuzzBySrc()}
	for _, s := range fuzzScripts {
		res, err := r.reply()
		f.replies[s.name] = fuzzReply{res, err}
	}
	flags := r.byte()
	if flags&1 != 0 {
		f.loadErr = fakeRedisErr("NOPERM this user has no permissions to run the 'script|load' command")
	}
	if flags&2 != 0 {
		f.configErr = fakeRedisErr("NOPERM this user has no permissions to run the 'config|get' command")
	}
	if flags&4 != 0 {
		f.publishErr = fakeRedisErr("NOPERM this user has no permissions to access one of the channels used as arguments")
	}
	f.config = map[string]string{"maxmemory-policy": maxmemoryPolicies[int(flags>>3)%len(maxmemoryPolicies)]}
	return f
}

func (f *fakeNode) DialHook(redis.DialHook) redis.DialHook {
	return func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("fuzz: no network")
	}
}

func (f *fakeNode) ProcessHook(redis.ProcessHook) redis.ProcessHook {
	return func(_ context.Context, cmd redis.Cmder) error {
		f.answer(cmd)
		return cmd.Err()
	}
}

func (f *fakeNode) ProcessPipelineHook(redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(_ context.Context, cmds []redis.Cmder) error {
		var first error
		for _, cmd := range cmds {
			f.answer(cmd)
			if first == nil {
				first = cmd.Err()
			}
		}
		return first
	}
}

func (f *fakeNode) answer(cmd redis.Cmder) {
	switch name := cmd.Name(); {
	case name == "evalsha" || name == "eval":
		f.answerScript(cmd)
	case name == "script":
		f.answerLoad(cmd)
	case name == "config":
		f.answerConfig(cmd)
	case name == "publish" || name == "spublish":
		if c, ok := cmd.(*redis.IntCmd); ok && f.publishErr == nil {
			c.SetVal(1)
			return
		}
		cmd.SetErr(f.publishErr)
	default:
		cmd.SetErr(errors.New("fuzz: unexpected command " + name))
	}
}

// answerScript answers EVALSHA or EVAL with the script's reply.
func (f *fakeNode) answerScript(cmd redis.Cmder) {
	src, _ := cmd.Args()[1].(string)
	script, ok := f.byHash[src]
	if cmd.Name() == "eval" {
		script, ok = f.bySrc[src]
	}
	c, isCmd := cmd.(*redis.Cmd)
	if !ok || !isCmd {
		cmd.SetErr(fakeRedisErr("NOSCRIPT No matching script"))
		return
	}
	r := f.replies[script]
	if r.err != nil {
		c.SetErr(r.err)
		return
	}
	c.SetVal(r.res)
}

// answerLoad answers SCRIPT LOAD.
func (f *fakeNode) answerLoad(cmd redis.Cmder) {
	args := cmd.Args()
	// The true digest: go-redis' Script.Load stores the reply as the
	// digest of the package-level script (see TestScriptLoadReply).
	c, ok := cmd.(*redis.StringCmd)
	src, isStr := args[len(args)-1].(string)
	if ok && isStr && f.loadErr == nil {
		digest := sha1Hex
		if f.digest != nil {
			digest = f.digest
		}
		c.SetVal(digest(src))
		return
	}
	cmd.SetErr(f.loadErr)
}

// answerConfig answers CONFIG GET.
func (f *fakeNode) answerConfig(cmd redis.Cmder) {
	switch c := cmd.(type) {
	case *redis.Cmd: // CONFIG GET p1 p2 ..., RESP2 style
		if f.configErr != nil {
			c.SetErr(f.configErr)
			return
		}
		var pairs []any
		for k, v := range f.config {
			if v != "" {
				pairs = append(pairs, k, v)
			}
		}
		c.SetVal(pairs)
	case *redis.MapStringStringCmd:
		if f.configErr != nil {
			c.SetErr(f.configErr)
			return
		}
		c.SetVal(f.config)
	default:
		cmd.SetErr(errors.New("fuzz: unexpected CONFIG command type"))
	}
}

// fuzzNodes is the number of fake nodes of FuzzClientReplies.
const fuzzNodes = 3

// goodReplies are well-formed replies of every script from every node:
// the lock is granted, and "v" is the holder every node reports.
func goodReplies() []byte {
	var good []byte
	for _, r := range []fuzzReply{
		{[]any{1, 1, 0, 0, 0, 0}, nil},  // acquire: granted, counter 1
		{1, nil},                        // fence
		{1, nil},                        // extend
		{1, nil},                        // release
		{[]any{0, 1, "", 0, 0}, nil},    // probe
		{1, nil},                        // raise
		{[]any{"v", 900, 1, 0, 1}, nil}, // inspect
	} {
		good = append(good, encodeReply(r.res, r.err)...)
	}
	good = append(good, 0) // load, config and publish succeed; noeviction
	var all []byte
	for range fuzzNodes {
		all = append(all, good...)
	}
	return all
}

func FuzzClientReplies(f *testing.F) {
	f.Add(goodReplies())
	// Each seed reply in every script's place, from every node.
	for _, s := range seedReplies {
		var b []byte
		for range fuzzNodes {
			for range fuzzScripts {
				b = append(b, s...)
			}
			b = append(b, 0)
		}
		f.Add(b)
	}
	f.Fuzz(clientReplies)
}

// TestFakeNodes checks the fuzz harness itself: well-formed replies grant
// the lock, so the fuzzer reaches every step.
func TestFakeNodes(t *testing.T) {
	ctx := context.Background()
	c, _ := fakeClient(t, goodReplies())
	l, err := c.TryAcquire(ctx, "k", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Extend(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if in, err := c.Inspect(ctx, "k"); err != nil || in.Value != "v" {
		t.Fatalf("Inspect = %+v, %v", in, err)
	}
	if n, err := l.release(ctx); err != nil || n < c.quorum {
		t.Fatalf("Release = %d, %v", n, err)
	}
}

// fakeClient returns a Client over fuzzNodes fake nodes answering from
// data, or nil and New's error; everything is closed on cleanup.
func fakeClient(t *testing.T, data []byte) (*Client, []*fakeNode) {
	r := &replyReader{b: data}
	var nodes []redis.UniversalClient
	var fakes []*fakeNode
	for i := range fuzzNodes {
		fn := newFakeNode(r)
		// IP addresses (TEST-NET-1, never dialed): go-redis resolves host
		// names at NewClient.
		c := redis.NewClient(&redis.Options{Addr: "192.0.2." + strconv.Itoa(i+1) + ":6379", MaxRetries: -1})
		c.AddHook(fn)
		t.Cleanup(func() { _ = c.Close() })
		nodes = append(nodes, c)
		fakes = append(fakes, fn)
	}
	c, err := New(context.Background(), Config{NodeTimeout: 100 * time.Millisecond, Logger: fuzzLogger(t)}, nodes...)
	if err != nil {
		if !errors.Is(err, ErrInvalidArgument) && !errors.Is(err, ErrAccessDenied) {
			t.Fatalf("New: %v matches neither ErrInvalidArgument nor ErrAccessDenied", err)
		}
		return nil, fakes
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, fakes
}

// clientReplies runs New, Bootstrap, TryAcquire, Extend, Release,
// Inspect and Publish over fuzzNodes fake nodes answering from data.
func clientReplies(t *testing.T, data []byte) {
	ctx := context.Background()
	c, fakes := fakeClient(t, data)
	if c == nil {
		return
	}
	_ = c.Bootstrap(ctx)

	l, err := c.TryAcquire(ctx, "k", time.Second, redlockx.ReleaseNotice(notice.Channel("k"), notice.Message{Kind: notice.Released}.Encode()))
	switch {
	case err != nil && !errors.Is(err, ErrNotAcquired):
		t.Fatalf("TryAcquire: %v does not match ErrNotAcquired", err)
	case err == nil:
		checkGranted(t, fakes, c.quorum, l)
		if err := l.Extend(ctx, 0); err != nil && !errors.Is(err, ErrNotExtended) && !errors.Is(err, ErrNotHeld) {
			t.Fatalf("Extend: %v", err)
		}
		if n, err := l.release(ctx); err != nil && !errors.Is(err, ErrNotReleased) && !errors.Is(err, ErrNotHeld) {
			t.Fatalf("Release: %v", err)
		} else if n < 0 || n > fuzzNodes {
			t.Fatalf("Release: %d nodes", n)
		}
	}

	in, err := c.Inspect(ctx, "k")
	switch {
	case err != nil && !errors.Is(err, ErrNoHolder):
		t.Fatalf("Inspect: %v does not match ErrNoHolder", err)
	case in == nil || len(in.Nodes) != fuzzNodes:
		t.Fatalf("Inspect: %+v", in)
	case err == nil && (in.Value == "" || in.Remaining < 0):
		t.Fatalf("Inspect: %+v", in)
	case err == nil:
		held := 0
		for _, fn := range fakes {
			a, _ := fn.replies["inspect"].res.([]any)
			if fn.replies["inspect"].err == nil && len(a) >= 5 && a[0] == any(in.Value) {
				held++
			}
		}
		if held < c.quorum {
			t.Fatalf("Inspect: %q held on %d nodes, reported as the holder", in.Value, held)
		}
	}
	if n, _ := c.Internal().Publish(ctx, "k:notice", "m"); n < 0 || n > fuzzNodes {
		t.Fatalf("Publish: %d nodes", n)
	}
}

// checkGranted fails unless a quorum of nodes said yes to the acquire and
// the fence of lock l.
func checkGranted(t *testing.T, fakes []*fakeNode, quorum int, l *Lock) {
	t.Helper()
	// A node holds the token when it granted it (its acquire reply is
	// the token: the fast path) or granted less and took the write-back
	// (fence replied 1: the slow path). Compared as the client compares
	// them, signed: a garbled negative counter is less, not a huge one.
	yes := 0
	token := int64(l.Token()) // the client hands out only t > 0
	for _, fn := range fakes {
		acq, fence := fn.replies["acquire"], fn.replies["fence"]
		a := parseAcquire(acq.res, acq.err)
		if a.vote != voteYes {
			continue
		}
		switch {
		case a.counter == token:
			yes++
		case a.counter < token && fence.err == nil && fence.res == any(int64(1)):
			yes++
		}
	}
	if yes < quorum {
		t.Fatalf("lock granted (token %d) with %d yes votes, %d needed", l.Token(), yes, quorum)
	}
	if l.Token() == 0 {
		t.Fatal("lock granted with token 0 while fencing is on")
	}
}

func fuzzLogger(t *testing.T) hclog.Logger {
	if testing.Verbose() {
		return testLogger(t)
	}
	return hclog.NewNullLogger()
}

func sha1Hex(src string) string {
	if d, ok := knownDigests()[src]; ok {
		return d
	}
	sum := sha1.Sum([]byte(src))
	return hex.EncodeToString(sum[:])
}

// TestScriptLoadReply: a node that answers SCRIPT LOAD with something else
// than the script's digest (a proxy, a Redis-compatible server, a bad
// reply) must not change the digest that every Client of the process
// sends with EVALSHA. go-redis' Script.Load stores the reply in the
// *redis.Script, and redlock's scripts are package-level variables.
func TestScriptLoadReply(t *testing.T) {
	ctx := context.Background()
	want := map[string]string{}
	for _, s := range fuzzScripts {
		want[s.name] = s.s.Hash()
	}
	t.Cleanup(func() { // leave the scripts as they were for the other tests
		fixed := redis.NewClient(&redis.Options{Addr: "192.0.2.9:6379"})
		defer fixed.Close()
		fixed.AddHook(&fakeNode{})
		for _, s := range fuzzScripts {
			_ = s.s.Load(ctx, fixed)
		}
	})
	fn := newFakeNode(&replyReader{b: goodReplies()})
	fn.digest = func(string) string { return "0000000000000000000000000000000000000000" }
	bogus := redis.NewClient(&redis.Options{Addr: "192.0.2.8:6379", MaxRetries: -1})
	defer bogus.Close()
	bogus.AddHook(fn)
	c, err := New(ctx, Config{Logger: fuzzLogger(t)}, bogus)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, s := range fuzzScripts {
		if got := s.s.Hash(); got != want[s.name] {
			t.Errorf("the %s script's EVALSHA digest is now %q (was %q): one node's SCRIPT LOAD reply changed it for every client", s.name, got, want[s.name])
		}
	}
}
