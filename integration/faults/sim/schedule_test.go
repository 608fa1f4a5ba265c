package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// A schedule is everything one run does, drawn from its seed alone: the
// topology, the workload, and the faults at their virtual times.
type schedule struct {
	seed    uint64
	control string // "" or a negative control (see controls)
	mode    string // "" (faults within the safety model), "clock" (clock jumps beyond it), "steer" (see steer) etc.

	serverLog bool // trace every script the servers run (replay -serverlog)

	nodes   int
	clients int
	kind    string // "election", "lease", "lock" or "permits"
	permits int    // kind "permits": the semaphore's K (lease.Config.Permits)
	ttl     time.Duration
	maxTTL  time.Duration
	horizon time.Duration
	lag     []time.Duration // replica lag per node
	faults  []fault

	// Configurations that take other branches of the scripts, each drawn
	// only where the model says it is safe.
	noFencing    bool // Config.DisableFencing (tokens are not checked)
	evalsha      bool // Config.DisableFunctions: the EVALSHA scripts, not the Function library
	noQuarantine bool // Config.DisableQuarantine, in schedules that forget nothing
	denyInfo     bool // INFO refused inside scripts (an ACL), in schedules without replacements
	oldInfo      bool // INFO takes one section per call (Redis 6)

	// steer, in mode "steer" (election clients only): each client's
	// Config.Priority, their YieldAfter and HandoverWindow; the leaders
	// also resign to a named candidate at random (apps_test.go).
	steer *steering

	// counterTTL, when set, replaces the fencing counters' TTL (10 x
	// MaxTTL, longer than a schedule) with one that a key left idle for a
	// while outlives, so that counters expire within the schedule and
	// restart from the nodes' high-water marks. Never below MaxTTL: no
	// lock outlives its counter unless it is extended.
	counterTTL time.Duration
}

type fault struct {
	at     time.Duration
	kind   string
	node   int
	other  int // replicaof: the node it replicates; partition etc.: unused
	client int
	d      time.Duration // how long the fault lasts (or the duplicate's delay)
	slow   time.Duration
	lose   bool
	n      int
	rate   float64
	snapAt time.Duration // restart-snapshot, reload: when the snapshot was taken
}

func (f fault) String() string {
	n := fmt.Sprintf("n%d", f.node+1)
	c := fmt.Sprintf("c%d", f.client+1)
	switch f.kind {
	case "pause":
		return fmt.Sprintf("pause %s for %s", n, f.d)
	case "partition":
		return fmt.Sprintf("partition %s from %s for %s", c, n, f.d)
	case "slow":
		return fmt.Sprintf("slow %s by %s for %s", n, f.slow, f.d)
	case "restart-empty":
		return fmt.Sprintf("crash %s, restart empty after %s", n, f.d)
	case "restart-snapshot":
		return fmt.Sprintf("crash %s, restart after %s from the snapshot of t=%s", n, f.d, f.snapAt)
	case "flushall":
		return fmt.Sprintf("FLUSHALL on %s", n)
	case "reload":
		return fmt.Sprintf("DEBUG RELOAD on %s of the snapshot of t=%s", n, f.snapAt)
	case "failover":
		return fmt.Sprintf("failover of %s to its replica (writes in flight lost: %v)", n, f.lose)
	case "replicaof":
		return fmt.Sprintf("REPLICAOF %s under n%d for %s, then REPLICAOF NO ONE", n, f.other+1, f.d)
	case "client-pause":
		return fmt.Sprintf("pause client %s (process and links) for %s", c, f.d)
	case "lose-reply":
		return fmt.Sprintf("lose the next %d replies of %s to %s (client retries)", f.n, n, c)
	case "duplicate":
		return fmt.Sprintf("deliver the next script of %s to %s twice, the copy %s later", c, n, f.d)
	case "clock-drift":
		return fmt.Sprintf("clock of %s runs at %+.2f%%", n, f.rate*100)
	case "clock-step":
		return fmt.Sprintf("clock of %s steps %+v (within the drift allowance)", n, f.d)
	case "clock-jump":
		return fmt.Sprintf("clock of %s jumps forward %s", n, f.d)
	}
	return f.kind
}

// faultKinds is the default menu: every way a node can forget or lie
// within the safety model's assumptions.
var faultKinds = []string{"pause", "partition", "slow", "restart-empty", "restart-snapshot", "flushall",
	"failover", "replicaof", "client-pause", "lose-reply", "duplicate", "clock-drift", "clock-step"}

func dur(r *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(r.Int64N(int64(hi-lo)+1))
}

// span draws a fault's length: short, medium or long.
func span(r *rand.Rand, ttl time.Duration) time.Duration {
	switch r.IntN(3) {
	case 0:
		return dur(r, time.Millisecond, 100*time.Millisecond)
	case 1:
		return dur(r, 100*time.Millisecond, ttl)
	}
	return dur(r, ttl, 3*ttl)
}

func newSchedule(seed uint64, control, mode string) *schedule {
	r := rand.New(rand.NewPCG(seed, 0x5c4ed))
	s := &schedule{seed: seed, control: control, mode: mode}
	s.nodes = 3
	if r.IntN(4) == 0 {
		s.nodes = 5
	}
	s.clients = 2 + r.IntN(2)
	s.kind = []string{"election", "lease", "lock"}[r.IntN(3)]
	s.ttl = []time.Duration{500 * time.Millisecond, 800 * time.Millisecond, time.Second}[r.IntN(3)]
	s.maxTTL = 1500 * time.Millisecond
	s.horizon = 5 * time.Second
	for range s.nodes {
		s.lag = append(s.lag, dur(r, 0, 400*time.Millisecond))
	}
	nf := 1 + r.IntN(6)
	stepped := map[int]bool{} // nodes whose clock stepped forward once already
	menu, nf := s.menu(r, nf)
	for range nf {
		s.addFault(r, menu, stepped)
	}
	slices.SortStableFunc(s.faults, func(a, b fault) int { return int(a.at - b.at) })
	s.drawOptions(r)
	return s
}

// menu is the fault menu of the schedule's control or mode, and how many
// faults to draw from it (nf, unless the menu says otherwise); it sets the
// clients of the modes that have their own (steer, permits). Its draws
// from r come in a fixed order: a seed's schedule never changes.
func (s *schedule) menu(r *rand.Rand, nf int) ([]string, int) {
	menu := faultKinds
	if s.control == "no-failback-check" || s.mode == "failback" {
		// The failback needs company: a grant that missed one node, then
		// lost with the failing-back node, then a majority without the
		// node that kept it. This control's search draws from the faults
		// that make those (more of them, on three nodes); mode "failback"
		// runs the same schedules on the real guard.
		menu = []string{"failover", "failover", "partition", "partition", "pause", "slow"}
		s.nodes, nf = 3, 4+r.IntN(8)
	}
	if s.control == "no-quarantine" || s.control == "fencing-minority" {
		// Both let a node that forgot vote or count at once: their
		// searches draw the faults that make a node forget, with the
		// company a double grant or a repeated token needs. The default
		// menu finds them too, only later (seeds 57 to 130, 20s each
		// under -race).
		menu = []string{"restart-empty", "flushall", "failover", "partition", "pause", "slow"}
		s.nodes, nf = 3, 3+r.IntN(6)
	}
	if s.mode == "majority-loss" {
		// Every fault makes a node forget (addFault): with at least
		// three, two of them often fall within one quarantine.
		nf = 3 + r.IntN(6)
	}
	if s.control == "no-token" || s.mode == "reload" {
		// DEBUG RELOAD of an older snapshot (docs/design.md §4.7.5):
		// caught by the library's incarnation token alone, so it is
		// drawn only here, with the company a double grant needs (as
		// the failback's); the control turns the token off.
		menu = []string{"reload", "reload", "partition", "partition", "pause", "slow"}
		s.nodes, nf = 3, 4+r.IntN(8)
	}
	if s.mode == "steer" {
		s.kind, s.steer = "election", newSteering(r, s.clients, s.ttl)
	}
	if s.mode == "permits" || s.control == "permits-plus-one" {
		// A semaphore of K permits, with one or two clients more than
		// K taking them (apps_test.go leases); the control takes them
		// among K+1 keys.
		s.kind, s.permits = "permits", 2+r.IntN(2)
		s.clients = s.permits + 1 + r.IntN(2)
	}
	return menu, nf
}

// addFault draws one fault from menu (and perhaps its failback) and adds
// it, or a pause instead where it is beyond the model.
func (s *schedule) addFault(r *rand.Rand, menu []string, stepped map[int]bool) {
	f := fault{at: dur(r, 200*time.Millisecond, s.horizon-time.Second), node: r.IntN(s.nodes), client: r.IntN(s.clients)}
	kind := menu[r.IntN(len(menu))]
	switch {
	case s.mode == "clock" && r.IntN(2) == 0:
		kind = "clock-jump"
	case s.mode == "majority-loss":
		kind = []string{"restart-empty", "flushall", "failover"}[r.IntN(3)]
	}
	f.kind = kind
	f.d = span(r, s.ttl)
	failback := s.drawKind(r, &f, len(menu) != len(faultKinds), stepped)
	if s.mode != "majority-loss" && !s.lossAllowed(f) {
		// Beyond the model: a majority of nodes would lose their state
		// within one quarantine (README: token monotonicity is then
		// not guaranteed). The node is paused instead.
		f.kind, failback = "pause", nil
	}
	s.faults = append(s.faults, f)
	if failback != nil && (s.mode == "majority-loss" || s.lossAllowed(*failback)) {
		s.faults = append(s.faults, *failback)
	}
}

// drawKind draws the parameters of f's kind; for a failover, perhaps a
// failback soon after. narrow: the menu is a control's, not faultKinds.
func (s *schedule) drawKind(r *rand.Rand, f *fault, narrow bool, stepped map[int]bool) (failback *fault) {
	switch f.kind {
	case "slow":
		f.slow = dur(r, 5*time.Millisecond, 80*time.Millisecond)
	case "restart-snapshot", "reload":
		f.snapAt = dur(r, 0, f.at)
	case "failover":
		f.lose = r.IntN(2) == 0 || narrow
		// Often a failback soon after (the same node fails over
		// again), before any client reached the promoted replica.
		if r.IntN(3) > 0 {
			g := *f
			g.at = f.at + dur(r, time.Millisecond, 60*time.Millisecond)
			g.lose = r.IntN(2) == 0
			failback = &g
		}
	case "replicaof":
		f.other = (f.node + 1 + r.IntN(s.nodes-1)) % s.nodes
	case "lose-reply":
		f.n = 1 + r.IntN(3)
	case "duplicate":
		f.d = dur(r, 0, 2*s.ttl)
	case "clock-drift":
		f.rate = (r.Float64()*2 - 1) * 0.005 // within DriftFactor 0.01
	case "clock-step":
		// An NTP step. Backward: keys live longer and quarantines last
		// longer than asked, which the model allows at any size.
		// Forward: at most once per node and at most half the drift
		// allowance of the schedule's TTL (TTL*DriftFactor + MinDrift),
		// so that with a drifting rate (at most half of DriftFactor)
		// the server's clock stays within the allowance over any TTL.
		if stepped[f.node] || r.IntN(2) == 0 {
			f.d = -dur(r, time.Millisecond, 2*s.ttl)
		} else {
			stepped[f.node] = true
			f.d = dur(r, 0, (s.ttl/100+2*time.Millisecond)/2)
		}
	case "clock-jump":
		f.d = dur(r, s.ttl/2, 2*s.ttl)
	}
	return failback
}

// drawOptions draws the schedule's configuration switches, given its
// faults.
func (s *schedule) drawOptions(r *rand.Rand) {
	s.noFencing = r.IntN(8) == 0
	forgets, replaces := false, false
	for _, f := range s.faults {
		if _, _, ok := s.unhealthy(f); ok {
			forgets = true
		}
		switch f.kind {
		case "failover", "replicaof", "restart-snapshot", "reload":
			replaces = true // a marker copied to another server: only run_id tells
		}
	}
	if s.control == "" && (s.mode == "" || s.mode == "steer" || s.mode == "permits") {
		s.noQuarantine = !forgets && r.IntN(4) == 0
		s.denyInfo = !replaces && r.IntN(6) == 0
	}
	s.oldInfo = r.IntN(6) == 0
	if r.IntN(2) == 0 {
		s.counterTTL = dur(r, s.maxTTL, 2*s.maxTTL)
	}
	// The EVALSHA scripts now and then (a server that refuses FUNCTION),
	// except where only the library's token catches a fault.
	s.evalsha = s.mode != "reload" && s.control != "no-token" && r.IntN(3) == 0
}

func (s *schedule) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d: %d nodes, %d %s clients, TTL %s, MaxTTL %s, %s", s.seed, s.nodes, s.clients, s.kind, s.ttl, s.maxTTL, s.horizon)
	if s.permits > 0 {
		fmt.Fprintf(&b, ", K=%d permits", s.permits)
	}
	if s.control != "" {
		fmt.Fprintf(&b, ", control %s", s.control)
	}
	if s.counterTTL > 0 {
		fmt.Fprintf(&b, ", counters expire after %s", s.counterTTL)
	}
	if s.mode != "" {
		fmt.Fprintf(&b, ", mode %s", s.mode)
	}
	if s.steer != nil {
		fmt.Fprintf(&b, " (%s)", s.steer)
	}
	if s.noFencing {
		b.WriteString(", fencing off")
	}
	if s.evalsha {
		b.WriteString(", EVALSHA scripts")
	}
	if s.noQuarantine {
		b.WriteString(", quarantine off (nothing forgotten)")
	}
	if s.denyInfo {
		b.WriteString(", INFO refused in scripts")
	}
	if s.oldInfo {
		b.WriteString(", one INFO section per call")
	}
	return b.String()
}

// unhealthy is when a fault may leave its node without the state it had
// (down, emptied, replaced), until its quarantine is over and its fencing
// floor raised: the window after the loss is MaxTTL plus a second for the
// next contact to raise the floor.
func (s *schedule) unhealthy(f fault) (from, to time.Duration, ok bool) {
	w := s.maxTTL + time.Second
	switch f.kind {
	case "restart-empty", "restart-snapshot", "replicaof":
		return f.at, f.at + f.d + w, true
	case "flushall", "failover", "reload":
		return f.at, f.at + w, true
	}
	return 0, 0, false
}

// lossAllowed reports whether adding f keeps a healthy majority at all
// times: fewer than N/2+1 nodes unhealthy at once.
func (s *schedule) lossAllowed(f fault) bool {
	from, to, ok := s.unhealthy(f)
	if !ok {
		return true
	}
	// The busiest moment of [from, to] is the start of some interval.
	points := []time.Duration{from}
	for _, g := range s.faults {
		if a, _, ok := s.unhealthy(g); ok && a >= from && a <= to {
			points = append(points, a)
		}
	}
	for _, p := range points {
		nodes := map[int]bool{f.node: true}
		for _, g := range s.faults {
			if a, b, ok := s.unhealthy(g); ok && a <= p && p <= b {
				nodes[g.node] = true
				if g.kind == "replicaof" {
					nodes[g.other] = true // (its data is copied: counted as touched)
				}
			}
		}
		if f.kind == "replicaof" {
			nodes[f.other] = true
		}
		if len(nodes) >= s.nodes/2+1 {
			return false
		}
	}
	return true
}
