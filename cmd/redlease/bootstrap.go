package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/go-hclog"
)

const bootstrapUsage = `Usage: redlease bootstrap [node flags]

Declares the nodes brand new, so that they vote at once instead of
--max-ttl after redlease first contacts them: every node with no quarantine
marker, or still in its quarantine, gets a marker dated --max-ttl ago
(redlock.Client.Bootstrap). Nodes that already vote are left as they are.

An operator's act, once, on a new deployment where no lock can have existed
yet. Never after a crash, a restart, a flush or a failover of a node: a node
that lost its locks would vote again while those locks may still be held
elsewhere, and two leaders could run at once. Nothing runs it by itself.
Exits 0 when every node was reached, 1 naming those that were not.`

// cmdBootstrap is 'redlease bootstrap': what --bootstrap does, as a
// command of its own for the operator who sets up a deployment.
func cmdBootstrap(ctx context.Context, args []string, out *outputs) int {
	c := newCommand("bootstrap", bootstrapUsage, out)
	if code := c.parse(args); code >= 0 {
		return code
	}
	if err := noArgs(c.fs); err != nil {
		return c.fail(err)
	}
	set, err := c.nodeSet()
	if err != nil {
		return c.fail(err)
	}
	c.conn.bootstrap = true
	ns, err := c.conn.connect(ctx, set, out.logger(hclog.Warn, c.conn.verbose))
	if err != nil {
		return c.fail(err)
	}
	defer ns.Close()
	fmt.Fprintf(out.out, "bootstrapped: %s vote now\n", strings.Join(ns.client.Internal().Nodes(), ", "))
	return exitOK
}
