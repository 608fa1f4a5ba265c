package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/redlease/redlease/internal/notice"
	"github.com/redlease/redlease/internal/reach"
	"github.com/redlease/redlease/redlock"
)

const statusUsage = `Usage: redlease status --name NAME [--json] [--candidates] [node flags]

Reads NAME on every node and prints one row per node: address, holder (its
ID), remaining TTL of the key, fencing token (the node's counter),
quarantine state and error; then the majority's verdict: a leader (with its
token and about how long it has left), no leader, waiting (no majority of
nodes votes yet because some are quarantined: "waiting: 2 of 3 nodes
quarantined, 27s left"; nobody can be elected before), or unknown (fewer
than a majority of nodes could answer). It writes nothing but the
quarantine marker of a node seen for the first time (which starts its
quarantine). Exits 0 when a majority answered, 3 while waiting, 1 when the
verdict is unknown. With --candidates, it also lists the candidates that
answer a roll call (redlease run, or any elector), with their priorities,
highest first: the first is the preferred leader.`

// statusReport is what `redlease status --json` prints.
type statusReport struct {
	Name    string       `json:"name"`
	Nodes   []nodeReport `json:"nodes"`
	Verdict verdict      `json:"verdict"`
	// Candidates answered the roll call (with --candidates), highest
	// priority first; Preferred is the first one's ID.
	Candidates []candidateReport `json:"candidates,omitempty"`
	Preferred  string            `json:"preferred,omitempty"`
}

type nodeReport struct {
	Node string `json:"node"`
	// Master is the address of the master serving this copy (--cluster).
	Master       string `json:"master,omitempty"`
	Holder       string `json:"holder,omitempty"`
	TTLMs        int64  `json:"ttl_ms"`
	Token        uint64 `json:"token"`
	Ready        bool   `json:"ready"`
	QuarantineMs int64  `json:"quarantine_ms"`
	Error        string `json:"error,omitempty"`
}

// verdict is the majority's answer.
type verdict struct {
	State       string `json:"state"` // stateLeader, stateNoLeader, stateUnknown or stateWaiting
	Leader      string `json:"leader,omitempty"`
	Token       uint64 `json:"token,omitempty"`
	RemainingMs int64  `json:"remaining_ms,omitempty"`
	Answered    int    `json:"answered"`    // nodes that answered and may vote
	Quarantined int    `json:"quarantined"` // nodes that answered and are quarantined (or await their fencing floor)
	WaitMs      int64  `json:"wait_ms,omitempty"`
	Nodes       int    `json:"nodes"`
	Quorum      int    `json:"quorum"`
}

// stateWaiting is the verdict while no majority of nodes votes because
// some are quarantined; WaitMs is how long until enough of them vote (0:
// their quarantine is over, their fencing floor not raised yet).
const stateWaiting = "waiting"

// The other states of a verdict, and of a line of watch: what a majority
// read said (the Err of an observer.Event says unknown).
const (
	stateLeader   = "leader"
	stateNoLeader = "no leader"
	stateUnknown  = "unknown"
)

// waiting is the wait a verdict in stateWaiting says.
func (v verdict) waiting() reach.Waiting {
	return reach.Waiting{Nodes: v.Nodes, Quorum: v.Quorum, Voting: v.Answered, Quarantined: v.Quarantined, Left: ms(v.WaitMs)}
}

func cmdStatus(ctx context.Context, args []string, out *outputs) int {
	c := newCommand("status", statusUsage, out)
	name := c.fs.String("name", "", "the election's `name` (required)")
	asJSON := c.fs.Bool("json", false, "print the report as one JSON object")
	cands := c.fs.Bool("candidates", false, "also list the candidates (ID, priority, since when): they answer a roll call within a round trip")
	if code := c.parse(args); code >= 0 {
		return code
	}
	if err := firstErr(requireName(*name), noArgs(c.fs)); err != nil {
		return c.fail(err)
	}
	set, err := c.nodeSet()
	if err != nil {
		return c.fail(err)
	}
	log := out.logger(hclog.Error, c.conn.verbose)
	ns, err := c.conn.connect(ctx, set, log)
	if err != nil {
		return c.fail(err)
	}
	defer ns.Close()

	rep, err := status(ctx, ns.client, *name)
	if err != nil {
		return c.fail(err)
	}
	if *cands {
		if rep.Candidates, rep.Preferred, err = rollCall(ctx, ns.client, *name); err != nil {
			return c.fail(err)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(out.out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return c.fail(err)
		}
	} else {
		printStatus(out.out, rep)
		if *cands {
			printCandidates(out.out, rep)
		}
	}
	switch rep.Verdict.State {
	case stateUnknown:
		return exitError
	case stateWaiting:
		return exitWaiting
	}
	return exitOK
}

// status reads the election called name and makes the report.
func status(ctx context.Context, client *redlock.Client, name string) (*statusReport, error) {
	info, err := client.Inspect(ctx, name)
	if info == nil {
		return nil, err // a closed client or a bad name: not the nodes' answer
	}
	rep := &statusReport{Name: name}
	for _, n := range info.Nodes {
		nr := nodeReport{Node: n.Node, Master: n.Master, TTLMs: n.TTL.Milliseconds(), Token: n.Counter,
			Ready: !n.Quarantined, QuarantineMs: n.Quarantine.Milliseconds()}
		if n.Value != "" {
			nr.Holder = redlock.Holder{Value: n.Value, ID: notice.DecodeValue(n.Value).ID}.String()
		}
		if n.Err != nil {
			nr.Error = n.Err.Error()
			nr.Ready = false
		}
		rep.Nodes = append(rep.Nodes, nr)
	}
	rep.Verdict = judge(info, client.Internal().Quorum())
	return rep, nil
}

// judge is the majority's verdict, as observer.Observer.Leader would give.
func judge(info *redlock.Inspection, quorum int) verdict {
	v := verdict{Nodes: len(info.Nodes), Quorum: quorum}
	var left []time.Duration
	for _, n := range info.Nodes {
		switch {
		case n.Err != nil:
		case !n.Quarantined:
			v.Answered++
		default:
			left = append(left, n.Quarantine)
		}
	}
	v.Quarantined = len(left)
	w, waiting := reach.Wait(v.Nodes, quorum, v.Answered, left)
	switch {
	case info.Value != "":
		v.State = stateLeader
		v.Leader, v.Token, v.RemainingMs = info.String(), info.Token, info.Remaining.Milliseconds()
	case v.Answered >= quorum:
		v.State = stateNoLeader
	case waiting:
		v.State, v.WaitMs = stateWaiting, w.Left.Milliseconds()
	default:
		v.State = stateUnknown
	}
	return v
}

// printStatus prints the report as a table and a verdict line.
func printStatus(w io.Writer, rep *statusReport) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tHOLDER\tTTL\tTOKEN\tQUARANTINE\tERROR")
	for _, n := range rep.Nodes {
		node := n.Node
		if n.Master != "" {
			node += " (" + n.Master + ")"
		}
		holder, ttl, token, quarantine, errText := "-", "-", "-", "-", "-"
		if n.Error != "" {
			errText = n.Error
		} else {
			if n.Holder != "" {
				holder = n.Holder
			}
			if n.TTLMs > 0 {
				ttl = ms(n.TTLMs).String()
			}
			if n.Token > 0 {
				token = fmt.Sprint(n.Token)
			}
			switch {
			case n.Ready:
				quarantine = "ready"
			case n.QuarantineMs > 0:
				quarantine = "quarantined " + ms(n.QuarantineMs).String()
			default:
				quarantine = "awaiting fencing floor"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", node, holder, ttl, token, quarantine, errText)
	}
	_ = tw.Flush()
	v := rep.Verdict
	quarantined := "" // a quarantined node answered: it is not one that did not
	if v.Quarantined > 0 {
		quarantined = fmt.Sprintf(", %d quarantined", v.Quarantined)
	}
	switch v.State {
	case stateLeader:
		fmt.Fprintf(w, "verdict: leader %s (token %d), about %s left; %d of %d nodes answered%s, %d needed\n",
			v.Leader, v.Token, ms(v.RemainingMs), v.Answered, v.Nodes, quarantined, v.Quorum)
	case stateNoLeader:
		fmt.Fprintf(w, "verdict: no leader; %d of %d nodes answered%s, %d needed\n", v.Answered, v.Nodes, quarantined, v.Quorum)
	case stateWaiting:
		fmt.Fprintf(w, "verdict: %s\n", v.waiting())
	default:
		fmt.Fprintf(w, "verdict: unknown: %d of %d nodes could answer, %d needed\n", v.Answered, v.Nodes, v.Quorum)
	}
}

// ms is a count of milliseconds as a duration, for printing.
func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
