//go:build !unix

package main

import (
	"errors"
	"io"
	"time"
)

// watchdogAvailable: no process groups to kill here; COMMAND runs under
// redlease alone (see README).
const watchdogAvailable = false

const watchdogCmd = "_watchdog"

func cmdWatchdog([]string, *outputs) int { return exitUsage }

func startWatched([]string, []string, io.Writer, io.Writer, time.Time, time.Duration) (*child, error) {
	return nil, errors.New("no watchdog on this system")
}

// watchdogLink: none here.
type watchdogLink struct{}

func (*watchdogLink) kill() watchdogKill { return watchdogKill{} }
