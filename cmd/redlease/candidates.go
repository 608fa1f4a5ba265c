package main

import (
	"context"
	"fmt"
	"io"

	"github.com/redlease/redlease/observer"
	"github.com/redlease/redlease/redlock"
)

// candidateReport is a candidate of an election as `redlease status`
// shows it: its registry record (docs/design.md §6.4).
type candidateReport struct {
	ID       string `json:"id"`
	Priority int    `json:"priority"`
	Since    string `json:"since"` // when it began to campaign, by its clock (RFC 3339)
}

// rollCall lists the candidates of name that answer a roll call
// (observer.Observer.Candidates) and the preferred leader: the first of
// them ("" when none answered).
func rollCall(ctx context.Context, client *redlock.Client, name string) ([]candidateReport, string, error) {
	obs, err := observer.New(client, name, observer.Config{})
	if err != nil {
		return nil, "", err
	}
	cands, err := obs.Candidates(ctx)
	if err != nil || len(cands) == 0 {
		return nil, "", err
	}
	out := make([]candidateReport, len(cands))
	for i, c := range cands {
		out[i] = candidateReport{ID: c.ID, Priority: c.Priority, Since: c.Since.UTC().Format(timeLayout)}
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
