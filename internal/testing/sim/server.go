package sim

import (
	"bufio"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Server is one simulated redis-server process: a keyspace, a script
// engine, and the facts the library's safety checks read (TIME from the
// server's own clock, run_id, the replication ID, role). Commands run one
// at a time, as on a real server. A Server is reached through the [World]
// that made it.
type Server struct {
	w    *World
	name string

	mu      sync.Mutex
	up      bool
	gen     int // incarnation: bumped by every crash
	pid     int
	runID   string
	replID  string
	replID2 string
	offset  int64 // master_repl_offset
	master  *Server
	reps    []*Server
	db      map[string]*entry
	scripts map[string]*proto   // sha1 -> compiled script (SCRIPT LOAD, EVAL)
	libs    map[string]*library // name -> its loaded copy (FUNCTION LOAD; library.go)
	L       *luaState           // while the server has run a script; pooled
	clk     serverClock
	paused  chan struct{} // non-nil while paused: closed by Resume
	slow    time.Duration // every request waits this long before it runs
	sess    map[*session]bool
	subs    map[string]map[*session]bool // channel -> subscribers (PUBLISH and SPUBLISH)
	dirty   []string                     // keys written by the command running (replication)
	flushed bool                         // the command running flushed the keyspace
	now     int64                        // ms on the server clock, frozen for one command
	script  *scriptRun                   // the script running, if any
	lag     time.Duration                // replica: how late the master's writes arrive
	pending []replBatch                  // replica: writes not applied yet
	started time.Time
	lie     Lie
}

// Lie makes a server report something false (a control that disables a
// check without touching library code).
type Lie struct {
	// FixedReplID: master_replid never changes (as if the server did not
	// report replication state): disables the failback check.
	FixedReplID bool
	// DenyScriptInfo: INFO inside a script fails as an ACL refuses it.
	DenyScriptInfo bool
	// OneInfoSection: INFO takes at most one section, as before Redis 7.
	OneInfoSection bool
}

type entry struct {
	str  string
	hash map[string]string // non-nil: a hash
	exp  int64             // expiry on the server clock, ms; 0: none
}

func (e *entry) clone() *entry {
	c := *e
	if e.hash != nil {
		c.hash = make(map[string]string, len(e.hash))
		for k, v := range e.hash {
			c.hash[k] = v
		}
	}
	return &c
}

// serverClock is a server's wall clock: the virtual time plus an offset,
// running at 1+rate times the virtual rate since 'since'.
type serverClock struct {
	offset time.Duration
	rate   float64
	since  time.Time
}

func (c *serverClock) at(t time.Time) time.Time {
	d := c.offset
	if c.rate != 0 {
		d += time.Duration(float64(t.Sub(c.since)) * c.rate)
	}
	return t.Add(d)
}

// nowTime is the server's wall clock now.
func (s *Server) nowTime() time.Time { return s.clk.at(time.Now()) }

func (s *Server) nowMs() int64 { return s.nowTime().UnixMilli() }

func hex40(r *rand.Rand) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 40)
	for i := range b {
		b[i] = digits[r.IntN(16)]
	}
	return string(b)
}

// session is one client connection to a server.
type session struct {
	s      *Server
	conn   *Conn
	client string // the client (world-level name) that dialed
	gen    int
	subs   map[string]bool
	ssubs  map[string]bool
	mu     sync.Mutex // serialises writes of replies and pushes
}

func (ss *session) write(b []byte) {
	ss.mu.Lock()
	_, _ = ss.conn.Write(b)
	ss.mu.Unlock()
}

// serve runs one connection: read a request, wait for the faults that
// hold it (pause, partition, slowness), run it, send the reply.
func (s *Server) serve(ss *session) {
	defer ss.conn.Close()
	defer s.dropSession(ss)
	r := bufio.NewReaderSize(ss.conn, 1024) // (requests are small; ReadString collects longer lines)
	var out []byte
	for {
		args, err := readCommand(r)
		if err != nil {
			return
		}
		if len(args) == 0 {
			continue
		}
		// The handshake (HELLO) is never held by a pause or a partition:
		// go-redis reads its reply holding a PubSub's mutex, and a
		// goroutine waiting for a mutex stops virtual time (a fidelity
		// gap: a real pause would hold it until the read timeout).
		handshake := strings.EqualFold(args[0], "hello")
		if !handshake && !s.w.hold(s, ss, true) {
			return
		}
		reply, dup := s.exec(ss, args)
		if reply == errGone {
			return
		}
		if dup > 0 {
			// A duplicate delivery: the same request again, later (a
			// client's retry whose first copy was only delayed).
			a := slices.Clone(args)
			time.AfterFunc(dup, func() {
				if s.w.hold(s, ss, false) {
					s.exec(ss, a)
				}
			})
		}
		if !handshake && !s.w.hold(s, ss, false) {
			return
		}
		if !handshake && s.w.dropReply(s, ss) {
			return // the reply is lost with the connection; a client may retry
		}
		out = appendReply(out[:0], reply)
		ss.write(out)
	}
}

var errGone = Error("sim: server gone")

func (s *Server) dropSession(ss *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sess, ss)
	for ch := range ss.subs {
		delete(s.subs[ch], ss)
	}
	for ch := range ss.ssubs {
		delete(s.subs["s:"+ch], ss)
	}
}

// exec runs one command; dup > 0 asks for a duplicate delivery later.
func (s *Server) exec(ss *session, args []string) (reply any, dup time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.up || ss.gen != s.gen {
		return errGone, 0
	}
	s.now = s.nowMs()
	s.dirty, s.flushed = s.dirty[:0], false
	name := strings.ToLower(args[0])
	s.w.countCommand(name)
	if len(ss.subs)+len(ss.ssubs) > 0 && !subscribeAllowed[name] {
		return Error(fmt.Sprintf("ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context", name)), 0
	}
	reply = s.command(ss, name, args)
	if isScriptCmd(name) {
		dup = s.w.duplicate(s, ss)
	}
	s.replicate()
	return reply, dup
}

var subscribeAllowed = map[string]bool{"subscribe": true, "unsubscribe": true, "ssubscribe": true,
	"sunsubscribe": true, "psubscribe": true, "punsubscribe": true, "ping": true, "quit": true, "reset": true}

func isScriptCmd(name string) bool { return name == "evalsha" || name == "eval" || name == "fcall" }

// lookup returns the live entry of key, deleting it if it expired.
func (s *Server) lookup(key string) *entry {
	e := s.db[key]
	if e == nil {
		return nil
	}
	if e.exp != 0 && e.exp <= s.now {
		if s.master != nil {
			return nil // a replica waits for its master's DEL, but reads it as gone
		}
		delete(s.db, key)
		s.touch(key)
		return nil
	}
	return e
}

func (s *Server) touch(key string) { s.dirty = append(s.dirty, key) }

// writable reports the READONLY error of a replica.
func (s *Server) writable() error {
	if s.master != nil {
		return Error("READONLY You can't write against a read only replica.")
	}
	return nil
}

func wrongArgs(name string) Error {
	return Error(fmt.Sprintf("ERR wrong number of arguments for '%s' command", name))
}

var (
	errWrongType = Error("WRONGTYPE Operation against a key holding the wrong kind of value")
	errNotInt    = Error("ERR value is not an integer or out of range")
	errSyntax    = Error("ERR syntax error")
)

// command dispatches one command (from a client or from a script).
func (s *Server) command(ss *session, name string, args []string) any {
	if out, ok := s.connCommand(ss, name, args); ok {
		return out
	}
	if out, ok := s.keyCommand(name, args); ok {
		return out
	}
	if out, ok := s.hashCommand(name, args); ok {
		return out
	}
	if out, ok := s.messageCommand(ss, name, args); ok {
		return out
	}
	s.w.unknownCommand(args)
	var b strings.Builder
	for _, a := range args[1:] {
		fmt.Fprintf(&b, "'%s' ", a)
	}
	return Error(fmt.Sprintf("ERR unknown command '%s', with args beginning with: %s", args[0], b.String()))
}

// connCommand runs a command about the connection or the server (PING,
// HELLO, CONFIG, INFO, TIME, ...); false if name is not one.
func (s *Server) connCommand(ss *session, name string, args []string) (any, bool) {
	switch name {
	case "ping":
		return s.ping(ss, args), true
	case "echo":
		if len(args) != 2 {
			return wrongArgs(name), true
		}
		return args[1], true
	case "hello":
		return s.hello(args), true
	case "client":
		return s.client(args), true
	case "select":
		return s.selectDB(args), true
	case "config":
		return s.config(args), true
	case "info":
		return s.infoCommand(args), true
	case "time":
		if len(args) != 1 {
			return wrongArgs(name), true
		}
		t := s.nowTime()
		return []any{strconv.FormatInt(t.Unix(), 10), strconv.FormatInt(int64(t.Nanosecond()/1000), 10)}, true
	case "role":
		return s.role(), true
	case "quit":
		return Status("OK"), true
	}
	return nil, false
}

// ping is PING, which a subscribed connection answers as a message.
func (s *Server) ping(ss *session, args []string) any {
	if ss != nil && len(ss.subs)+len(ss.ssubs) > 0 {
		msg := ""
		if len(args) > 1 {
			msg = args[1]
		}
		return []any{"pong", msg}
	}
	if len(args) > 1 {
		return args[1]
	}
	return Status("PONG")
}

// selectDB is SELECT: only database 0 exists.
func (s *Server) selectDB(args []string) any {
	if len(args) != 2 {
		return wrongArgs("select")
	}
	if args[1] != "0" {
		return Error("ERR DB index is out of range")
	}
	return Status("OK")
}

// infoCommand is INFO, with the lies that refuse it.
func (s *Server) infoCommand(args []string) any {
	if s.script != nil && s.lie.DenyScriptInfo {
		return Error("NOPERM this user has no permissions to run the 'info' command")
	}
	if s.lie.OneInfoSection && len(args) > 2 {
		return errSyntax
	}
	return s.info(args[1:])
}

// keyCommand runs a command on string keys or on any key (GET, SET, DEL,
// PTTL, ...); false if name is not one.
func (s *Server) keyCommand(name string, args []string) (any, bool) {
	switch name {
	case "dbsize":
		return s.count(keysOf(s.db)), true
	case "flushall", "flushdb":
		if err := s.writable(); err != nil {
			return err, true
		}
		s.flushAll()
		return Status("OK"), true
	case "get":
		return s.get(args), true
	case "mget":
		return s.mget(args), true
	case "set":
		return s.set(args), true
	case "incr":
		return s.incr(args), true
	case "del", "unlink":
		return s.del(name, args), true
	case "type":
		return s.typeOf(args), true
	case "exists":
		if len(args) < 2 {
			return wrongArgs(name), true
		}
		return s.count(args[1:]), true
	case "pexpire", "expire", "pexpireat":
		return s.expire(name, args), true
	case "pttl", "ttl":
		return s.pttl(name, args), true
	}
	return nil, false
}

// keysOf lists db's keys, live or expired.
func keysOf(db map[string]*entry) []string {
	keys := make([]string, 0, len(db))
	for k := range db {
		keys = append(keys, k)
	}
	return keys
}

// count is how many of keys exist (a key given twice counts twice).
func (s *Server) count(keys []string) int64 {
	n := int64(0)
	for _, k := range keys {
		if s.lookup(k) != nil {
			n++
		}
	}
	return n
}

// get is GET.
func (s *Server) get(args []string) any {
	if len(args) != 2 {
		return wrongArgs("get")
	}
	e := s.lookup(args[1])
	switch {
	case e == nil:
		return nil
	case e.hash != nil:
		return errWrongType
	}
	return e.str
}

// mget is MGET: a key that is missing or holds a hash reads as nil (no
// error).
func (s *Server) mget(args []string) any {
	if len(args) < 2 {
		return wrongArgs("mget")
	}
	out := make([]any, len(args)-1)
	for i, k := range args[1:] {
		if e := s.lookup(k); e != nil && e.hash == nil {
			out[i] = e.str
		}
	}
	return out
}

// del is DEL or UNLINK.
func (s *Server) del(name string, args []string) any {
	if len(args) < 2 {
		return wrongArgs(name)
	}
	if err := s.writable(); err != nil {
		return err
	}
	n := int64(0)
	for _, k := range args[1:] {
		if s.lookup(k) != nil {
			delete(s.db, k)
			s.touch(k)
			n++
		}
	}
	return n
}

// typeOf is TYPE.
func (s *Server) typeOf(args []string) any {
	if len(args) != 2 {
		return wrongArgs("type")
	}
	switch e := s.lookup(args[1]); {
	case e == nil:
		return Status("none")
	case e.hash != nil:
		return Status("hash")
	}
	return Status("string")
}

// pttl is PTTL or TTL.
func (s *Server) pttl(name string, args []string) any {
	if len(args) != 2 {
		return wrongArgs(name)
	}
	e := s.lookup(args[1])
	switch {
	case e == nil:
		return int64(-2)
	case e.exp == 0:
		return int64(-1)
	case name == "ttl":
		return (e.exp - s.now + 500) / 1000
	}
	return e.exp - s.now
}

// hashCommand runs a command on hashes (HGET, HMGET, HGETALL, HSET);
// false if name is not one.
func (s *Server) hashCommand(name string, args []string) (any, bool) {
	switch name {
	case "hget":
		return s.hget(args), true
	case "hmget":
		return s.hmget(args), true
	case "hgetall":
		return s.hgetall(args), true
	case "hset":
		return s.hset(args), true
	}
	return nil, false
}

// hget is HGET.
func (s *Server) hget(args []string) any {
	if len(args) != 3 {
		return wrongArgs("hget")
	}
	e := s.lookup(args[1])
	switch {
	case e == nil:
		return nil
	case e.hash == nil:
		return errWrongType
	}
	if v, ok := e.hash[args[2]]; ok {
		return v
	}
	return nil
}

// hmget is HMGET.
func (s *Server) hmget(args []string) any {
	if len(args) < 3 {
		return wrongArgs("hmget")
	}
	e := s.lookup(args[1])
	if e != nil && e.hash == nil {
		return errWrongType
	}
	out := make([]any, len(args)-2)
	for i, f := range args[2:] {
		if e != nil {
			if v, ok := e.hash[f]; ok {
				out[i] = v
			}
		}
	}
	return out
}

// hgetall is HGETALL, its fields sorted.
func (s *Server) hgetall(args []string) any {
	if len(args) != 2 {
		return wrongArgs("hgetall")
	}
	e := s.lookup(args[1])
	switch {
	case e == nil:
		return []any{}
	case e.hash == nil:
		return errWrongType
	}
	keys := make([]string, 0, len(e.hash))
	for k := range e.hash {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]any, 0, 2*len(keys))
	for _, k := range keys {
		out = append(out, k, e.hash[k])
	}
	return out
}

// hset is HSET.
func (s *Server) hset(args []string) any {
	if len(args) < 4 || len(args)%2 != 0 {
		return wrongArgs("hset")
	}
	if err := s.writable(); err != nil {
		return err
	}
	e := s.lookup(args[1])
	if e != nil && e.hash == nil {
		return errWrongType
	}
	if e == nil {
		e = &entry{hash: map[string]string{}}
		s.db[args[1]] = e
	}
	n := int64(0)
	for i := 2; i < len(args); i += 2 {
		if _, ok := e.hash[args[i]]; !ok {
			n++
		}
		e.hash[args[i]] = args[i+1]
	}
	s.touch(args[1])
	return n
}

// messageCommand runs Pub/Sub and scripting commands; false if name is
// not one.
func (s *Server) messageCommand(ss *session, name string, args []string) (any, bool) {
	switch name {
	case "publish", "spublish":
		if len(args) != 3 {
			return wrongArgs(name), true
		}
		return s.publish(name == "spublish", args[1], args[2]), true
	case "subscribe", "ssubscribe", "unsubscribe", "sunsubscribe", "psubscribe", "punsubscribe":
		if ss == nil {
			return Error("ERR This Redis command is not allowed from script"), true
		}
		return s.subscribe(ss, name, args[1:]), true
	case "eval", "evalsha":
		if s.script != nil {
			return Error("ERR This Redis command is not allowed from script"), true
		}
		return s.eval(name, args), true
	case "script":
		return s.scriptCmd(args), true
	case "function":
		return s.functionCmd(args), true
	case "fcall":
		if s.script != nil {
			return Error("ERR This Redis command is not allowed from script"), true
		}
		return s.fcall(args), true
	}
	return nil, false
}

// setOpts are SET's options.
type setOpts struct {
	nx, xx, keep, get bool
	exp               int64 // the deadline (PX or EX), 0 if none
}

// setOptions parses SET's options (after key and value); the error reply
// where they are not valid.
func (s *Server) setOptions(args []string) (setOpts, any) {
	var o setOpts
	for i := 0; i < len(args); i++ {
		switch opt := strings.ToLower(args[i]); opt {
		case "get":
			o.get = true
		case "nx":
			o.nx = true
		case "xx":
			o.xx = true
		case "keepttl":
			o.keep = true
		case "px", "ex":
			if i+1 >= len(args) || o.exp != 0 {
				return o, errSyntax
			}
			i++
			n, err := strconv.ParseInt(args[i], 10, 64)
			if err != nil {
				return o, errNotInt
			}
			if n <= 0 {
				return o, Error("ERR invalid expire time in 'set' command")
			}
			if opt == "ex" {
				n *= 1000
			}
			o.exp = s.now + n
		default:
			return o, errSyntax
		}
	}
	if (o.nx && o.xx) || (o.keep && o.exp != 0) {
		return o, errSyntax
	}
	return o, nil
}

func (s *Server) set(args []string) any {
	if len(args) < 3 {
		return wrongArgs("set")
	}
	o, bad := s.setOptions(args[3:])
	if bad != nil {
		return bad
	}
	nx, xx, keep, get, exp := o.nx, o.xx, o.keep, o.get, o.exp
	if err := s.writable(); err != nil {
		return err
	}
	old := s.lookup(args[1])
	// GET (with NX or XX too, since Redis 7.0): the reply is the old
	// value, or nil, whether or not the key was set; a key of another
	// type is refused before anything is set.
	var prev any
	if get {
		if old != nil && old.hash != nil {
			return errWrongType
		}
		if old != nil {
			prev = old.str
		}
	}
	if (nx && old != nil) || (xx && old == nil) {
		return prev
	}
	if old == nil && s.script != nil && (s.script.name == "extend" || s.script.name == "extend_many") {
		s.w.violation(fmt.Sprintf("S4: %s: an extend script re-created key %q (value %q)", s.name, args[1], args[2]))
	}
	e := &entry{str: args[2], exp: exp}
	if keep && old != nil {
		e.exp = old.exp
	}
	s.db[args[1]] = e
	s.touch(args[1])
	if get {
		return prev
	}
	return Status("OK")
}

// incr is INCR: the value plus one in place (its TTL kept), or 1 for a
// missing key (no TTL); a value that is not a 64-bit decimal integer as
// Redis writes one is refused.
func (s *Server) incr(args []string) any {
	if len(args) != 2 {
		return wrongArgs("incr")
	}
	if err := s.writable(); err != nil {
		return err
	}
	e := s.lookup(args[1])
	if e != nil && e.hash != nil {
		return errWrongType
	}
	n := int64(0)
	if e != nil {
		var ok bool
		if n, ok = redisInt(e.str); !ok {
			return errNotInt
		}
		if n == math.MaxInt64 {
			return Error("ERR increment or decrement would overflow")
		}
	} else {
		e = &entry{}
		s.db[args[1]] = e
	}
	n++
	e.str = strconv.FormatInt(n, 10)
	s.touch(args[1])
	return n
}

// redisInt parses s as Redis' string2ll does: an optional minus sign and
// decimal digits with no leading zero (or "0" alone), within int64.
func redisInt(s string) (int64, bool) {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || len(s) > 20 || digits[0] == '0' && (len(digits) > 1 || len(s) > 1) {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func (s *Server) expire(name string, args []string) any {
	if len(args) != 3 {
		return wrongArgs(name)
	}
	n, err := strconv.ParseInt(args[2], 10, 64)
	if err != nil {
		return errNotInt
	}
	switch name {
	case "expire":
		n *= 1000
	case "pexpireat":
		n -= s.now // an absolute time in ms; a past one deletes, as in Redis
	}
	if err := s.writable(); err != nil {
		return err
	}
	e := s.lookup(args[1])
	if e == nil {
		return int64(0)
	}
	if n <= 0 {
		delete(s.db, args[1])
	} else {
		e.exp = s.now + n
	}
	s.touch(args[1])
	return int64(1)
}

func (s *Server) flushAll() {
	s.db = map[string]*entry{}
	s.flushed = true
}

func (s *Server) publish(shard bool, ch, msg string) any {
	kind, key := "message", ch
	if shard {
		kind, key = "smessage", "s:"+ch
	}
	b := appendReply(nil, []any{kind, ch, msg})
	n := int64(0)
	for ss := range s.subs[key] {
		go s.push(ss, b)
		n++
	}
	return n
}

// noticeHop is how long a PUBLISH takes to reach a subscriber. It is not
// zero because nothing on a real network is: a notice delivered in the
// same virtual instant as the PUBLISH let a standby start its term in the
// instant its predecessor last believed it led (before its stepdown and
// release in execution order), which the tenure checker, working from
// instants, cannot order (C1 "overlap 0.000ms", 2026-11-28).
const noticeHop = time.Millisecond

// push delivers a published message to a subscriber after noticeHop, held
// by a pause or a partition as a reply is, and dropped with a connection
// that is gone.
func (s *Server) push(ss *session, b []byte) {
	time.Sleep(noticeHop)
	if s.w.hold(s, ss, false) {
		ss.write(b)
	}
}

func (s *Server) subscribe(ss *session, name string, chans []string) any {
	var out []byte
	set, prefix, kind := &ss.subs, "", name
	if name == "ssubscribe" || name == "sunsubscribe" { // (not "subscribe")
		set, prefix = &ss.ssubs, "s:"
	}
	if *set == nil {
		*set = map[string]bool{}
	}
	count := func() int64 { return int64(len(ss.subs) + len(ss.ssubs)) }
	switch name {
	case "subscribe", "ssubscribe", "psubscribe":
		if len(chans) == 0 {
			return wrongArgs(name)
		}
		for _, ch := range chans {
			if !(*set)[ch] {
				(*set)[ch] = true
				if s.subs[prefix+ch] == nil {
					s.subs[prefix+ch] = map[*session]bool{}
				}
				s.subs[prefix+ch][ss] = true
			}
			out = appendReply(out, []any{kind, ch, count()})
		}
	default:
		if len(chans) == 0 {
			for ch := range *set {
				chans = append(chans, ch)
			}
			slices.Sort(chans)
			if len(chans) == 0 {
				out = appendReply(out, []any{kind, nil, count()})
			}
		}
		for _, ch := range chans {
			delete(*set, ch)
			delete(s.subs[prefix+ch], ss)
			out = appendReply(out, []any{kind, ch, count()})
		}
	}
	return rawReply(out)
}

// rawReply is a reply already encoded (several pushes of one SUBSCRIBE).
type rawReply []byte

func (s *Server) hello(args []string) any {
	if len(args) > 1 {
		switch args[1] {
		case "2":
		case "3":
			// A real server speaks RESP3; this one answers like a server
			// that does not, which go-redis accepts (it falls back to RESP2).
			return Error("NOPROTO unsupported protocol version")
		default:
			return Error("NOPROTO unsupported protocol version")
		}
	}
	return []any{"server", "redis", "version", "7.0.15", "proto", int64(2), "id", int64(1),
		"mode", "standalone", "role", s.roleName(), "modules", []any{}}
}

func (s *Server) client(args []string) any {
	if len(args) < 2 {
		return wrongArgs("client")
	}
	switch strings.ToLower(args[1]) {
	case "setinfo", "setname":
		return Status("OK")
	case "id":
		return int64(1)
	case "getname":
		return nil
	}
	s.w.unknownCommand(args)
	return Error(fmt.Sprintf("ERR unknown subcommand '%s'. Try CLIENT HELP.", args[1]))
}

// simConfig is what CONFIG GET reports.
var simConfig = map[string]string{
	"maxmemory-policy":              "noeviction",
	"appendonly":                    "no",
	"appendfsync":                   "everysec",
	"cluster-require-full-coverage": "yes",
	"maxmemory":                     "0",
}

func (s *Server) config(args []string) any {
	if len(args) < 2 {
		return wrongArgs("config")
	}
	if strings.ToLower(args[1]) != "get" {
		s.w.unknownCommand(args)
		return Error(fmt.Sprintf("ERR unknown subcommand '%s'. Try CONFIG HELP.", args[1]))
	}
	if len(args) < 3 {
		return wrongArgs("config|get")
	}
	var names []string
	for _, p := range args[2:] {
		if _, ok := simConfig[p]; ok && !slices.Contains(names, p) {
			names = append(names, p)
		}
	}
	out := make([]any, 0, 2*len(names))
	for _, n := range names {
		out = append(out, n, simConfig[n])
	}
	return out
}

func (s *Server) roleName() string {
	if s.master != nil {
		return "replica"
	}
	return "master"
}

func (s *Server) role() any {
	if s.master != nil {
		return []any{"slave", s.master.name, int64(6379), "connected", s.offset}
	}
	reps := []any{}
	for _, r := range s.reps {
		reps = append(reps, []any{r.name, "6379", strconv.FormatInt(s.offset, 10)})
	}
	return []any{"master", s.offset, reps}
}

func (s *Server) scriptCmd(args []string) any {
	if len(args) < 2 {
		return wrongArgs("script")
	}
	switch strings.ToLower(args[1]) {
	case "load":
		if len(args) != 3 {
			return wrongArgs("script|load")
		}
		p, err := s.w.engine.compile(args[2], s.w)
		if err != nil {
			return err
		}
		s.scripts[p.sha] = p
		return p.sha
	case "exists":
		out := make([]any, 0, len(args)-2)
		for _, sha := range args[2:] {
			if _, ok := s.scripts[strings.ToLower(sha)]; ok {
				out = append(out, int64(1))
			} else {
				out = append(out, int64(0))
			}
		}
		return out
	case "flush":
		s.scripts = map[string]*proto{}
		return Status("OK")
	}
	s.w.unknownCommand(args)
	return Error(fmt.Sprintf("ERR unknown subcommand '%s'. Try SCRIPT HELP.", args[1]))
}
