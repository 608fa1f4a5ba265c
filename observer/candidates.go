package observer

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/redlease/redlease/internal/notice"
)

// Candidate is one candidate of an election, as the registry record it
// published says (docs/design.md §6.4): its ID (election.Config's
// Lease.ID), its priority (election.Config.Priority) and when it began to
// campaign, by its own clock.
type Candidate struct {
	ID       string
	Priority int
	Since    time.Time
}

// Candidates calls the roll of the election's candidates and returns those
// that answered within two of the client's NodeTimeouts (sooner if ctx
// ends), highest priority first, then by ID: the first is the preferred
// leader, the one a leader with election.Config.YieldAfter hands over to.
// Every campaigning elector answers, the leader included; one that is not
// campaigning (at its Config.Leaderships cap, or stopped) does not. None
// answering is an empty list and a nil error. Like [Observer.Leader], the
// answer is a snapshot for display and routing: the roll call is a Pub/Sub
// message, so a candidate whose nodes it did not reach is missing. When ctx
// ends first, the error matches the context's error.
func (o *Observer) Candidates(ctx context.Context) ([]Candidate, error) {
	if ctx.Err() != nil {
		return nil, ctxErr(ctx)
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, 2*o.client.Config().NodeTimeout)
	defer cancel()
	ch := notice.Channel(o.name)
	sub, err := o.client.Internal().Subscribe(ctx, ch)
	if err != nil {
		return nil, fmt.Errorf("observer: listening for the candidates of %q: %w", o.name, err)
	}
	defer sub.Close()
	if _, err := o.client.Internal().Publish(ctx, ch, notice.Message{Kind: notice.Roll}.Encode()); err != nil {
		return nil, fmt.Errorf("observer: calling the roll of %q: %w", o.name, err)
	}
	seen := map[string]Candidate{}
	for ctx.Err() == nil {
		select {
		case n := <-sub.C():
			m := notice.Parse(n.Payload)
			switch {
			case m.Kind != notice.Candidate:
			case m.Window <= time.Millisecond: // a record withdrawn (it lapses at once)
				delete(seen, m.ID)
			default:
				seen[m.ID] = Candidate{ID: m.ID, Priority: m.Priority, Since: m.Since}
			}
		case <-ctx.Done():
		}
	}
	if parent.Err() != nil { // the caller's context, not the listening time
		return nil, ctxErr(parent)
	}
	out := make([]Candidate, 0, len(seen))
	for _, c := range seen {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Candidate) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}
