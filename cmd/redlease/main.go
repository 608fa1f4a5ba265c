// Command redlease runs a command under leader election on Redis, and shows
// and follows an election.
//
//	go install github.com/redlease/redlease/cmd/redlease@latest
//
//	export REDLEASE_NODES=redis-a:6379,redis-b:6379,redis-c:6379
//	redlease run --name reports -- ./generate-reports --token-from-env
//	redlease status --name reports
//	redlease watch --name reports
//
// `redlease run` campaigns for the election; while it leads it runs the
// command with the term's fencing token in REDLEASE_TOKEN, and stops it
// (SIGTERM, then SIGKILL after --grace) before the term's validity ends
// when leadership is lost. `redlease status` prints every node's view and
// the majority's verdict; `redlease watch` prints every change of leader.
// See README.md beside this file, or `redlease --help`, for every flag and
// the exit codes.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis/go-redis/v9"
)

func main() {
	// redlease reports node errors itself, naming the node; go-redis's own
	// log lines ("failed to dial") would repeat them without context.
	redis.SetLogger(discard{})
	ctx, stop := signalContext()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// signalCause is the cause of the context of [run] when a signal
// interrupted redlease: `run` forwards the signal to its child.
type signalCause struct{ sig os.Signal }

func (s signalCause) Error() string { return "interrupted by " + s.sig.String() }

// signalContext returns a context cancelled, with a signalCause, by the
// first SIGINT or SIGTERM. Later ones are ignored: redlease is already
// stopping its child, within --grace.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			cancel(signalCause{s})
		case <-done:
		}
	}()
	return ctx, func() { close(done); cancel(nil) }
}

// discard is a go-redis logger that drops everything.
type discard struct{}

func (discard) Printf(context.Context, string, ...any) {}
