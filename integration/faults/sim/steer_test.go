package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/redlease/redlease/election"
	"github.com/redlease/redlease/redlock"
)

// steering is the configuration of mode "steer": election candidates with
// priorities and YieldAfter (a leader yields to a higher priority, a
// handover to a named candidate), whose leaders, when they resign, name
// their successor (another client, at random) two times in three, mixed
// with the default fault menu (docs/design.md §6.4).
type steering struct {
	priority   []int         // by client
	yieldAfter time.Duration // Config.YieldAfter of every client
	window     time.Duration // Config.HandoverWindow of every client
}

func newSteering(r *rand.Rand, clients int, ttl time.Duration) *steering {
	st := &steering{yieldAfter: dur(r, ttl/4, 2*ttl), window: dur(r, 50*time.Millisecond, ttl)}
	for range clients {
		st.priority = append(st.priority, r.IntN(3))
	}
	return st
}

func (st *steering) String() string {
	return fmt.Sprintf("priorities %v, YieldAfter %s, HandoverWindow %s", st.priority, st.yieldAfter, st.window)
}

// steerConfig sets cfg's steering in mode "steer".
func (p *proc) steerConfig(cfg *election.Config) {
	if st := p.r.s.steer; st != nil {
		cfg.Priority, cfg.YieldAfter, cfg.HandoverWindow = st.priority[p.idx], st.yieldAfter, st.window
	}
}

// resign ends e's term: in mode "steer", two times in three, by a
// handover to another client (at random; it may not campaign, or not be
// registered yet: then a plain resign).
func (p *proc) resign(ctx context.Context, e *election.Elector) {
	if p.r.s.steer != nil && p.rnd.intn(3) > 0 {
		to := fmt.Sprintf("c%d", 1+(p.idx+1+p.rnd.intn(p.r.s.clients-1))%p.r.s.clients)
		// Resign returns when the term ends, ctx (the term's) with it:
		// context.Canceled is the handover under way.
		err := e.Resign(ctx, to)
		p.r.note("%s resigns to %s: %v", p.name, to, err)
		if errors.Is(err, context.Canceled) {
			p.r.handedTo(to)
		}
		if !errors.Is(err, redlock.ErrInvalidArgument) {
			return
		}
	}
	_ = e.Resign(ctx)
}

func (l *lockedRand) intn(n int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.IntN(n)
}

// handovers counts a schedule's named handovers (mode "steer") and those
// that elected the named successor (the next term was its).
type handovers struct{ named, landed int }

// handedTo records a handover to successor, under way.
func (r *run) handedTo(successor string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.successor = successor
	r.handovers.named++
}

// elected records that id was elected: the named successor or not.
func (r *run) elected(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.successor != "" && r.successor == id {
		r.handovers.landed++
	}
	r.successor = ""
}
