package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/hashicorp/go-hclog"

	"github.com/redlease/redlease/internal/logx"
)

// Exit codes of every command; `run` also exits with its command's code.
const (
	exitOK      = 0
	exitError   = 1   // a runtime error: nodes unreachable, no majority, ...
	exitUsage   = 2   // a bad flag or value
	exitWaiting = 3   // status: no majority votes yet, some nodes are quarantined
	exitNoStart = 127 // run: COMMAND not found or not startable
)

const usageText = `redlease: leader election and leases on Redis (Redlock on N independent
masters, or N hash slots of one Redis Cluster).

Usage:
  redlease run    --name NAME [--ttl 10s] [--id ID] [--grace TTL/4] [--restart] [--wait-majority 30s] -- COMMAND [ARGS...]
  redlease status --name NAME [--json]
  redlease watch  --name NAME [--json]
  redlease resign --name NAME --to ID
  redlease bootstrap
  redlease library
  redlease doctor [--json] [--accept ID,...]

Commands:
  run     campaign for NAME; while leading, run COMMAND with REDLEASE_TOKEN (the
          fencing token), REDLEASE_NAME and REDLEASE_ID in its environment
  status  every node's view of NAME (holder, TTL, token, quarantine, error),
          then the majority's verdict
  watch   print every change of NAME's leader, with a timestamp, until SIGINT
  resign  ask NAME's leader to hand its term over to the candidate ID
  bootstrap
          declare the nodes brand new: they vote at once instead of --max-ttl
          (30s) after first contact. Once, by an operator, on a new deployment;
          never after a crash or a restart (a node that lost its locks would
          grant them again)
  library load redlease's scripts as one Redis Function library on every node
          (FUNCTION LOAD), for users that may FCALL but not load it
  doctor  check the nodes against what redlease assumes (persistence,
          eviction, replicas, ACL, clocks, round trips): a finding per check
          and node, with its risk and fix; exits 0 ok, 1 warn, 2 fail, 3 usage
          or no node answered

Nodes, for every command: --nodes or $REDLEASE_NODES, comma-separated, each
host:port or a redis:// or rediss:// (TLS) URL (user:password@ before the
host for AUTH; passwords are never printed); --cluster for the seed nodes of
one Redis Cluster; --bootstrap for brand-new nodes. 'redlease COMMAND --help'
lists every flag.

Exit codes:
  0    success; status: a majority answered (a leader, or none); watch: interrupted
  1    runtime error: nodes unreachable, no majority answered, an election error
  2    usage error: a bad flag or value (the message names it)
  3    status: waiting: no majority of nodes votes yet because some are
       quarantined (new or restarted nodes; the verdict says how long is left)
  N    run: COMMAND's exit code, 128+S if a signal S killed it; 0 if interrupted
       while standing by
  127  run: COMMAND not found or could not be started
  doctor has its own: 0 all ok or info, 1 a warning, 2 a failure, 3 a usage
       error or no node answered
`

// run is the whole CLI: it parses args (without the program name), runs
// the command, and returns the exit code. ctx's cancellation is an
// interruption: when its cause is a [signalCause], run forwards that
// signal to a running child. It writes to stdout and stderr only, through
// the password filter, and reads the environment (REDLEASE_NODES).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	out := &outputs{rawOut: stdout, rawErr: stderr, out: newRedactWriter(stdout), err: newRedactWriter(stderr), getenv: os.Getenv}
	if len(args) == 0 {
		fmt.Fprint(out.err, usageText)
		return exitUsage
	}
	switch args[0] {
	case "run":
		return cmdRun(ctx, args[1:], out)
	case "status":
		return cmdStatus(ctx, args[1:], out)
	case "watch":
		return cmdWatch(ctx, args[1:], out)
	case "resign":
		return cmdResign(ctx, args[1:], out)
	case "bootstrap":
		return cmdBootstrap(ctx, args[1:], out)
	case "library":
		return cmdLibrary(ctx, args[1:], out)
	case "doctor":
		return cmdDoctor(ctx, args[1:], out)
	case watchdogCmd: // hidden: run re-executes itself so (see startWatched)
		return cmdWatchdog(args[1:], out)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(out.out, usageText)
		return exitOK
	default:
		fmt.Fprintf(out.err, "redlease: unknown command %q (want run, status, watch, resign, bootstrap, library or doctor)\n\n%s", args[0], usageText)
		return exitUsage
	}
}

// outputs are a command's output streams.
type outputs struct {
	rawOut, rawErr io.Writer // for the child of run: its output is its own
	out, err       *redactWriter
	getenv         func(string) string
}

// hideSecrets makes the output filter replace the nodes' passwords.
func (o *outputs) hideSecrets(set *nodeSet) {
	r := newRedactor(set.secrets)
	o.out.setRedactor(r)
	o.err.setRedactor(r)
}

// logger is the logger of a command, on stderr, at level unless verbose.
func (o *outputs) logger(level hclog.Level, verbose bool) hclog.Logger {
	if verbose {
		level = hclog.Debug
	}
	// Flat: one line per record, a joined error's parts separated by "; ".
	return logx.Flat(hclog.New(&hclog.LoggerOptions{Name: "redlease", Level: level, Output: o.err}))
}

// usageError is an error in the command line: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// command is what every command shares: its flags and its output.
type command struct {
	name  string
	usage string
	fs    *flag.FlagSet
	conn  connFlags
	out   *outputs
}

// newCommand makes the flag set of a command, with the connection flags.
// usage is the command's synopsis and what it does.
func newCommand(name, usage string, out *outputs) *command {
	c := &command{name: name, fs: flag.NewFlagSet("redlease "+name, flag.ContinueOnError), out: out}
	// The flag package prints nothing: errors are printed by fail, help
	// by parse (flag calls Usage on every error, not only for -h).
	c.fs.SetOutput(io.Discard)
	c.fs.Usage = func() {}
	c.usage = usage
	c.conn.register(c.fs)
	return c
}

// printUsage prints the command's help, its flags and exit codes.
func (c *command) printUsage() {
	w := c.out.out
	fmt.Fprintf(w, "%s\n\nFlags:\n", c.usage)
	c.fs.SetOutput(w)
	c.fs.PrintDefaults()
	c.fs.SetOutput(io.Discard)
	if c.name == "doctor" {
		fmt.Fprintln(w, "\nExit codes: 0 all ok or info, 1 a warning, 2 a failure, 3 usage error or no node answered.")
		return
	}
	fmt.Fprint(w, "\nExit codes: 0 ok, 1 runtime error, 2 usage error")
	if c.name == "status" {
		fmt.Fprint(w, ", 3 waiting for quarantined nodes")
	}
	if c.name == "run" {
		fmt.Fprint(w, ", else COMMAND's code (128+S if killed by signal S), 127 if it cannot start")
	}
	fmt.Fprintln(w, ".")
}

// parse parses args. It returns the exit code to return at once (help, a
// bad flag), or -1 to go on.
func (c *command) parse(args []string) int {
	err := c.fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		c.printUsage()
		return exitOK
	case err != nil:
		return c.fail(usagef("%v", err))
	}
	return -1
}

// fail prints err on one line (a joined error's parts separated by "; "),
// prefixed with the command, and returns its exit code: 2 for a usage
// error, 1 otherwise.
func (c *command) fail(err error) int {
	if _, ok := errors.AsType[*usageError](err); ok {
		fmt.Fprintf(c.out.err, "redlease %s: %v\nRun 'redlease %s --help' for usage.\n", c.name, err, c.name)
		return exitUsage
	}
	fmt.Fprintf(c.out.err, "redlease %s: %v\n", c.name, logx.FlatError{Err: err})
	return exitError
}

// nodeSet validates the connection flags and parses the node list, and
// hides the nodes' passwords from the output from then on.
func (c *command) nodeSet() (*nodeSet, error) {
	if err := c.conn.validate(c.fs); err != nil {
		return nil, err
	}
	set, err := c.conn.resolveNodes(c.out.getenv)
	if set != nil {
		c.out.hideSecrets(set)
	}
	return set, err
}

// requireName checks --name.
func requireName(name string) error {
	if name == "" {
		return usagef("--name is required: the election's name (its key on the nodes)")
	}
	return nil
}

// noArgs refuses positional arguments, naming the first.
func noArgs(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}
