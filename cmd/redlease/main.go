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
