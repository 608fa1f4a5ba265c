package redlock

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redlease/redlease/internal/keycheck"
	"github.com/redlease/redlease/internal/redlockx"
)

// AcquireOption changes one acquisition: [WithRetry]. Its argument's type
// is internal: the options it has beyond this one are set only by the
// packages built on redlock in this module (internal/redlockx: the value
// that carries a lease's identity, the release notice, the wait of
// extensions).
type AcquireOption func(*redlockx.AcquireOptions)

// acquireOptions are the options of one acquisition.
type acquireOptions = redlockx.AcquireOptions

// WithRetry sets the retry policy of this Acquire call, in place of
// Config.Retry: after attempt failed attempts (1, 2, ...), f returns the
// delay before the next one, or false to stop and return the last error.
// f is called by the goroutine of the Acquire call only. For example,
// three retries 10ms apart:
//
//	redlock.WithRetry(func(attempt int) (time.Duration, bool) { return 10 * time.Millisecond, attempt <= 3 })
//
// and no retry at all: func(int) (time.Duration, bool) { return 0, false }.
func WithRetry(f func(attempt int) (delay time.Duration, ok bool)) AcquireOption {
	return func(o *acquireOptions) { o.Retry = f }
}

// nonceBytes is the randomness of one attempt's value (docs/design.md S8).
const nonceBytes = 16

func newNonce() string {
	var b [nonceBytes]byte
	_, _ = rand.Read(b[:])               // crypto/rand.Read never fails (Go 1.24+)
	var out [(nonceBytes*8 + 5) / 6]byte // unpadded base64url
	base64.RawURLEncoding.Encode(out[:], b[:])
	return string(out[:])
}

// Acquire takes the lock on key for ttl, retrying with exponential backoff
// and jitter (Config.RetryDelay, Config.Retry, [WithRetry]) until it
// succeeds, the retry policy gives up, an error is final (a bad argument,
// or a majority of nodes refusing for good: WRONGTYPE, a TTL above the
// node's MaxTTL, and refused credentials or permissions, which also match
// [ErrAccessDenied]), or ctx ends; then the error joins the last attempt's
// *[QuorumError] and ctx.Err(). Errors match [ErrNotAcquired], except those
// of bad arguments, which match [ErrInvalidArgument].
//
// The key must not be empty and may be at most 4096 bytes long. The TTL
// must be a whole number of milliseconds, at most MaxTTL, and longer than
// NodeTimeout*2 + drift. The returned Lock is valid until
// [Lock.ValidUntil], which is ttl minus the time the acquisition took minus
// the drift allowance.
func (c *Client) Acquire(ctx context.Context, key string, ttl time.Duration, opts ...AcquireOption) (*Lock, error) {
	at, o := acquisition{c: c, key: key, ttl: ttl}, options(opts)
	retry := o.Retry
	if retry == nil {
		retry = c.cfg.Retry
	}
	if retry == nil {
		retry = expRetry(c.cfg.RetryDelay)
	}
	for attempt := 1; ; attempt++ {
		l, err := at.observed(ctx, o)
		if err == nil {
			return l, nil
		}
		if ctx.Err() != nil {
			return nil, errors.Join(err, ctx.Err())
		}
		if IsFinal(err) {
			return nil, err
		}
		d, ok := retry(attempt)
		if !ok {
			return nil, err
		}
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, errors.Join(err, ctx.Err())
		case <-c.closing:
			t.Stop()
			return nil, errors.Join(err, ErrClosed)
		}
	}
}

// TryAcquire makes one attempt to take the lock on key for ttl; see
// [Client.Acquire]. It fails with an error matching ErrNotAcquired when the
// lock is held elsewhere or a majority could not be reached.
func (c *Client) TryAcquire(ctx context.Context, key string, ttl time.Duration, opts ...AcquireOption) (*Lock, error) {
	l, err := acquisition{c: c, key: key, ttl: ttl}.observed(ctx, options(opts))
	if err != nil && ctx.Err() != nil {
		err = errors.Join(err, ctx.Err())
	}
	return l, err
}

// options reads the options of one acquisition.
func options(opts []AcquireOption) acquireOptions {
	if len(opts) == 0 {
		return acquireOptions{}
	}
	var o acquireOptions
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	return o
}

// checkKey refuses an empty key and one above the size limit (4 KiB).
func checkKey(key string) error {
	if p := keycheck.Problem("key", key); p != "" {
		return fmt.Errorf("%w: %s", ErrInvalidArgument, p)
	}
	return nil
}

// acquisition is an attempt of c's to take the lock on key for ttl.
type acquisition struct {
	c   *Client
	key string
	ttl time.Duration
}

// observed is run, reported to the Hooks (EventAcquire).
func (at acquisition) observed(ctx context.Context, o acquireOptions) (*Lock, error) {
	c := at.c
	t0 := time.Now()
	l, err := at.run(ctx, o)
	if c.cfg.Hooks != nil {
		ev := Event{Kind: EventAcquire, Key: at.key, Duration: time.Since(t0), Err: err, Outcome: outcome(err)}
		if l != nil {
			ev.Token = l.token
		}
		c.cfg.Hooks(ev)
	}
	return l, err
}

// run is one run of the Redlock algorithm (docs/design.md §4.2, §4.5).
func (at acquisition) run(ctx context.Context, o acquireOptions) (*Lock, error) {
	c, key, ttl := at.c, at.key, at.ttl
	value, err := lockValue(&c.cfg, key, ttl, o)
	if err != nil {
		return nil, err
	}
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.mu.RUnlock()

	nodes := c.sets.forKey(key)
	s := newStragglers(len(nodes))
	undoLate := func(n *node, a answer) {
		if a.vote == voteQuarantined {
			c.guard.Ready.Want() // not seen by raiseForgetful: the next pass raises it
		}
		s.late(c, n, a, key, value)
	}

	t0 := time.Now()
	validUntil := t0.Add(ttl - c.cfg.drift(ttl))
	plain := c.args.acquireCall(key, value, ttl)
	answers := c.fan.Run(ctx, nodes, func(ctx context.Context, n *node) answer {
		defer s.running[n.idx].Store(false)
		return grant(ctx, c, n, key, plain)
	}, distinctQuorumDone(c.quorum), undoLate)
	token, qe := at.decide(ctx, nodes, value, answers, t0, validUntil)
	if qe != nil {
		s.gone.Store(true)
		c.wg.Go(func() { unlock{key: key, value: value}.all(c.fan, nodes) })
		return nil, qe
	}
	if token > 0 {
		s.fenced(c, nodes, token, key, value)
	}
	if c.log.IsTrace() {
		c.log.Trace("acquired", "key", key, "token", token, "validity", time.Until(validUntil), "elapsed", time.Since(t0))
	}
	return &Lock{c: c, nodes: nodes, key: key, value: value, token: token, ttl: ttl, strag: s,
		notice: o.NoticeChannel, msg: o.NoticeMessage, extendWait: o.ExtendWait, acquiredAt: t0, validUntil: validUntil, fencedAt: t0,
		validFrom: t0, backed: yesOf(answers)}, nil
}

// lockValue checks an attempt's arguments against cfg and makes its
// value from a fresh nonce (redlockx.Value).
func lockValue(cfg *Config, key string, ttl time.Duration, o acquireOptions) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	if err := cfg.checkTTL(ttl); err != nil {
		return "", err
	}
	nonce := newNonce()
	value := nonce
	if o.Value != nil {
		value = o.Value(nonce)
		if !strings.Contains(value, nonce) {
			return "", fmt.Errorf("%w: the value must contain the nonce", ErrInvalidArgument)
		}
	}
	return value, nil
}

// grant is the request of an attempt of c's on key to node n: acquire.lua
// with the call plain (on the node's own keys on a cluster), its answer
// noted.
func grant(ctx context.Context, c *Client, n *node, key string, plain *scriptCall) answer {
	sc := plain
	if n.tag != "" {
		sc = plain.WithKeys(n.lockKey(key), n.fenceKey(key), n.marker())
	}
	if err := c.check.Admit(ctx, n); err != nil {
		return answer{vote: voteError, err: err}
	}
	res, err := n.run(ctx, sc)
	a := parseAcquire(res, err)
	switch a.vote {
	case voteQuarantined:
		// Its floor is raised below (raiseForgetful) or, for an
		// answer that comes too late for it, by the next pass
		// (undoLate); without a healthy majority, by the pass at the
		// end of its quarantine.
		c.guard.Ready.SawQuarantine(time.Duration(a.ms)*time.Millisecond, true)
		n.heard.SawQuarantine(time.Duration(a.ms)*time.Millisecond, false)
	case voteYes, voteNo:
		n.heard.SawVote()
	}
	c.guard.NoticeIdentity(n, a.marker())
	if n.cluster != nil {
		c.placement.AnsweredBy(&n.server, a.server)
		a.server = 0 // copies on one master are a placement warning, not a refusal
	}
	return a
}

// decide reads an attempt's answers: its token when the lock was granted
// by a quorum, fenced (unless fencing is off) and still valid for more
// than MinValidity; otherwise why not.
func (at acquisition) decide(ctx context.Context, nodes []*node, value string, answers []answer, t0, validUntil time.Time) (uint64, *QuorumError) {
	c, key := at.c, at.key
	yes := dedupe(nodes, answers)
	raiseForgetful(&c.guard, nodes, answers)
	if yes < c.quorum {
		return 0, newQuorumError(c.quorum, nodes, "acquire", key, answers, ErrNotAcquired, "")
	}

	var token uint64
	if !c.cfg.DisableFencing {
		var err error
		step := newFenceStep(c, nodes, key, value, answers)
		if token, err = step.token(ctx); err != nil {
			var qe *QuorumError
			if errors.As(err, &qe) {
				return 0, qe
			}
			return 0, newQuorumError(c.quorum, nodes, "fence", key, answers, ErrNotAcquired, err.Error())
		}
	}

	if left := time.Until(validUntil); left <= c.cfg.MinValidity {
		return 0, newQuorumError(c.quorum, nodes, "acquire", key, answers, ErrNotAcquired,
			fmt.Sprintf("validity %s after %s is below MinValidity %s", left.Round(time.Microsecond),
				time.Since(t0).Round(time.Microsecond), c.cfg.MinValidity))
	}
	return token, nil
}

// parseAcquire reads acquire.lua's reply.
func parseAcquire(res any, err error) answer {
	if err != nil {
		return answer{vote: voteError, err: err}
	}
	a, err := replyArray(res, 6)
	if err != nil {
		return answer{vote: voteError, err: err}
	}
	var ns [6]int64
	if err := intsOf(a, ns[:], 0, 1, 2, 3, 4, 5); err != nil {
		return answer{vote: voteError, err: err}
	}
	v, ok := scriptVote(ns[0])
	if !ok {
		return answer{vote: voteError, err: badReply(res)}
	}
	return answer{vote: v, counter: ns[1], ms: ns[2], created: ns[3], high: ns[4], server: ns[5]}
}

// dedupe turns a second yes from the same server (same run_id) into an
// error vote and returns the number of distinct yes votes.
func dedupe(nodes []*node, as []answer) int {
	yes := 0
	for i := range as {
		a := &as[i]
		if a.vote != voteYes {
			continue
		}
		if a.server != 0 {
			if j := slices.IndexFunc(as[:i], func(b answer) bool { return b.vote == voteYes && b.server == a.server }); j >= 0 {
				a.vote, a.err = voteError, fmt.Errorf("same server as %s (run_id %012x...): one server, one vote", nodes[j].name(), a.server)
				continue
			}
		}
		yes++
	}
	return yes
}

// newQuorumError builds the *QuorumError of a failed request that needed
// need yes votes.
func newQuorumError(need int, nodes []*node, op, key string, answers []answer, target error, reason string) *QuorumError {
	qe := &QuorumError{Op: op, Key: key, Need: need, Reason: reason, target: target}
	for i, a := range answers {
		if a.vote == voteYes {
			qe.Yes++
		}
		qe.Nodes = append(qe.Nodes, nodeResult(nodes[i], a))
	}
	return qe
}

func nodeResult(n *node, a answer) NodeResult {
	r := NodeResult{Node: n.addr, Master: n.master.Get(), Yes: a.vote == voteYes}
	switch a.vote {
	case voteError:
		r.Err = a.err
		if r.Err == nil {
			r.Err = errors.New("no valid answer")
		}
	case voteQuarantined:
		r.Quarantined, r.Quarantine = true, time.Duration(a.ms)*time.Millisecond
	}
	return r
}

// IsFinal reports whether retrying an acquisition that failed with err
// cannot help: a bad argument, a closed client, or a majority of nodes
// refusing with an error that a retry will meet again (an error reply that
// is final: WRONGTYPE, NOPERM, WRONGPASS, NOAUTH, a TTL above the node's
// MaxTTL).
// [Client.Acquire] stops on such errors;
// loops of one's own around [Client.TryAcquire] should too.
func IsFinal(err error) bool {
	if errors.Is(err, ErrInvalidArgument) || errors.Is(err, ErrClosed) {
		return true
	}
	var qe *QuorumError
	if !errors.As(err, &qe) {
		return false
	}
	final := 0
	for _, n := range qe.Nodes {
		if finalReply(n.Err) {
			final++
		}
	}
	// Final when the nodes that did not refuse for good cannot make a
	// majority. A failed fence is never final: its error lists only one
	// attempt's yes-nodes, and the next attempt may find others.
	return qe.Op != "fence" && final > 0 && final > len(qe.Nodes)-qe.Need
}
