package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/scripts"
	"github.com/redlease/redlease/internal/testing/redistest"
)

// The differential test keeps the simulated server honest: the same
// generated states and script calls run on a simulated node and on a real
// redis-server (and valkey-server), and every reply is compared, as are
// the keys the calls leave behind. What legitimately differs is pinned by
// relation: run_id and master_replid are replaced by placeholders, server
// times are written relative to each server's own TIME, and values that
// are times or durations in milliseconds are compared within diffSlack.
// Each script call goes, at random, by EVAL or by FCALL of its function in
// the Function library (internal/scripts.LibrarySource), which both sides
// load once: each side's loaded copy has its own incarnation token, written
// <token> (docs/design.md §4.7.5).

// diffSlack bounds how far apart two time-like readings may be: the two
// servers are called one after the other.
const diffSlack = 150

// luaScripts reads the library's scripts as redlock composes them: the
// quarantine prelude goes before every script that uses it.
func luaScripts(t *testing.T) map[string]string {
	dir := filepath.Join("..", "..", "scripts", "lua")
	prelude, err := os.ReadFile(filepath.Join(dir, "quarantine.lua"))
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(dir, "*.lua"))
	require.NoError(t, err)
	out := map[string]string{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".lua")
		if name == "quarantine" || name == "library" {
			continue // preludes, not scripts
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		src := string(b)
		if strings.Contains(src, "redlease_") {
			src = string(prelude) + src
		}
		out[name] = src
	}
	require.Contains(t, out, "acquire")
	return out
}

// side is one server of the comparison.
type side struct {
	c       *redis.Client
	runID   string
	replID  string
	runID48 string // the first 48 bits of run_id, in decimal (acquire's id)
	token   string // the incarnation token of its copy of the library
}

// otherToken is a token of no side's copy (a reloaded library's).
var otherToken = strings.Repeat("f", 40)

// loadLibrary loads the library on sd and starts its copy's token (a probe
// with a nonce), which it reads back.
func (sd *side) loadLibrary(ctx context.Context, t *testing.T) {
	require.NoError(t, sd.c.FunctionLoad(ctx, scripts.LibrarySource).Err())
	require.NoError(t, sd.c.Do(ctx, "fcall", "redlease_"+scripts.Version+"_probe", 1, kMarker, "30000", "1", "0", "", "nonce").Err())
	tok, err := sd.c.HGet(ctx, kMarker, "t:"+scripts.Version).Result()
	require.NoError(t, err)
	require.Len(t, tok, 40)
	sd.token = tok
	require.NoError(t, sd.c.FlushAll(ctx).Err())
}

func (sd *side) now(ctx context.Context, t *testing.T) int64 {
	tm, err := sd.c.Time(ctx).Result()
	require.NoError(t, err)
	return tm.UnixMilli()
}

func newSide(ctx context.Context, t *testing.T, c *redis.Client) *side {
	info, err := c.Info(ctx, "server", "replication").Result()
	require.NoError(t, err)
	sd := &side{c: c, runID: infoValue(info, "run_id"), replID: infoValue(info, "master_replid")}
	require.Len(t, sd.runID, 40)
	require.Len(t, sd.replID, 40)
	n, err := strconv.ParseInt(sd.runID[:12], 16, 64)
	require.NoError(t, err)
	sd.runID48 = strconv.FormatInt(n, 10)
	return sd
}

func infoValue(info, field string) string {
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return v
		}
	}
	return ""
}

func TestDifferentialRedis(t *testing.T) {
	if d := differential(t, "redis-server", nil); len(d) > 0 {
		t.Errorf("the simulated server differs from redis-server:\n%s", strings.Join(d, "\n"))
	}
}

func TestDifferentialValkey(t *testing.T) {
	if d := differential(t, "valkey-server", nil); len(d) > 0 {
		t.Errorf("the simulated server differs from valkey-server:\n%s", strings.Join(d, "\n"))
	}
}

// TestDifferentialControl: a simulated server that runs a slightly wrong
// acquire script (it grants one more than it should) must be caught.
func TestDifferentialControl(t *testing.T) {
	if d := differential(t, "redis-server", mutation("acquire", "c = high + 1", "c = high + 2")); len(d) == 0 {
		t.Errorf("the differential test did not notice a simulated server whose acquire replies a wrong counter")
	}
}

// TestDifferentialControlLibrary: a simulated server whose copy of the
// Function library lets a differing token vote (no quarantine) must be
// caught by the FCALL calls.
func TestDifferentialControlLibrary(t *testing.T) {
	if d := differential(t, "redis-server", mutation("library", "if m[8] ~= tok then", "if false then")); len(d) == 0 {
		t.Errorf("the differential test did not notice a simulated library that lets a differing token vote")
	}
}

// mutation replaces from with to in script's text (a control's wrong
// server); it panics where the text no longer has from.
func mutation(script, from, to string) func(name, src string) string {
	return func(name, src string) string {
		if name != script {
			return src
		}
		if !strings.Contains(src, from) {
			panic("differential control: " + script + " no longer has " + from + "; update the mutation")
		}
		return strings.Replace(src, from, to, 1)
	}
}

// differential runs the comparison and returns the differences found.
func differential(t *testing.T, bin string, mutate func(script, src string) string) []string {
	ctx := context.Background()
	d := &diffRun{bin: bin, sides: diffSides(ctx, t, bin, mutate), scripts: luaScripts(t)}
	d.names = slices.Sorted(func(yield func(string) bool) {
		for n := range d.scripts {
			if !yield(n) {
				return
			}
		}
	})
	checkInfo(ctx, t, d.sides)
	const cases = 1500
	for seed := range uint64(cases) {
		d.runCase(ctx, t, seed)
	}
	logCoverage(t, fmt.Sprintf("%s: %d states, %d script calls, every reply and every key compared: %d differences",
		bin, cases, d.calls, len(d.diffs)), mutate == nil)
	return d.diffs
}

// diffSides are the real server bin and a simulated one (its scripts
// changed by mutate, if set), each with a RESP2 client.
func diffSides(ctx context.Context, t *testing.T, bin string, mutate func(script, src string) string) []*side {
	t.Setenv(redistest.EnvServerBinary, bin)
	real := redistest.Start(t, 1).Server(0).Client(t)
	w := NewWorld(Options{Seed: 7, Mutate: mutate, Variant: fmt.Sprintf("diff-%v", mutate != nil), OnUnknown: func(a []string) { t.Errorf("unknown command %q", a) }})
	w.Listen("sim:6379", w.NewServer("sim"))
	simc := redis.NewClient(&redis.Options{Addr: "sim:6379", Dialer: w.Dialer("diff"), Protocol: 2,
		DisableIdentity: true, MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}})
	t.Cleanup(func() { _ = simc.Close() })
	// The real client speaks RESP2 too, so that replies have one shape.
	realc := redis.NewClient(&redis.Options{Addr: real.Options().Addr, Protocol: 2, DisableIdentity: true})
	t.Cleanup(func() { _ = realc.Close() })
	sides := []*side{newSide(ctx, t, realc), newSide(ctx, t, simc)}
	for _, sd := range sides {
		sd.loadLibrary(ctx, t)
	}
	return sides
}

// diffRun is one comparison: its sides, the scripts, and what it found.
type diffRun struct {
	bin     string
	sides   []*side
	scripts map[string]string
	names   []string // of scripts, sorted
	calls   int
	diffs   []string
}

// caseTries is how often a case that differs is run: a difference counts
// only if every run shows one. A wrong script or simulated command differs
// on every run of its case (the case is a function of its seed); a
// time-like value apart by more than diffSlack because the host stalled
// between the two sides' calls (seen once under load, -race) does not.
const caseTries = 3

// runCase runs the case of seed up to caseTries times, until a run shows
// no difference, and keeps the differences of the last run.
func (d *diffRun) runCase(ctx context.Context, t *testing.T, seed uint64) {
	kept := len(d.diffs)
	for range caseTries {
		d.diffs = d.diffs[:kept]
		d.run(ctx, t, seed)
		if len(d.diffs) == kept {
			return
		}
	}
}

// run compares the sides on the case of seed: a generated state, one to
// three steps (a script call, or now and then a command), then the keys.
func (d *diffRun) run(ctx context.Context, t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 0xd1ff))
	st := genState(r)
	for _, sd := range d.sides {
		require.NoError(t, sd.c.FlushAll(ctx).Err())
		st.apply(ctx, t, sd)
	}
	for step := range 1 + r.IntN(3) {
		if r.IntN(6) == 0 {
			// A command the scripts use, with the options they use and
			// some they do not.
			cmd := genCommand(r)
			if a, b := d.replies(func(c *redis.Client) *redis.Cmd { return c.Do(ctx, cmd...) }, nil); !sameReply(a, b) {
				d.diffs = append(d.diffs, fmt.Sprintf("seed %d step %d: %v on state %s:\n  %s: %s\n  sim: %s",
					seed, step, cmd, st, d.bin, a, b))
			}
			continue
		}
		name := d.names[r.IntN(len(d.names))]
		keys, args := genCall(r, name)
		how := []string{"eval", "fcall"}[r.IntN(2)]
		a, b := d.replies(func(c *redis.Client) *redis.Cmd {
			if how == "fcall" {
				return c.Do(ctx, append([]any{"fcall", "redlease_" + scripts.Version + "_" + name, len(keys)}, append(anys(keys), args...)...)...)
			}
			return c.Eval(ctx, d.scripts[name], keys, args...)
		}, timeInMs(name))
		d.calls++
		if !sameReply(a, b) {
			d.diffs = append(d.diffs, fmt.Sprintf("seed %d step %d: %s %s(%v, %v) on state %s:\n  %s: %s\n  sim: %s",
				seed, step, how, name, keys, args, st, d.bin, a, b))
		}
	}
	var dumps [2]string
	for i, sd := range d.sides {
		dumps[i] = sd.dump(ctx, t)
	}
	if !sameReply(dumps[0], dumps[1]) {
		d.diffs = append(d.diffs, fmt.Sprintf("seed %d: the keys differ after the calls on state %s:\n  %s: %s\n  sim: %s", seed, st, d.bin, dumps[0], dumps[1]))
	}
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// replies runs do on the real side, then on the simulated one, and
// returns their normalized replies (fixed by fix first, when not nil).
func (d *diffRun) replies(do func(c *redis.Client) *redis.Cmd, fix func(any) any) (real, sim string) {
	var out [2]string
	for i, sd := range d.sides {
		res, err := do(sd.c).Result()
		if fix != nil && err == nil {
			res = fix(res)
		}
		out[i] = sd.normalize(res, err)
	}
	return out[0], out[1]
}

// timeInMs is the fix of the replies of script name: extend_many's ends
// with the server's TIME (seconds, microseconds), which becomes one
// number of milliseconds, a time compared within diffSlack.
func timeInMs(name string) func(any) any {
	if name != "extend_many" {
		return nil
	}
	return func(res any) any {
		a, ok := res.([]any)
		if !ok || len(a) < 2 {
			return res
		}
		sec, ok1 := a[len(a)-2].(int64)
		usec, ok2 := a[len(a)-1].(int64)
		if !ok1 || !ok2 {
			return res
		}
		return append(append([]any(nil), a[:len(a)-2]...), sec*1000+usec/1000)
	}
}

// logCoverage logs summary with the script branches reached so far in
// this process, and writes their counts to REDLEASE_SIM_COVERAGE when set
// and write says so (make sim reports the explorer's coverage together
// with this).
func logCoverage(t *testing.T, summary string, write bool) {
	reached, all := 0, 0
	var missed []string
	for _, br := range ScriptCoverage().Branches() {
		all++
		if br.Hits > 0 {
			reached++
		} else {
			missed = append(missed, fmt.Sprintf("%s:%d %s", br.Script, br.Line, br.Text))
		}
	}
	t.Logf("%s; script branches reached so far in this process: %d/%d; not: %s",
		summary, reached, all, strings.Join(missed, "; "))
	if p := os.Getenv("REDLEASE_SIM_COVERAGE"); p != "" && write {
		if err := WriteCounts(p, ScriptCoverage().Branches()); err != nil {
			t.Fatal(err)
		}
	}
}

// state is a generated starting point: the lock key, its fencing counter
// and the node's marker, each present, absent or malformed.
type state struct {
	lock    string // "", "ours", "theirs", "hash"
	lockPX  int64
	fence   string // "", a number, "junk", "hash"
	marker  string // "", "good", "otherrun", "otherrepl", "partial", "string"
	created int64  // ms before now
	ok      string
	b, h    int64
	mx      int64
	layout  string // the marker's cluster layout ('l'), "" for none
	lock2   string // a second lock key (extend_many): "", "ours", "theirs"
	token   string // the marker's token for the library's version: "", "mine" (the side's copy's), "other"
}

func (st state) String() string {
	type plain state // (no String method)
	return fmt.Sprintf("%+v", plain(st))
}

const (
	kLock   = "lk"
	kFence  = "lk:fence"
	kMarker = "{redlease}:marker"
	kLock2  = "lk2"
	kFence2 = "lk2:fence"
	vOurs   = "v-ours"
	vTheirs = "v-theirs"
)

func genState(r *rand.Rand) state {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	st := state{lock: pick("", "ours", "theirs", "hash"), fence: pick("", "0", "3", "17", "-1", "junk", "junk", "017", "9223372036854775807", "hash"),
		marker:  pick("", "good", "good", "good", "otherrun", "otherrepl", "partial", "string"),
		created: r.Int64N(70000), ok: pick("0", "1", "1"), b: r.Int64N(20), h: r.Int64N(25), mx: []int64{30000, 10000}[r.IntN(2)],
		layout: pick("", "", "", "n=3 B=16", "n=3 B=1"), lock2: pick("", "ours", "theirs"), token: pick("", "mine", "mine", "other")}
	if r.IntN(2) == 0 {
		st.lockPX = 1000 + r.Int64N(20000)
	}
	return st
}

func (st state) apply(ctx context.Context, t *testing.T, sd *side) {
	c := sd.c
	switch st.lock {
	case "ours", "theirs":
		v := vOurs
		if st.lock == "theirs" {
			v = vTheirs
		}
		require.NoError(t, c.Set(ctx, kLock, v, time.Duration(st.lockPX)*time.Millisecond).Err())
	case "hash":
		require.NoError(t, c.HSet(ctx, kLock, "f", "v").Err())
	}
	switch st.fence {
	case "":
	case "hash":
		require.NoError(t, c.HSet(ctx, kFence, "f", "v").Err())
	default:
		require.NoError(t, c.Set(ctx, kFence, st.fence, 0).Err())
	}
	now := sd.now(ctx, t)
	created := fmt.Sprint(now - st.created)
	rid, rep := sd.runID, sd.replID
	switch st.marker {
	case "":
	case "string":
		require.NoError(t, c.Set(ctx, kMarker, "x", 0).Err())
	case "partial":
		require.NoError(t, c.HSet(ctx, kMarker, "r", rid, "c", created).Err())
	default:
		if st.marker == "otherrun" {
			rid = strings.Repeat("a", 40)
		}
		if st.marker == "otherrepl" {
			rep = strings.Repeat("b", 40)
		}
		require.NoError(t, c.HSet(ctx, kMarker, "r", rid, "p", rep, "c", created, "ok", st.ok,
			"b", st.b, "h", st.h, "mx", st.mx).Err())
		if st.layout != "" {
			require.NoError(t, c.HSet(ctx, kMarker, "l", st.layout).Err())
		}
	}
	if st.marker != "" && st.marker != "string" && st.token != "" {
		tok := sd.token
		if st.token == "other" {
			tok = otherToken
		}
		require.NoError(t, c.HSet(ctx, kMarker, "t:"+scripts.Version, tok).Err())
	}
	switch st.lock2 {
	case "ours":
		require.NoError(t, c.Set(ctx, kLock2, vOurs, 5*time.Second).Err())
	case "theirs":
		require.NoError(t, c.Set(ctx, kLock2, vTheirs, 5*time.Second).Err())
	}
}

// genCall draws the keys and arguments of a call of a script, following
// each script's contract (its first lines), with values in and out of
// range.
func genCall(r *rand.Rand, name string) ([]string, []any) {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	val := pick(vOurs, vOurs, vTheirs)
	ttl := pick("1000", "5000", "40000")
	mode := pick("1", "1", "0", "2", "3", "4")
	ctr := pick("300000", "300000", "0")
	layout := pick("", "", "", "", "", "n=3 B=16", "n=3 B=1")
	switch name {
	case "acquire":
		return []string{kLock, kFence, kMarker}, []any{val, ttl, "30000", mode, ctr, pick("0", "0", "1"), layout}
	case "extend_many":
		locks := [][2]string{{kLock, kFence}, {kLock2, kFence2}}[:1+r.IntN(2)]
		keys, args := []string{kMarker}, []any{"30000", mode, ctr, pick("1000", "5000", "5000", "40000")}
		for _, k := range locks {
			keys = append(keys, k[0])
			args = append(args, pick(vOurs, vOurs, vTheirs))
		}
		// The counters go with a counter TTL only; now and then a call
		// that breaks the contract (the counters' keys where none belong,
		// or missing), which the script refuses.
		if (ctr != "0") != (r.IntN(20) == 0) {
			for _, k := range locks {
				keys = append(keys, k[1])
			}
		}
		return keys, args
	case "extend":
		// The counter's key and TTL only when its TTL is due; now and
		// then the key with "0", which the script must leave alone.
		if ctr == "0" && r.IntN(4) != 0 {
			return []string{kLock, kMarker}, []any{val, ttl, "30000", mode}
		}
		return []string{kLock, kMarker, kFence}, []any{val, ttl, "30000", mode, ctr}
	case "fence":
		return []string{kLock, kFence, kMarker}, []any{val, fmt.Sprint(r.IntN(25)), pick("300000", "5000")}
	case "settle":
		return []string{kLock, kFence}, []any{val, fmt.Sprint(r.IntN(25))}
	case "restore_many":
		locks := [][2]string{{kLock, kFence}, {kLock2, kFence2}}[:1+r.IntN(2)]
		keys, args := []string{kMarker}, []any{"30000", mode, ttl}
		for _, k := range locks {
			keys = append(keys, k[0], k[1])
			args = append(args, pick(vOurs, vOurs, vTheirs), pick("0", "3", "17", "24"))
		}
		if r.IntN(20) == 0 { // now and then a call that breaks the contract
			keys = keys[:len(keys)-1]
		}
		return keys, args
	case "release":
		return []string{kLock}, []any{val, pick("", "lk:notice"), "gone", pick("0", "1")}
	case "probe":
		return []string{kMarker}, []any{"30000", mode, pick("0", "0", "1"), layout}
	case "raise":
		return []string{kMarker}, []any{pick("0", "created"), fmt.Sprint(r.IntN(30))}
	case "inspect":
		return []string{kLock, kFence, kMarker}, []any{"30000", mode, layout}
	}
	// A script this test does not know yet: call it with the lock's keys.
	return []string{kLock, kFence, kMarker}, []any{val, ttl, "30000", mode}
}

// genCommand draws a SET with GET (the acquire script's vote) or an INCR
// (its grant) on the generated keys, with options in and out of their
// valid combinations.
func genCommand(r *rand.Rand) []any {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	if r.IntN(3) == 0 {
		return []any{"incr", pick(kFence, kFence, kLock, kMarker)}
	}
	cmd := []any{"set", pick(kLock, kLock, kFence, kMarker), pick(vOurs, vTheirs)}
	for _, o := range r.Perm(4)[:r.IntN(5)] {
		switch o {
		case 0:
			cmd = append(cmd, pick("nx", "NX", "xx"))
		case 1:
			cmd = append(cmd, pick("px", "PX"), pick("5000", "1000", "0"))
		case 2:
			cmd = append(cmd, pick("get", "GET"))
		case 3:
			cmd = append(cmd, pick("keepttl", "get"))
		}
	}
	return cmd
}

// normalize renders a reply, with this server's ids as placeholders.
func (sd *side) normalize(res any, err error) string {
	if err != nil {
		var re redis.Error
		if !errors.As(err, &re) {
			return "network error: " + err.Error()
		}
		msg := err.Error()
		first, _, _ := strings.Cut(msg, " ")
		if strings.Contains(msg, "redlease:") {
			// The library's own errors: compare their text up to the
			// server's script location.
			i := strings.Index(msg, "redlease:")
			rest, _, _ := strings.Cut(msg[i:], " script:")
			return "error " + first + " " + rest
		}
		return "error " + first
	}
	s := fmt.Sprintf("%#v", res)
	s = strings.ReplaceAll(s, sd.runID, "<run_id>")
	s = strings.ReplaceAll(s, sd.replID, "<replid>")
	s = strings.ReplaceAll(s, sd.runID48, "<run_id48>")
	return strings.ReplaceAll(s, sd.token, "<token>")
}

// dump renders the keys a case may have left.
func (sd *side) dump(ctx context.Context, t *testing.T) string {
	var b strings.Builder
	for _, k := range []string{kLock, kFence, kMarker, kLock2, kFence2} {
		typ, err := sd.c.Type(ctx, k).Result()
		require.NoError(t, err)
		switch typ {
		case "string":
			v, _ := sd.c.Get(ctx, k).Result()
			fmt.Fprintf(&b, "%s=%q ", k, v)
		case "hash":
			h, _ := sd.c.HGetAll(ctx, k).Result()
			keys := slices.Sorted(func(yield func(string) bool) {
				for f := range h {
					if !yield(f) {
						return
					}
				}
			})
			fmt.Fprintf(&b, "%s={", k)
			for _, f := range keys {
				fmt.Fprintf(&b, "%s:%s ", f, h[f])
			}
			b.WriteString("} ")
		default:
			fmt.Fprintf(&b, "%s:%s ", k, typ)
		}
		pttl, err := sd.c.PTTL(ctx, k).Result()
		require.NoError(t, err)
		fmt.Fprintf(&b, "pttl=%d ", pttl.Milliseconds())
	}
	s := strings.ReplaceAll(b.String(), sd.runID, "<run_id>")
	s = strings.ReplaceAll(s, sd.token, "<token>")
	return strings.ReplaceAll(s, sd.replID, "<replid>")
}

// sameReply compares two rendered replies: equal, or equal but for
// numbers that are times or durations (>= 100: the generated counters and
// tokens stay below) within diffSlack.
func sameReply(a, b string) bool {
	if a == b {
		return true
	}
	ta, tb := tokens(a), tokens(b)
	if len(ta) != len(tb) {
		return false
	}
	for i := range ta {
		if ta[i] == tb[i] {
			continue
		}
		var x, y int64
		if _, err := fmt.Sscan(ta[i], &x); err != nil {
			return false
		}
		if _, err := fmt.Sscan(tb[i], &y); err != nil {
			return false
		}
		if x < 100 && y < 100 || x-y > diffSlack || y-x > diffSlack {
			return false
		}
	}
	return true
}

// tokens splits a rendering into runs of digits and everything else.
func tokens(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		j := i
		digit := s[i] >= '0' && s[i] <= '9'
		for j < len(s) && (s[j] >= '0' && s[j] <= '9') == digit {
			j++
		}
		out = append(out, s[i:j])
		i = j
	}
	return out
}

// checkInfo compares the shape of INFO: the sections each form returns and
// the fields the scripts read.
func checkInfo(ctx context.Context, t *testing.T, sides []*side) {
	for _, args := range [][]string{{"server"}, {"replication"}, {"server", "replication"}, {"SERVER"}, {}} {
		var heads [2][]string
		for i, sd := range sides {
			info, err := sd.c.Info(ctx, args...).Result()
			require.NoError(t, err)
			for _, l := range strings.Split(info, "\r\n") {
				if strings.HasPrefix(l, "# ") {
					heads[i] = append(heads[i], l)
				}
			}
			for _, f := range []string{"run_id", "master_replid", "role"} {
				if len(args) > 0 && (slices.Contains(args, "server") && f == "run_id" || slices.Contains(args, "replication") && f != "run_id") {
					require.NotEmpty(t, infoValue(info, f), "INFO %v on side %d lacks %s", args, i, f)
				}
			}
		}
		if len(args) == 0 {
			for _, h := range heads[1] {
				require.Contains(t, heads[0], h, "INFO (default): the simulated server has a section the real one lacks")
			}
			continue
		}
		require.Equal(t, heads[0], heads[1], "INFO %v: sections", args)
	}
}
