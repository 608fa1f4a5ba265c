package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/redlease/redlease/observer"
)

const watchUsage = `Usage: redlease watch --name NAME [--json] [--poll 1s] [--permits 1] [node flags]

Prints every change of NAME's leader, one line each with a timestamp, until
interrupted (SIGINT or SIGTERM): the state first, then a new leader (a new
term, even of the same ID, with its fencing token), no leader, or unknown
(fewer than a majority of nodes answered). Changes are seen within a round
trip of the leader's change notices; --poll catches what Pub/Sub missed.
With --permits K above 1, NAME is a semaphore of K permits (redlease run
--permits): each line lists who holds which permit and how many are free.
Exits 0 when interrupted, 1 on an error.`

// timeLayout is the timestamp of watch's lines: RFC 3339, milliseconds.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// watchLine is one line of `redlease watch --json`.
type watchLine struct {
	Time        string `json:"time"`
	State       string `json:"state"` // "leader", "no leader", "permits" or "unknown"
	Leader      string `json:"leader,omitempty"`
	Token       uint64 `json:"token,omitempty"`
	RemainingMs int64  `json:"remaining_ms,omitempty"`
	Error       string `json:"error,omitempty"`
	// Permits: with --permits, the holder of each permit ("" when free).
	Permits []watchPermit `json:"permits,omitempty"`
}

// watchPermit is one permit of a semaphore in `redlease watch --json`.
type watchPermit struct {
	Permit int    `json:"permit"`
	Holder string `json:"holder,omitempty"`
	Token  uint64 `json:"token,omitempty"`
}

func cmdWatch(ctx context.Context, args []string, out *outputs) int {
	c := newCommand("watch", watchUsage, out)
	name := c.fs.String("name", "", "the election's `name` (required)")
	asJSON := c.fs.Bool("json", false, "print one JSON object per change")
	poll := c.fs.Duration("poll", time.Second, "mean time between two reads when no change notice arrives")
	permits := c.fs.Int("permits", 1, "NAME is a semaphore of `K` permits (redlease run --permits K)")
	if code := c.parse(args); code >= 0 {
		return code
	}
	if err := firstErr(requireName(*name), noArgs(c.fs)); err != nil {
		return c.fail(err)
	}
	if *poll < time.Millisecond {
		return c.fail(usagef("--poll (%s) must be at least 1ms", *poll))
	}
	if err := checkPermits(c.fs, *name, *permits); err != nil {
		return c.fail(err)
	}
	set, err := c.nodeSet()
	if err != nil {
		return c.fail(err)
	}
	log := out.logger(hclog.Info, c.conn.verbose)
	ns, err := c.conn.connect(ctx, set, log)
	if err != nil {
		return c.fail(err)
	}
	defer ns.Close()
	if !c.conn.bootstrap {
		hintQuarantine(ctx, ns.client, *name, log)
	}
	o, err := observer.New(ns.client, *name, observer.Config{PollInterval: *poll, Permits: *permits, Logger: log})
	if err != nil {
		return c.fail(err)
	}

	var last observer.Event
	for ev := range o.Watch(ctx) {
		last = ev
		printEvent(out.out, fenced(ctx, o, ev), *asJSON)
	}
	if ctx.Err() != nil {
		return exitOK // interrupted
	}
	return c.fail(last.Err) // the last event says why the watch ended
}

// fenced returns ev with its leader's token once written. A read made
// while a new leader's fencing token is being written shows the token of
// the term before; the observer reads again when that token is not above
// the last one it saw, but the very first term of an election shows 0:
// read again, briefly, for it.
func fenced(ctx context.Context, o *observer.Observer, ev observer.Event) observer.Event {
	for range 3 {
		if ev.Err != nil || ev.Leader.Value == "" || ev.Leader.Token != 0 {
			return ev
		}
		t := time.NewTimer(time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ev
		}
		l, err := o.Leader(ctx)
		if err != nil || l.Value != ev.Leader.Value {
			return ev // another change: the watch reports it next
		}
		ev.Leader = l
	}
	return ev
}

// statePermits is the state of a semaphore's line (--permits).
const statePermits = "permits"

// printEvent prints one change.
func printEvent(w io.Writer, ev observer.Event, asJSON bool) {
	line := watchLine{Time: ev.At.Format(timeLayout), State: stateNoLeader}
	switch {
	case ev.Err != nil:
		line.State, line.Error = stateUnknown, ev.Err.Error()
	case ev.Holders != nil:
		line.State = statePermits
		for _, h := range ev.Holders {
			p := watchPermit{Permit: h.Permit, Token: h.Token}
			if h.Value != "" {
				p.Holder = h.String()
			}
			line.Permits = append(line.Permits, p)
		}
	case ev.Leader.Value != "":
		line.State = stateLeader
		line.Leader, line.Token, line.RemainingMs = ev.Leader.String(), ev.Leader.Token, ev.Leader.Remaining.Milliseconds()
	}
	if asJSON {
		b, _ := json.Marshal(line) // plain strings and numbers: cannot fail
		fmt.Fprintf(w, "%s\n", b)
		return
	}
	switch line.State {
	case stateLeader:
		fmt.Fprintf(w, "%s  leader %s  token %d  about %s left\n", line.Time, line.Leader, line.Token,
			ev.Leader.Remaining.Round(time.Millisecond))
	case stateNoLeader:
		fmt.Fprintf(w, "%s  no leader\n", line.Time)
	case statePermits:
		fmt.Fprintf(w, "%s  %s\n", line.Time, ev)
	default:
		fmt.Fprintf(w, "%s  unknown: %s\n", line.Time, line.Error)
	}
}
