package election

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redlease/redlease/internal/testing/checker"
	"github.com/redlease/redlease/internal/testing/testnodes"
	"github.com/redlease/redlease/internal/testing/unsafetest"
	"github.com/redlease/redlease/internal/unsafeopt"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tenure is one term as its OnElected saw it, on the monotonic clock.
type tenure struct {
	id      string
	token   uint64
	start   time.Time // OnElected began
	ctxEnd  time.Time // OnElected saw its context cancelled
	retEnd  time.Time // OnElected returned: the term's work was over
	demoted []time.Time
}

// history records the tenures of every candidate of one election, from
// their callbacks.
type history struct {
	mu      sync.Mutex
	terms   map[uint64]*tenure
	elected chan tenure // every term, as it begins
}

func newHistory() *history {
	return &history{terms: map[uint64]*tenure{}, elected: make(chan tenure, 1024)}
}

// record sets cfg's callbacks to record into h; work, if set, runs in
// OnElected after the context was cancelled (the term's work winding
// down).
func (h *history) record(cfg *Config, id string, work func(Term)) {
	cfg.OnElected = func(ctx context.Context, t Term) {
		tn := &tenure{id: id, token: t.Token, start: time.Now()}
		h.mu.Lock()
		h.terms[t.Token] = tn
		h.mu.Unlock()
		h.elected <- *tn
		<-ctx.Done()
		ctxEnd := time.Now()
		if work != nil {
			work(t)
		}
		retEnd := time.Now()
		h.mu.Lock()
		tn.ctxEnd, tn.retEnd = ctxEnd, retEnd
		h.mu.Unlock()
	}
	cfg.OnDemoted = func(t Term, _ error) {
		now := time.Now()
		h.mu.Lock()
		defer h.mu.Unlock()
		if tn := h.terms[t.Token]; tn != nil {
			tn.demoted = append(tn.demoted, now)
		}
	}
}

// demoted reports whether the term of token was demoted.
func (h *history) demoted(token uint64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	tn := h.terms[token]
	return tn != nil && len(tn.demoted) > 0
}

func (h *history) tenures() []tenure {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []tenure
	for _, tn := range h.terms {
		out = append(out, *tn)
	}
	return out
}

// next waits for the next term to begin.
func (h *history) next(t testing.TB, timeout time.Duration) tenure {
	t.Helper()
	select {
	case tn := <-h.elected:
		return tn
	case <-time.After(timeout):
		t.Fatalf("no new term within %s", timeout)
		return tenure{}
	}
}

// checkTenures checks a finished history: no two terms' contexts alive at
// once, no term's work running into another term (docs/design.md S1, safe handover),
// tokens strictly increasing in the order the terms began (S5), and every
// term demoted exactly once, after its OnElected returned.
func checkTenures(ts []tenure) error {
	ts = slices.Clone(ts)
	slices.SortFunc(ts, func(a, b tenure) int { return a.start.Compare(b.start) })
	var errs []error
	contexts, works := make([]checker.Tenure, len(ts)), make([]checker.Tenure, len(ts))
	for i, tn := range ts {
		switch {
		case tn.ctxEnd.IsZero() || tn.retEnd.IsZero():
			errs = append(errs, fmt.Errorf("term %d (%s) never ended", tn.token, tn.id))
		case len(tn.demoted) != 1:
			errs = append(errs, fmt.Errorf("term %d (%s) demoted %d times", tn.token, tn.id, len(tn.demoted)))
		case tn.demoted[0].Before(tn.retEnd):
			errs = append(errs, fmt.Errorf("term %d (%s) demoted %s before OnElected returned", tn.token, tn.id, tn.retEnd.Sub(tn.demoted[0])))
		}
		contexts[i] = checker.Tenure{Start: tn.start, End: tn.ctxEnd, Token: tn.token}
		works[i] = checker.Tenure{Start: tn.start, End: tn.retEnd, Token: tn.token}
	}
	for _, o := range checker.Overlaps(contexts) {
		a, b := ts[o.Earlier], ts[o.Later]
		errs = append(errs, fmt.Errorf("term %d (%s) began %s before the context of term %d (%s) was cancelled",
			b.token, b.id, a.ctxEnd.Sub(b.start), a.token, a.id))
	}
	for _, o := range checker.Overlaps(works) {
		a, b := ts[o.Earlier], ts[o.Later]
		errs = append(errs, fmt.Errorf("term %d (%s) began %s before the work of term %d (%s) was over",
			b.token, b.id, a.retEnd.Sub(b.start), a.token, a.id))
	}
	for _, i := range checker.NotIncreasing(contexts) {
		prev, tn := ts[i-1], ts[i]
		errs = append(errs, fmt.Errorf("token %d (%s) does not increase on %d (%s)", tn.token, tn.id, prev.token, prev.id))
	}
	return errors.Join(errs...)
}

// Negative control: the checker reports overlapping terms, terms that end
// in a later term's work, tokens going back, and missing demotions.
func TestCheckTenuresReportsViolations(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	ok := func(id string, token uint64, start, ctxEnd, retEnd int) tenure {
		return tenure{id: id, token: token, start: at(start), ctxEnd: at(ctxEnd), retEnd: at(retEnd), demoted: []time.Time{at(retEnd + 1)}}
	}
	good := []tenure{ok("a", 1, 0, 10, 12), ok("b", 2, 13, 20, 20), ok("c", 3, 21, 30, 31)}
	require.NoError(t, checkTenures(good))

	for _, tc := range []struct {
		name string
		ts   []tenure
		want string
	}{
		{"contexts overlap", []tenure{ok("a", 1, 0, 10, 12), ok("b", 2, 5, 20, 20)}, "term 2 (b) began 5ms before the context of term 1 (a) was cancelled"},
		{"work overlaps", []tenure{ok("a", 1, 0, 10, 15), ok("b", 2, 12, 20, 20)}, "term 2 (b) began 3ms before the work of term 1 (a) was over"},
		{"a long term overlaps a later one", []tenure{ok("a", 1, 0, 100, 100), ok("b", 2, 101, 110, 110), ok("c", 3, 50, 60, 60)}, "term 3 (c) began 50ms before the context of term 1 (a)"},
		{"token goes back", []tenure{ok("a", 2, 0, 10, 10), ok("b", 1, 11, 20, 20)}, "token 1 (b) does not increase on 2 (a)"},
		{"equal tokens", []tenure{ok("a", 2, 0, 10, 10), ok("b", 2, 11, 20, 20)}, "token 2 (b) does not increase"},
		{"never demoted", []tenure{{id: "a", token: 1, start: at(0), ctxEnd: at(1), retEnd: at(1)}}, "demoted 0 times"},
		{"demoted twice", []tenure{{id: "a", token: 1, start: at(0), ctxEnd: at(1), retEnd: at(1), demoted: []time.Time{at(2), at(3)}}}, "demoted 2 times"},
		{"demoted while working", []tenure{{id: "a", token: 1, start: at(0), ctxEnd: at(1), retEnd: at(5), demoted: []time.Time{at(2)}}}, "demoted 3ms before OnElected returned"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkTenures(tc.ts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// latestTerm tracks the token of the last term that began, for the
// overlapping work of TestHandoverGuardNegativeControl.
type latestTerm struct {
	mu      sync.Mutex
	latest  uint64        // the token of the last term that began
	changed chan struct{} // closed when latest changes
}

func newLatestTerm() *latestTerm { return &latestTerm{changed: make(chan struct{})} }

// begin records that the term of token began.
func (lt *latestTerm) begin(token uint64) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	lt.latest = token
	close(lt.changed)
	lt.changed = make(chan struct{})
}

// work is a term's work winding down: it goes on until a later term began
// or 300ms passed.
func (lt *latestTerm) work(t Term) {
	timeout := time.After(300 * time.Millisecond)
	for {
		lt.mu.Lock()
		later, ch := lt.latest > t.Token, lt.changed
		lt.mu.Unlock()
		if later {
			return // a later term began: the work was caught overlapping it
		}
		select {
		case <-ch:
		case <-timeout:
			return
		}
	}
}

// startGuardPair starts candidates "a" and "b" on nodes, recorded in h,
// their terms' work done by lt's work, the handover guard on or off.
func startGuardPair(t *testing.T, nodes []redis.UniversalClient, h *history, lt *latestTerm, guard bool) []*running {
	var es []*running
	for _, id := range []string{"a", "b"} {
		cfg := unitCfg(t, id)
		h.record(&cfg, id, lt.work)
		on := cfg.OnElected
		cfg.OnElected = func(ctx context.Context, t Term) {
			lt.begin(t.Token)
			on(ctx, t)
		}
		ccfg := unitClientCfg
		unsafetest.TurnOff(t, &ccfg, unsafeopt.Off{NoHandoverWait: !guard})
		e := newElector(t, newClient(t, ccfg, nodes), "guard", cfg)
		es = append(es, start(t, e))
	}
	return es
}

// Negative control with the guard turned off: each leader's work goes on
// after its context was cancelled until it sees the next term begin (or
// 300ms pass). With safe handover, the next term waits for the work and
// the checker passes; with the elector releasing without waiting for
// OnElected, the next term begins during the work, and the checker
// reports it.
func TestHandoverGuardNegativeControl(t *testing.T) {
	for _, guard := range []bool{true, false} {
		t.Run(fmt.Sprintf("guard=%t", guard), func(t *testing.T) {
			_, nodes := testnodes.Minis(t, 3)
			h := newHistory()
			es := startGuardPair(t, nodes, h, newLatestTerm(), guard)
			first := h.next(t, wait)
			for range 3 {
				for _, e := range es {
					if e.cfg.Lease.ID == first.id {
						require.NoError(t, e.Resign(context.Background()))
					}
				}
				first = h.next(t, wait)
			}
			for _, e := range es {
				require.ErrorIs(t, e.stop(t), context.Canceled)
			}
			err := checkTenures(h.tenures())
			if guard {
				require.NoError(t, err)
				return
			}
			require.Error(t, err, "the checker must catch the overlap")
			assert.Contains(t, err.Error(), "before the work of term")
			t.Logf("reported, as it should be: %v", err)
		})
	}
}
