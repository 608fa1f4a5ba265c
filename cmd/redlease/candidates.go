package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/redlease/redlease/internal/notice"
	"github.com/redlease/redlease/redlock"
)

// candidateReport is a candidate of an election as `redlease status`
// shows it: its registry record (docs/design.md §6.4).
type candidateReport struct {
	ID       string `json:"id"`
	Priority int    `json:"priority"`
	Since    string `json:"since"` // when it began to campaign, by its clock (RFC 3339)
}

// rollCall asks the candidates of name to publish their records (a roll
// call on its notice channel) and returns those heard within listen,
// highest priority first (then by ID), and the preferred leader: the
// first of them ("" when none answered).
func rollCall(ctx context.Context, client *redlock.Client, name string, listen time.Duration) ([]candidateReport, string, error) {
	ctx, cancel := context.WithTimeout(ctx, listen)
	defer cancel()
	ch := notice.Channel(name)
	sub, err := client.Internal().Subscribe(ctx, ch)
	if err != nil {
		return nil, "", fmt.Errorf("listening for the candidates: %w", err)
	}
	defer sub.Close()
	if _, err := client.Internal().Publish(ctx, ch, notice.Message{Kind: notice.Roll}.Encode()); err != nil {
		return nil, "", fmt.Errorf("calling the candidates' roll: %w", err)
	}
	seen := map[string]candidateReport{}
	for ctx.Err() == nil {
		select {
		case n := <-sub.C():
			if m := notice.Parse(n.Payload); m.Kind == notice.Candidate {
				seen[m.ID] = candidateReport{ID: m.ID, Priority: m.Priority, Since: m.Since.UTC().Format(timeLayout)}
			}
		case <-ctx.Done():
		}
	}
	var out []candidateReport
	for _, c := range seen {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b candidateReport) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), cmp.Compare(a.ID, b.ID))
	})
	if len(out) == 0 {
		return nil, "", nil
	}
	return out, out[0].ID, nil
}

// printCandidates prints the candidates that answered the roll call.
func printCandidates(w io.Writer, rep *statusReport) {
	if len(rep.Candidates) == 0 {
		fmt.Fprintln(w, "candidates: none answered the roll call")
		return
	}
	fmt.Fprintf(w, "candidates (preferred leader: %s):\n", rep.Preferred)
	for _, c := range rep.Candidates {
		fmt.Fprintf(w, "  %s\tpriority %d\tsince %s\n", c.ID, c.Priority, c.Since)
	}
}
