package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/redlease/redlease/election"
	"github.com/redlease/redlease/internal/lockrule"
	"github.com/redlease/redlease/internal/logx"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

const runUsage = `Usage: redlease run --name NAME [--ttl 10s] [--id ID] [--grace TTL/4] [--restart] [--wait-majority 30s] [--priority 0] [--yield-after 0] [--permits 1] [--metrics-addr ADDR] [node flags] -- COMMAND [ARGS...]

Campaigns for NAME. When elected, starts COMMAND with REDLEASE_TOKEN (the
term's fencing token: pass it to what COMMAND writes, and have that refuse
lower tokens), REDLEASE_NAME and REDLEASE_ID added to its environment. COMMAND
runs in a process group of its own, with stdin from /dev/null.

When leadership is lost (the term could not be refreshed), COMMAND's group
gets SIGTERM, then SIGKILL after --grace, always before the term's validity
ends: the term gives up --grace plus a slack (max(100ms, TTL/20)) before its
validity ends, so --grace must fit in the TTL (the error says by how much;
the default, TTL/4, always fits). redlease then campaigns again, and starts
COMMAND afresh when re-elected. When no majority of the nodes has answered
for --wait-majority (unreachable, refusing), redlease exits with code 1.

On Unix, COMMAND runs under a watchdog process that kills its group when
the term's validity ends unless redlease extended it in time: a frozen
redlease (SIGSTOP, a stalled process) cannot keep COMMAND running past its
term.

When COMMAND exits on its own, redlease resigns (the next candidate takes
over at once) and exits with COMMAND's code; with --restart it campaigns
again instead (after 1s, so that another candidate may take over).

'redlease resign --to ID' hands the term over to the candidate ID (the
other candidates stand aside meanwhile); --priority orders the candidates
waiting at a release, and with --yield-after the leader hands over to a
higher priority that has campaigned that long.

With --permits K above 1, NAME is a semaphore of K permits: COMMAND runs
on at most K candidates at once across the fleet, each holding one permit
(a lease of its own, with its own token), with the same deadline, watchdog
and grace as a term; REDLEASE_PERMIT (0 to K-1) says which. A permit freed
is taken at once by a waiting candidate. --priority and --yield-after
apply to elections only. All candidates of NAME must use the same K.

SIGINT and SIGTERM are forwarded to COMMAND's group (SIGKILL after --grace);
redlease then resigns and exits with COMMAND's code, or 0 if it was not
leading.`

// restartDelay is how long redlease stands aside after COMMAND exited
// with --restart (election.Config.ResignDelay): a crash loop gives another
// candidate the leadership, and is slowed down.
const restartDelay = time.Second

// errCommandExited ends Run when COMMAND exited on its own.
var errCommandExited = errors.New("redlease: the command exited")

// errWatchdogKilled is why a term ends when the watchdog killed COMMAND
// at the term's deadline: redlease did not extend the term in time.
var errWatchdogKilled = errors.New("the watchdog killed the command at the term's deadline")

// errTermExpired is why the watchdog did not start COMMAND: the term's
// validity had ended (redlease was paused before it started the watchdog).
var errTermExpired = errors.New("the term's validity ended before the command started")

// envNoWatchdog, set to 1, runs COMMAND without the watchdog: UNSAFE, a
// frozen redlease then keeps COMMAND running past its term. It exists for
// the negative control of the watchdog's test only; it is not a flag so
// that nobody turns it off by accident.
const envNoWatchdog = "REDLEASE_UNSAFE_NO_WATCHDOG"

// errNoMajority ends Run when no majority of nodes answered for
// --wait-majority.
var errNoMajority = errors.New("no majority of the nodes answers")

// defaultTTL is --ttl's default: that of lease.Config.TTL.
const defaultTTL = 10 * time.Second

// defaultWaitMajority is --wait-majority's default.
const defaultWaitMajority = 30 * time.Second

func cmdRun(ctx context.Context, args []string, out *outputs) int {
	c := newCommand("run", runUsage, out)
	name := c.fs.String("name", "", "the election's `name` (required)")
	ttl := c.fs.Duration("ttl", defaultTTL, "time-to-live of the leadership: a crashed leader is replaced within it")
	id := c.fs.String("id", "", "this candidate's `ID`, as status and watch show it (default <hostname>-<pid>)")
	grace := c.fs.Duration("grace", 0, "time COMMAND has to exit after SIGTERM before SIGKILL (default TTL/4)")
	restart := c.fs.Bool("restart", false, "when COMMAND exits on its own, campaign again rather than exit")
	priority := c.fs.Int("priority", 0, "this candidate's `priority`: of the candidates waiting at a release, a higher one goes first")
	yieldAfter := c.fs.Duration("yield-after", 0, "hand the term over to a higher --priority candidate campaigning for this long (0: never)")
	metricsAddr := c.fs.String("metrics-addr", "", "serve Prometheus metrics at http://`ADDR`/metrics (host:port; default: none)")
	permits := c.fs.Int("permits", 1, "run COMMAND on at most `K` candidates at once across the fleet, each holding one of K permits (1: one leader)")
	waitMajority := c.fs.Duration("wait-majority", defaultWaitMajority,
		"exit with code 1 when no majority of the nodes has answered for this long (0: campaign forever)")
	if code := c.parse(args); code >= 0 {
		return code
	}
	argv := c.fs.Args()
	if err := requireName(*name); err != nil {
		return c.fail(err)
	}
	if len(argv) == 0 {
		return c.fail(usagef("missing COMMAND: redlease run --name NAME [flags] -- COMMAND [ARGS...]"))
	}
	set, err := c.nodeSet() // validates the node flags, --max-ttl included
	if err != nil {
		return c.fail(err)
	}
	switch {
	case !isSet(c.fs, "grace"):
		*grace = -1 // planRun's default
	case *grace < 0:
		return c.fail(usagef("--grace (%s) must not be negative", *grace))
	}
	p, err := planRun(*ttl, *grace, c.conn)
	if err != nil {
		return c.fail(err)
	}
	if err := firstErr(nonNegative("wait-majority", *waitMajority), nonNegative("yield-after", *yieldAfter), checkPermits(c.fs, *name, *permits)); err != nil {
		return c.fail(err)
	}
	if _, err := exec.LookPath(argv[0]); err != nil {
		fmt.Fprintf(out.err, "redlease run: COMMAND: %v\n", err)
		return exitNoStart
	}
	r := &runner{name: *name, argv: argv, plan: p, restart: *restart, priority: *priority, yieldAfter: *yieldAfter, permits: *permits,
		stdout: out.rawOut, stderr: out.rawErr,
		exited: make(chan int, 1), watchdog: watchdogAvailable && out.getenv(envNoWatchdog) != "1"}
	return runCampaign(ctx, c, out, set, r, *id, *metricsAddr, *waitMajority)
}

// runCampaign is `redlease run` once its flags are checked: it connects
// to the nodes of set, with metrics served at metricsAddr if not empty,
// and runs r's campaign as candidate id; it returns the exit code.
func runCampaign(ctx context.Context, c *command, out *outputs, set *nodeSet, r *runner, id, metricsAddr string, waitMajority time.Duration) int {
	log := out.logger(hclog.Info, c.conn.verbose)
	hooks := newRunHooks(log, waitMajority)
	c.conn.hooks = hooks.Observe
	if metricsAddr != "" {
		m := newCLIMetrics()
		stop, err := serveMetrics(metricsAddr, m, log)
		if err != nil {
			return c.fail(err)
		}
		defer stop()
		c.conn.hooks = hooksList{c.conn.hooks, m.Observe}.Observe
	}
	ns, err := c.conn.connect(ctx, set, log)
	if err != nil {
		return c.fail(err)
	}
	defer ns.Close()
	if !c.conn.bootstrap {
		hintQuarantine(ctx, ns.client, r.name, log)
	}
	r.log, r.hooks = log, hooks
	code, err := r.campaign(ctx, ns.client, id)
	if err != nil {
		return c.fail(err)
	}
	return code
}

// runPlan is the timing of `redlease run`'s terms.
type runPlan struct {
	ttl, grace time.Duration
	// margin is the term's SafetyMargin: --grace plus slack. The term's
	// context is cancelled that long before its validity ends, when it
	// could not be refreshed.
	margin, slack time.Duration
	// renew is the refresh interval, short enough that several refreshes
	// are tried before the term gives up.
	renew time.Duration
	// tick is how often the term's validity is passed on to the watchdog
	// (and redlease checks that it was not paused).
	tick time.Duration
	// watchdogMargin is how long before the validity it was told the
	// watchdog kills COMMAND: after redlease's own SIGKILL (slack/2
	// before), so that a redlease that runs always stops COMMAND itself.
	watchdogMargin time.Duration
}

// planRun checks --ttl and --grace, and derives the terms' timing. Its
// errors name the flags and their values. A negative grace means the
// default: TTL/4, or less where the slack leaves less room (short TTLs).
func planRun(ttl, grace time.Duration, conn connFlags) (runPlan, error) {
	deflt := grace < 0
	if deflt {
		grace = 0
	}
	switch {
	case ttl <= 0:
		return runPlan{}, usagef("--ttl (%s) must be positive", ttl)
	case ttl%time.Millisecond != 0:
		return runPlan{}, usagef("--ttl (%s) must be a whole number of milliseconds", ttl)
	case ttl > conn.maxTTL:
		return runPlan{}, usagef("--ttl (%s) is above --max-ttl (%s)", ttl, conn.maxTTL)
	}
	// redlock's own TTL rule and drift allowance, for the client the
	// flags make (connect).
	ccfg := conn.clientConfig()
	drift := lockrule.Drift(ttl, lockrule.DefaultDriftFactor)                                       // the CLI sets no DriftFactor
	if lockrule.TTLProblem(ttl, ccfg.NodeTimeout, ccfg.MaxTTL, lockrule.DefaultDriftFactor) != "" { // not above NodeTimeout*2 + drift: the other cases are checked above
		return runPlan{}, usagef("--ttl (%s) must exceed 2 × --node-timeout + drift (%s)", ttl, 2*conn.nodeTimeout+drift)
	}
	p := runPlan{ttl: ttl, slack: max(100*time.Millisecond, ttl/20)}
	usable := ttl - drift // the validity of a term refreshed at once
	if deflt {
		grace = max(0, min(ttl/4, usable*3/4-p.slack))
	}
	p.grace, p.margin = grace, grace+p.slack
	if p.margin > usable*3/4 {
		return runPlan{}, usagef("--grace (%s) does not fit --ttl (%s): COMMAND must be stopped before the term's validity ends, "+
			"so --grace + %s of slack (%s) must be at most 3/4 of the TTL net of clock drift (%s), leaving the rest for refreshes; "+
			"lower --grace or raise --ttl", grace, ttl, p.slack, p.margin, usable*3/4)
	}
	p.renew = min(ttl/3, (usable-p.margin)/3)
	p.tick = min(max(p.renew/4, 10*time.Millisecond), 100*time.Millisecond)
	p.watchdogMargin = p.slack / 4
	return p, nil
}

// runner is the state of `redlease run`.
type runner struct {
	name           string
	argv           []string
	plan           runPlan
	restart        bool
	priority       int           // --priority
	yieldAfter     time.Duration // --yield-after
	permits        int           // --permits: above 1, a semaphore's permit instead of an election (permits.go)
	watchdog       bool          // COMMAND runs under a watchdog (see startWatched)
	stdout, stderr io.Writer     // the child's: not filtered, its output is its own
	log            hclog.Logger
	e              *election.Elector // set before Run

	// exited receives the code of a COMMAND that exited on its own (not
	// --restart) or could not start: redlease resigns and exits with it.
	exited chan int

	hooks *runHooks // ends the campaign after --wait-majority without a majority

	mu   sync.Mutex
	last int // the code of the last COMMAND stopped by redlease
}

// campaign runs the election until COMMAND exits (without --restart) or
// ctx ends, and returns the exit code; an error when the election failed.
func (r *runner) campaign(ctx context.Context, client *redlock.Client, id string) (int, error) {
	id = cmp.Or(id, defaultID()) // chosen here so that the log names it
	if r.permits > 1 {
		return r.contend(ctx, client, id)
	}
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	e, err := election.New(client, r.name, election.Config{
		Lease:       lease.Config{ID: id, TTL: r.plan.ttl, RenewInterval: r.plan.renew, SafetyMargin: r.plan.margin, Logger: r.log},
		ResignDelay: restartDelay,
		OnElected:   r.onElected,
		Priority:    r.priority,
		YieldAfter:  r.yieldAfter,
		// redlease resign --to: hand the term over on request.
		AcceptResignRequests: true,
	})
	if err != nil {
		return 0, err
	}
	r.e = e
	if r.hooks != nil {
		r.hooks.campaigning(stop)
	}
	done := make(chan error, 1)
	go func() { done <- e.Run(runCtx) }()
	r.log.Info("campaigning", "key", r.name, "id", id, "ttl", r.plan.ttl, "grace", r.plan.grace,
		"gives_up_before_validity_end", r.plan.margin)

	select {
	case err := <-done:
		if ctx.Err() != nil {
			return r.lastCode(), nil // interrupted; Run handed the term over
		}
		if cause := context.Cause(runCtx); errors.Is(cause, errNoMajority) {
			return 0, cause
		}
		return 0, err
	case code := <-r.exited:
		stop(errCommandExited) // hands the term over: resigns
		if err := <-done; !errors.Is(err, errCommandExited) {
			r.log.Warn("election ended with an error", "error", err)
		}
		r.log.Info("resigned; exiting with the command's code", "code", code)
		return code, nil
	}
}

// defaultID is --id's default, "<hostname>-<pid>", as lease.Config.ID's.
func defaultID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return host + "-" + strconv.Itoa(os.Getpid())
}

func (r *runner) lastCode() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// onElected runs COMMAND for one term, and stops it when the term ends.
func (r *runner) onElected(ctx context.Context, t election.Term) {
	resign := func(ctx context.Context) error { return r.e.Resign(ctx) }
	r.serve(ctx, tenure{validUntil: t.ValidUntil, token: t.Token, id: t.ID, permit: -1, resign: resign})
}

// tenure is what one run of COMMAND is held by: an elector's term, or a
// permit of a semaphore (--permits, permits.go).
type tenure struct {
	validUntil func() time.Time                // the term's validity, moved by each refresh
	token      uint64                          // REDLEASE_TOKEN
	id         string                          // REDLEASE_ID
	permit     int                             // REDLEASE_PERMIT; -1: none (an election)
	resign     func(ctx context.Context) error // hands the term over; its context ends
}

// env is COMMAND's environment for the tenure.
func (r *runner) env(t tenure) []string {
	env := append(os.Environ(), "REDLEASE_TOKEN="+strconv.FormatUint(t.token, 10), "REDLEASE_NAME="+r.name, "REDLEASE_ID="+t.id)
	if t.permit >= 0 {
		env = append(env, "REDLEASE_PERMIT="+strconv.Itoa(t.permit))
	}
	return env
}

// serve runs COMMAND for one tenure, whose context is ctx, and stops it
// when the tenure ends.
func (r *runner) serve(ctx context.Context, t tenure) {
	c, err := r.start(r.env(t), t)
	if errors.Is(err, errTermExpired) {
		r.log.Error("the term's validity ended before the command started (was this process paused?); not starting it",
			"token", t.token)
		_ = t.resign(ctx) // campaign again
		return
	}
	if err != nil {
		r.log.Error("cannot start the command; resigning", "command", r.argv[0], "error", err)
		r.exited <- exitNoStart
		<-ctx.Done() // until campaign hands the term over
		return
	}
	r.log.Info("command started", "pid", c.pid(), "token", t.token, "watchdog", c.watchdog != nil)
	pw := newPauseWatch(r.plan.tick)
	if !r.hold(ctx, t, c, pw) || !c.killedAtDeadline().at.IsZero() {
		r.endTerm(ctx, t, c, pw)
		return
	}
	r.log.Info("command exited", "pid", c.pid(), "code", c.code, "token", t.token)
	if r.restart {
		r.log.Info("resigning; campaigning again (--restart)", "delay", restartDelay)
		_ = t.resign(ctx) // returns at once: the handover follows our return
		return
	}
	r.exited <- c.code
	<-ctx.Done() // until campaign hands the term over
}

// start starts COMMAND for term t, under a watchdog unless it is off.
func (r *runner) start(env []string, t tenure) (*child, error) {
	if r.watchdog {
		return startWatched(r.argv, env, r.stdout, r.stderr, t.validUntil(), r.plan.watchdogMargin)
	}
	return startChild(r.argv, env, r.stdout, r.stderr)
}

// hold waits until COMMAND exits (true) or the term ends (false). Every
// plan.tick it tells the watchdog the term's validity when a refresh has
// moved it, and ticks pw: a tick late by seconds is a pause of redlease.
func (r *runner) hold(ctx context.Context, t tenure, c *child, pw *pauseWatch) (exited bool) {
	tick := time.NewTicker(r.plan.tick)
	defer tick.Stop()
	sent := t.validUntil()
	for {
		select {
		case <-c.done:
			pw.tick(time.Now())
			return true
		case <-ctx.Done():
			pw.tick(time.Now())
			return false
		case <-tick.C:
			pw.tick(time.Now())
			if vu := t.validUntil(); vu.After(sent) {
				sent = vu
				c.extendTo(vu)
			}
		}
	}
}

// endTerm stops COMMAND as its term ends (ctx is cancelled), or after the
// watchdog killed it at the term's deadline; it reports whether COMMAND
// was stopped in time, and why not.
func (r *runner) endTerm(ctx context.Context, t tenure, c *child, pw *pauseWatch) {
	cause := context.Cause(ctx)
	if cause == nil {
		cause = errWatchdogKilled
	}
	sig := stopSignal(cause)
	r.log.Info("term ending; stopping the command", "pid", c.pid(), "signal", sig, "grace", r.plan.grace, "cause", cause)
	code, killed := c.stop(sig, r.plan.grace, t.validUntil().Add(-r.plan.slack/2))
	r.mu.Lock()
	r.last = code
	r.mu.Unlock()
	r.reportStop(t, c, code, killed, pw)
	if ctx.Err() == nil {
		_ = t.resign(ctx) // the watchdog ended the command: hand the term over
	}
	if errors.Is(cause, context.Canceled) { // Run's context ended
		return
	}
	r.log.Info("campaigning again: the command starts afresh when elected", "cause", cause)
}

// reportStop logs whether COMMAND stopped before its term's validity
// ended, and when it did not, why: redlease paused (SIGSTOP, a stalled
// host), the watchdog's kill, or a --grace too long for the --ttl.
func (r *runner) reportStop(t tenure, c *child, code int, killed bool, pw *pauseWatch) {
	k := c.killedAtDeadline()
	pause, paused := pw.paused(r.plan.slack)
	pauseMsg := fmt.Sprintf("this process was paused for %s (SIGSTOP or a stalled host?)", logx.RoundDuration(pause))
	left := time.Until(t.validUntil())
	kv := []any{"pid", c.pid(), "code", code}
	switch {
	case !k.at.IsZero() && paused:
		r.log.Error(pauseMsg+": its term ended while it was frozen; the watchdog killed the command before the term's validity ended",
			append(kv, "killed_at", k.at.UTC().Format(time.RFC3339Nano), "validity_left_at_kill", k.left, "paused", pause)...)
	case !k.at.IsZero():
		r.log.Error("redlease did not extend its term in time (starved of CPU?); the watchdog killed the command before the term's validity ended",
			append(kv, "killed_at", k.at.UTC().Format(time.RFC3339Nano), "validity_left_at_kill", k.left)...)
	case left > 0:
		r.log.Info("command stopped before the term's validity ended", append(kv, "killed", killed, "validity_left", left)...)
	case paused && pause >= -left: // the pause explains the delay
		r.log.Error("command stopped after the term's validity ended: "+pauseMsg+", and the command ran on while it was frozen",
			append(kv, "killed", killed, "late", -left, "paused", pause)...)
	default:
		r.log.Error("command stopped after the term's validity ended: raise --ttl or lower --grace",
			append(kv, "killed", killed, "late", -left)...)
	}
}

// stopSignal is the signal that stops COMMAND when its term ends for
// cause: the signal that interrupted redlease, or SIGTERM.
func stopSignal(cause error) os.Signal {
	if sc, ok := errors.AsType[signalCause](cause); ok {
		return sc.sig
	}
	return syscall.SIGTERM
}

// nonNegative checks the duration flag called name.
func nonNegative(name string, d time.Duration) error {
	if d < 0 {
		return usagef("--%s (%s) must not be negative", name, d)
	}
	return nil
}
