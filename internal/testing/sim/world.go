package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// World is a set of simulated servers, the addresses clients dial, and the
// links between clients and addresses, with the faults of each. Under
// testing/synctest every wait in it is on a channel or a timer, so the
// world runs in virtual time. All methods are safe for concurrent use.
type World struct {
	opts    Options
	variant string
	engine  *engine

	mu      sync.Mutex
	rnd     *rand.Rand
	servers []*Server
	addrs   map[string]*Server // address -> the server behind it now
	links   map[link]*linkState
	stats   Stats
	pid     int
}

// Options configure a World.
type Options struct {
	// Seed seeds the world's own choices (run_ids, replication IDs).
	Seed uint64
	// Mutate, when set, rewrites the text of every script before it is
	// compiled (a control that breaks a script on purpose); Variant names
	// the mutation (compiled scripts are cached per variant).
	Mutate  func(script, src string) string
	Variant string
	// Lie makes every server report something false.
	Lie Lie
	// Log, when set, receives a line for every script a server runs: the
	// server, the script's name, its arguments and its reply.
	Log func(line string)
	// OnUnknown is called with every command the servers do not know.
	OnUnknown func(args []string)
}

// Stats counts what a world saw.
type Stats struct {
	Commands map[string]int64
	Scripts  map[string]int64
	Faults   map[string]int64
	Unknown  []string
	// Violations are what the servers saw that must never happen (S4 of
	// docs/design.md: an extend that re-created a key).
	Violations []string
}

type link struct{ client, addr string }

type linkState struct {
	cut        chan struct{} // non-nil while partitioned; closed by Heal
	dropReply  int           // replies to lose (the connection is closed instead)
	dupDelay   time.Duration // deliver the next script twice, the copy this much later
	dupPending int
}

// NewWorld returns an empty world.
func NewWorld(o Options) *World {
	return &World{opts: o, variant: o.Variant, engine: sharedEngine,
		rnd:   rand.New(rand.NewPCG(o.Seed, 0x5eed)),
		addrs: map[string]*Server{}, links: map[link]*linkState{},
		stats: Stats{Commands: map[string]int64{}, Scripts: map[string]int64{}, Faults: map[string]int64{}}}
}

// Stats returns a copy of the world's counters.
func (w *World) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := Stats{Commands: map[string]int64{}, Scripts: map[string]int64{}, Faults: map[string]int64{},
		Unknown: slices.Clone(w.stats.Unknown), Violations: slices.Clone(w.stats.Violations)}
	for k, v := range w.stats.Commands {
		s.Commands[k] = v
	}
	for k, v := range w.stats.Scripts {
		s.Scripts[k] = v
	}
	for k, v := range w.stats.Faults {
		s.Faults[k] = v
	}
	return s
}

func (w *World) countCommand(name string) { w.count(w.stats.Commands, name) }

func (w *World) countScript(name string) { w.count(w.stats.Scripts, name) }

// Fault counts one fault of a kind (the explorer's report).
func (w *World) Fault(kind string) { w.count(w.stats.Faults, kind) }

// count adds one to m[k] under the world's lock (m is one of w.stats').
func (w *World) count(m map[string]int64, k string) {
	w.mu.Lock()
	m[k]++
	w.mu.Unlock()
}

func (w *World) violation(v string) {
	w.mu.Lock()
	w.stats.Violations = append(w.stats.Violations, v)
	w.mu.Unlock()
}

func (w *World) unknownCommand(args []string) {
	w.mu.Lock()
	w.stats.Unknown = append(w.stats.Unknown, strings.Join(args, " "))
	f := w.opts.OnUnknown
	w.mu.Unlock()
	if f != nil {
		f(args)
	}
}

// Close ends the world: its servers give back their script engines. The
// world must not be used afterwards.
func (w *World) Close() {
	w.mu.Lock()
	servers := slices.Clone(w.servers)
	w.mu.Unlock()
	for _, s := range servers {
		s.mu.Lock()
		s.releaseLua()
		s.mu.Unlock()
	}
}

// NewServer starts a server process named name (not reachable until an
// address routes to it; see [World.Route] and [World.Listen]).
func (w *World) NewServer(name string) *Server {
	s := &Server{w: w, name: name}
	w.mu.Lock()
	w.servers = append(w.servers, s)
	w.mu.Unlock()
	s.mu.Lock()
	s.start(nil)
	s.lie = w.opts.Lie
	s.mu.Unlock()
	return s
}

// start begins a new incarnation (s.mu held): a new run_id and pid, the
// data and replication ID of snap, or empty with a new replication ID.
func (s *Server) start(snap *Snapshot) {
	w := s.w
	w.mu.Lock()
	w.pid++
	s.pid = 1000 + w.pid
	s.runID = hex40(w.rnd)
	s.replID = hex40(w.rnd)
	w.mu.Unlock()
	s.up = true
	s.gen++
	s.replID2 = strings.Repeat("0", 40)
	s.offset = 0
	s.db = map[string]*entry{}
	s.scripts = map[string]*proto{}
	s.libs = map[string]*library{}
	s.sess = map[*session]bool{}
	s.subs = map[string]map[*session]bool{}
	s.pending = nil
	s.started = time.Now()
	if snap != nil {
		for k, e := range snap.db {
			s.db[k] = e.clone()
		}
		s.replID, s.offset = snap.replID, snap.offset
		s.reloadLibraries(snap.libs) // new copies
	}
}

// Name is the server's process name.
func (s *Server) Name() string { return s.name }

// RunID is the run_id of the server's current incarnation.
func (s *Server) RunID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runID
}

// Listen makes addr reach s (the first routing of an address).
func (w *World) Listen(addr string, s *Server) { w.Route(addr, s) }

// Route makes addr reach s from now on; connections made through addr to
// the server it reached before are closed (a failover moving a virtual
// address).
func (w *World) Route(addr string, s *Server) {
	w.mu.Lock()
	old := w.addrs[addr]
	w.addrs[addr] = s
	w.mu.Unlock()
	if old != nil && old != s {
		old.closeSessions(func(ss *session) bool { return ss.conn.local.String() == addr })
	}
}

// Server returns the server behind addr.
func (w *World) Server(addr string) *Server {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.addrs[addr]
}

func (s *Server) closeSessions(match func(*session) bool) {
	s.mu.Lock()
	var cs []*session
	for ss := range s.sess {
		if match == nil || match(ss) {
			cs = append(cs, ss)
		}
	}
	s.mu.Unlock()
	for _, ss := range cs {
		ss.conn.Close()
	}
}

// Dialer returns the go-redis Options.Dialer of the client named client.
func (w *World) Dialer(client string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		w.mu.Lock()
		s := w.addrs[addr]
		cut := w.link(client, addr).cut
		w.mu.Unlock()
		if cut != nil {
			// A connect across a partition fails at once (as with an
			// ICMP unreachable), rather than after a timeout: go-redis
			// dials some connections holding a mutex, and a goroutine
			// waiting for a mutex stops virtual time.
			return nil, &net.OpError{Op: "dial", Net: "sim", Err: syscall.EHOSTUNREACH}
		}
		if s == nil {
			return nil, &net.OpError{Op: "dial", Net: "sim", Err: syscall.ECONNREFUSED}
		}
		s.mu.Lock()
		if !s.up {
			s.mu.Unlock()
			return nil, &net.OpError{Op: "dial", Net: "sim", Err: syscall.ECONNREFUSED}
		}
		cc, sc := Pipe(client, addr)
		ss := &session{s: s, conn: sc, client: client, gen: s.gen}
		s.sess[ss] = true
		s.mu.Unlock()
		go s.serve(ss)
		return cc, nil
	}
}

// link returns the state of a link (w.mu held).
func (w *World) link(client, addr string) *linkState {
	l := w.links[link{client, addr}]
	if l == nil {
		l = &linkState{}
		w.links[link{client, addr}] = l
	}
	return l
}

// hold waits while a request or its reply may not pass: the server is
// paused, or the link is cut; before the request runs, the server's
// slowness is added. It reports false when the server's incarnation that
// accepted the connection is gone.
func (w *World) hold(s *Server, ss *session, before bool) bool {
	addr := ss.conn.local.String()
	slept := false
	for {
		s.mu.Lock()
		live := s.up && s.gen == ss.gen
		paused, slow := s.paused, s.slow
		s.mu.Unlock()
		if !live {
			return false
		}
		w.mu.Lock()
		cut := w.link(ss.client, addr).cut
		w.mu.Unlock()
		switch {
		case paused != nil:
			<-paused
		case cut != nil:
			<-cut
		case before && slow > 0 && !slept:
			slept = true
			time.Sleep(slow)
		default:
			return true
		}
	}
}

// dropReply reports whether this reply is lost (and the connection closed).
func (w *World) dropReply(s *Server, ss *session) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := w.link(ss.client, ss.conn.local.String())
	if l.dropReply > 0 {
		l.dropReply--
		return true
	}
	return false
}

// duplicate returns the delay of a duplicate delivery of the script just
// run, or 0.
func (w *World) duplicate(s *Server, ss *session) time.Duration {
	if ss == nil {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	l := w.link(ss.client, ss.conn.local.String())
	if l.dupPending > 0 {
		l.dupPending--
		return l.dupDelay
	}
	return 0
}

// Faults on links and servers. Each takes effect at once.

// Partition cuts the link from client to addr: requests and replies wait
// (as TCP retransmits) until Heal; new connections cannot be made.
func (w *World) Partition(client, addr string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if l := w.link(client, addr); l.cut == nil {
		l.cut = make(chan struct{})
	}
}

// Heal ends a partition.
func (w *World) Heal(client, addr string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if l := w.link(client, addr); l.cut != nil {
		close(l.cut)
		l.cut = nil
	}
}

// LoseReplies makes the next n replies on the link be lost with their
// connection (the client may retry the command on a new connection: a
// duplicate delivery).
func (w *World) LoseReplies(client, addr string, n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.link(client, addr).dropReply += n
}

// Duplicate makes the next n scripts on the link run twice, the copy
// delay later (a retry whose first copy was only delayed).
func (w *World) Duplicate(client, addr string, n int, delay time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := w.link(client, addr)
	l.dupPending, l.dupDelay = n, delay
}

// Pause stops the server answering (SIGSTOP): requests wait until Resume.
func (s *Server) Pause() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.paused == nil {
		s.paused = make(chan struct{})
	}
}

// Resume ends a pause.
func (s *Server) Resume() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.paused != nil {
		close(s.paused)
		s.paused = nil
	}
}

// Slow delays every request by d (0: no delay).
func (s *Server) Slow(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slow = d
}

// Crash kills the server (kill -9): connections close, and it refuses new
// ones until Restart.
func (s *Server) Crash() {
	s.mu.Lock()
	s.up = false
	s.gen++
	if s.paused != nil {
		close(s.paused)
		s.paused = nil
	}
	s.mu.Unlock()
	s.closeSessions(nil)
	s.detach()
}

// Restart starts a crashed (or running) server again: empty, or with the
// data of snap (an RDB taken earlier). It gets a new run_id; its
// replication ID is new when empty, the snapshot's otherwise.
func (s *Server) Restart(snap *Snapshot) {
	s.Crash()
	s.mu.Lock()
	s.start(snap)
	reps := slices.Clone(s.reps)
	s.mu.Unlock()
	// Its replicas reconnect and resync in full from what it has now.
	for _, r := range reps {
		r.ReplicaOf(s, r.lagOf())
	}
}

// Up reports whether the server runs.
func (s *Server) Up() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.up
}

// Snapshot is a server's data at one moment (an RDB file), its Function
// libraries included.
type Snapshot struct {
	db     map[string]*entry
	libs   []string // the libraries' texts
	replID string
	offset int64
}

// Snapshot copies the server's data now.
func (s *Server) Snapshot() *Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := &Snapshot{db: map[string]*entry{}, libs: s.librarySources(), replID: s.replID, offset: s.offset}
	for k, e := range s.db {
		snap.db[k] = e.clone()
	}
	return snap
}

// Reload replaces the running server's data with snap's (DEBUG RELOAD of
// an RDB file written earlier): its process, run_id and replication ID
// stay, its Function libraries are loaded anew. Its replicas get the data.
func (s *Server) Reload(snap *Snapshot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = s.nowMs()
	s.dirty, s.flushed = s.dirty[:0], true
	s.db = map[string]*entry{}
	for k, e := range snap.db {
		s.db[k] = e.clone()
		s.touch(k)
	}
	s.reloadLibraries(snap.libs)
	s.replicate()
}

// FlushAll empties the server (its run_id and replication ID stay; its
// Function libraries too).
func (s *Server) FlushAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = s.nowMs()
	s.dirty = s.dirty[:0]
	s.flushAll()
	s.replicate()
}

// ClockJump moves the server's wall clock by d (TIME and key expiry).
func (s *Server) ClockJump(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clk.offset += d
}

// ClockRate makes the server's clock run at 1+rate times true time from
// now on.
func (s *Server) ClockRate(rate float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	s.clk.offset = s.clk.at(now).Sub(now)
	s.clk.rate, s.clk.since = rate, now
}

// String names the server and its incarnation.
func (s *Server) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("%s(run_id %.6s)", s.name, s.runID)
}
