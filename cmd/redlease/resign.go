package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/redlease/redlease/internal/notice"
	"github.com/redlease/redlease/redlock"
)

const resignUsage = `Usage: redlease resign --name NAME --to ID [--timeout 10s] [node flags]

Asks NAME's leader to hand its term over to the candidate ID: the leader
(a redlease run, or an elector with election.Config.AcceptResignRequests)
ends its term as Resign does, the other candidates stand aside for the
handover window, and ID is elected in milliseconds; if it does not take
over (gone, not campaigning), another candidate is after the window. The
leader refuses an ID it has not heard campaign (see its log). Prints who
leads afterwards; exits 0 when ID leads, 1 when nobody led, the leader did
not hand over within --timeout, or another candidate was elected.`

func cmdResign(ctx context.Context, args []string, out *outputs) int {
	c := newCommand("resign", resignUsage, out)
	name := c.fs.String("name", "", "the election's `name` (required)")
	to := c.fs.String("to", "", "the `ID` of the candidate to hand over to (required)")
	timeout := c.fs.Duration("timeout", 10*time.Second, "how long to wait for the new leader")
	if code := c.parse(args); code >= 0 {
		return code
	}
	if err := firstErr(requireName(*name), noArgs(c.fs)); err != nil {
		return c.fail(err)
	}
	switch {
	case *to == "":
		return c.fail(usagef("--to is required: the ID of the candidate to hand over to"))
	case *timeout <= 0:
		return c.fail(usagef("--timeout (%s) must be positive", *timeout))
	}
	set, err := c.nodeSet()
	if err != nil {
		return c.fail(err)
	}
	ns, err := c.conn.connect(ctx, set, out.logger(hclog.Error, c.conn.verbose))
	if err != nil {
		return c.fail(err)
	}
	defer ns.Close()
	next, d, err := handOver(ctx, ns.client, *name, *to, *timeout)
	if err != nil {
		return c.fail(err)
	}
	fmt.Fprintf(out.out, "%s now leads %s (token %d), %s after the request\n", next, *name, next.Token, d.Round(time.Millisecond))
	if next.ID != *to {
		return c.fail(fmt.Errorf("%q did not take over within the handover window; %s was elected", *to, next))
	}
	return exitOK
}

// errNoLeader: resign found nobody leading.
var errNoLeader = errors.New("nobody leads")

// handOver asks name's leader to hand over to id, and waits up to timeout
// for the next term: it returns the new leader and how long it took.
func handOver(ctx context.Context, client *redlock.Client, name, id string, timeout time.Duration) (redlock.Holder, time.Duration, error) {
	cur, err := client.Inspect(ctx, name)
	switch {
	case errors.Is(err, redlock.ErrNoHolder):
		return redlock.Holder{}, 0, fmt.Errorf("%s %q: no term to hand over", errNoLeader, name)
	case err != nil:
		return redlock.Holder{}, 0, err
	case cur.ID == id:
		return redlock.Holder{}, 0, usagef("--to %q already leads %q", id, name)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	sub, err := client.Internal().Subscribe(ctx, notice.Channel(name))
	if err != nil {
		return redlock.Holder{}, 0, err
	}
	defer sub.Close()
	t0 := time.Now()
	req := notice.Message{Kind: notice.Resign, Value: cur.Value, ID: id}
	if _, err := client.Internal().Publish(ctx, notice.Channel(name), req.Encode()); err != nil {
		return redlock.Holder{}, 0, fmt.Errorf("sending the request: %w", err)
	}
	for {
		select {
		case <-ctx.Done():
			return redlock.Holder{}, 0, fmt.Errorf("%s (token %d) did not hand over within %s: it refuses an ID it has not heard campaign, "+
				"and requests unless it accepts them (redlease run does; election.Config.AcceptResignRequests); see its log", cur.Holder, cur.Token, timeout)
		case n := <-sub.C():
			if m := notice.Parse(n.Payload); m.Kind != notice.Acquired || m.Value == cur.Value {
				continue
			}
			next, err := client.Inspect(ctx, name)
			if err == nil && next.Value != cur.Value {
				return next.Holder, time.Since(t0), nil
			}
		}
	}
}
