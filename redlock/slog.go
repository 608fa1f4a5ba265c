package redlock

import (
	"log/slog"

	"github.com/hashicorp/go-hclog"

	"github.com/redlease/redlease/internal/logx"
)

// SlogLogger returns a logger for the Logger field of the Configs of
// redlock, lease, election and observer that writes to l, a *slog.Logger
// (nil: slog.Default()): hclog's levels map to slog's (Trace is slog's
// Debug-4), key/value pairs become attributes with the stable keys of
// docs/observability.md, the name of a sub-logger becomes the attribute
// "logger", and records carry their caller's source position. The level
// is the handler's: SetLevel does nothing. Every record is one event on
// one line: an error is an attribute ("error"), and an error joining
// several (errors.Join) is written with its parts separated by "; ".
//
//	cfg := redlock.Config{Logger: redlock.SlogLogger(slog.Default())}
func SlogLogger(l *slog.Logger) hclog.Logger { return logx.FromSlog(l) }
