package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redlease/redlease/internal/scripts"
)

const libraryUsage = `Usage: redlease library [node flags]

Loads redlease's scripts as one Redis Function library on every node
(FUNCTION LOAD of redlease_<hash of its code>; never REPLACE), for
deployments whose redlease user may FCALL but not load it: clients then
run the library, whose incarnation token spares acquisitions INFO server
and catches DEBUG RELOAD of an older RDB (docs/design.md §4.7.5). A node
that has this version already is left as it is; other versions stay.

Run it with an admin user, after redlease's version changes, and after a
node restarted without its data or had its functions flushed: until then
clients run the EVALSHA scripts there. Independent nodes only (not
--cluster). Exits 0 when every node has the library, 1 naming those that
do not.`

// libraryTimeout bounds one node's FUNCTION LOAD (a new connection, and
// the server compiles the library) unless --node-timeout is longer.
const libraryTimeout = 2 * time.Second

// cmdLibrary is 'redlease library': FUNCTION LOAD of the library on every
// node, for users that may not load it themselves.
func cmdLibrary(ctx context.Context, args []string, out *outputs) int {
	c := newCommand("library", libraryUsage, out)
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
	if c.conn.cluster {
		return c.fail(usagef("--cluster: the library is for independent nodes (cluster nodes run the EVALSHA scripts)"))
	}
	var errs []error
	var done []string
	for _, s := range set.specs {
		rc := s.client()
		lctx, cancel := context.WithTimeout(ctx, max(c.conn.nodeTimeout, libraryTimeout))
		err := scripts.LoadLibrary(lctx, rc)
		cancel()
		_ = rc.Close()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.name(), err))
			continue
		}
		done = append(done, s.name())
	}
	if len(done) > 0 {
		fmt.Fprintf(out.out, "library redlease_%s loaded: %s\n", scripts.Version, strings.Join(done, ", "))
	}
	if len(errs) > 0 {
		return c.fail(errors.Join(errs...))
	}
	return exitOK
}
