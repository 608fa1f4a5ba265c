// Package logx holds what the packages' loggers share: the adapter that
// makes a *slog.Logger an hclog.Logger (redlock.SlogLogger), and the
// wrapper that keeps every record on one line (Flat).
//
// Every record the library writes is one event: a message and key/value
// pairs with the stable keys of docs/observability.md; durations are
// rounded to 3 significant digits (RoundDuration). An error goes under
// a key ("error", "cause", ...) as an attribute, never in the message; an
// error made by errors.Join, whose text has one line per error, is written
// on one line with its parts separated by "; ".
//
// See docs/design.md §1.2 for the internal packages.
package logx

import (
	"context"
	"io"
	"log"
	"log/slog"
	"runtime"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
)

// LevelTrace is the slog level of hclog's Trace: below Debug.
const LevelTrace = slog.LevelDebug - 4

// Flat returns l wrapped so that no value it is given spans lines (see
// flatten): hclog writes a multi-line value as an indented block, one
// record over several lines. A logger from FromSlog, a null logger and a
// logger wrapped already are returned as they are.
func Flat(l hclog.Logger) hclog.Logger {
	switch l.(type) {
	case nil:
		return hclog.NewNullLogger()
	case *flat, *slogLogger:
		return l
	}
	if !l.IsError() {
		return l // silent (a null logger): nothing to flatten
	}
	return &flat{Logger: l}
}

// flat is an hclog.Logger whose values are flattened before they reach
// the logger it wraps.
type flat struct{ hclog.Logger }

// The level is checked before the values are flattened: flattening an
// error formats it, which a disabled level must not pay for.

func (f *flat) Log(level hclog.Level, msg string, args ...any) {
	f.Logger.Log(level, msg, flatten(args)...)
}

func (f *flat) Trace(msg string, args ...any) {
	if f.Logger.IsTrace() {
		f.Logger.Trace(msg, flatten(args)...)
	}
}

func (f *flat) Debug(msg string, args ...any) {
	if f.Logger.IsDebug() {
		f.Logger.Debug(msg, flatten(args)...)
	}
}

func (f *flat) Info(msg string, args ...any) {
	if f.Logger.IsInfo() {
		f.Logger.Info(msg, flatten(args)...)
	}
}

func (f *flat) Warn(msg string, args ...any) {
	if f.Logger.IsWarn() {
		f.Logger.Warn(msg, flatten(args)...)
	}
}

func (f *flat) Error(msg string, args ...any) { f.Logger.Error(msg, flatten(args)...) }
func (f *flat) With(args ...any) hclog.Logger { return &flat{f.Logger.With(flatten(args)...)} }
func (f *flat) Named(name string) hclog.Logger {
	return &flat{f.Logger.Named(name)}
}
func (f *flat) ResetNamed(name string) hclog.Logger {
	return &flat{f.Logger.ResetNamed(name)}
}

// flatten returns args with every error replaced by a FlatError, every
// string that spans lines by its lines joined with "; ", and every
// duration rounded by RoundDuration. It copies args only when it changes
// one.
func flatten(args []any) []any {
	out := args
	for i, a := range args {
		var v any
		switch x := a.(type) {
		case FlatError:
			continue
		case error:
			if x == nil || !strings.Contains(x.Error(), "\n") {
				continue
			}
			v = FlatError{x}
		case string:
			if !strings.Contains(x, "\n") {
				continue
			}
			v = oneLine(x)
		case time.Duration:
			if v = RoundDuration(x); v == x {
				continue
			}
		default:
			continue
		}
		if &out[0] == &args[0] {
			out = append([]any(nil), args...)
		}
		out[i] = v
	}
	return out
}

// FlatError is an error whose text is written on one line: the lines of
// its text (one per error of an errors.Join) joined with "; ". It unwraps
// to the error it holds.
type FlatError struct{ Err error }

func (e FlatError) Error() string { return oneLine(e.Err.Error()) }

// Unwrap returns the error it holds.
func (e FlatError) Unwrap() error { return e.Err }

// oneLine joins the non-empty lines of s with "; ".
func oneLine(s string) string {
	lines := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	return strings.Join(lines, "; ")
}

// FromSlog returns an hclog.Logger that writes to l: hclog's levels map to
// slog's (Trace is LevelTrace, below Debug), its key/value pairs become
// attributes, a name given by Named becomes the attribute "logger", and
// values are flattened as by Flat. Records carry the caller's source
// position. SetLevel does nothing: the level is the handler's. A nil l
// is slog.Default().
func FromSlog(l *slog.Logger) hclog.Logger {
	if l == nil {
		l = slog.Default()
	}
	return &slogLogger{base: l, l: l}
}

type slogLogger struct {
	base    *slog.Logger // as given
	l       *slog.Logger // base with the name and the implied args
	name    string
	implied []any
}

// slogLevel maps an hclog level to slog's.
func slogLevel(level hclog.Level) slog.Level {
	switch level {
	case hclog.Trace:
		return LevelTrace
	case hclog.Debug:
		return slog.LevelDebug
	case hclog.Warn:
		return slog.LevelWarn
	case hclog.Error:
		return slog.LevelError
	default:
		return slog.LevelInfo
	}
}

// log writes one record, with the source position of the caller of the
// hclog method that called it.
func (s *slogLogger) log(level slog.Level, msg string, args []any) {
	ctx := context.Background()
	if !s.l.Enabled(ctx, level) {
		return
	}
	var pcs [1]uintptr
	runtime.Callers(3, pcs[:]) // runtime.Callers, log, the hclog method
	r := slog.NewRecord(time.Now(), level, msg, pcs[0])
	r.Add(flatten(args)...)
	_ = s.l.Handler().Handle(ctx, r)
}

func (s *slogLogger) Log(level hclog.Level, msg string, args ...any) {
	s.log(slogLevel(level), msg, args)
}
func (s *slogLogger) Trace(msg string, args ...any) { s.log(LevelTrace, msg, args) }
func (s *slogLogger) Debug(msg string, args ...any) { s.log(slog.LevelDebug, msg, args) }
func (s *slogLogger) Info(msg string, args ...any)  { s.log(slog.LevelInfo, msg, args) }
func (s *slogLogger) Warn(msg string, args ...any)  { s.log(slog.LevelWarn, msg, args) }
func (s *slogLogger) Error(msg string, args ...any) { s.log(slog.LevelError, msg, args) }

func (s *slogLogger) enabled(level slog.Level) bool { return s.l.Enabled(context.Background(), level) }
func (s *slogLogger) IsTrace() bool                 { return s.enabled(LevelTrace) }
func (s *slogLogger) IsDebug() bool                 { return s.enabled(slog.LevelDebug) }
func (s *slogLogger) IsInfo() bool                  { return s.enabled(slog.LevelInfo) }
func (s *slogLogger) IsWarn() bool                  { return s.enabled(slog.LevelWarn) }
func (s *slogLogger) IsError() bool                 { return s.enabled(slog.LevelError) }

func (s *slogLogger) ImpliedArgs() []any { return append([]any(nil), s.implied...) }

// derive returns a logger with the given name and implied args.
func (s *slogLogger) derive(name string, implied []any) *slogLogger {
	l := s.base
	if name != "" {
		l = l.With("logger", name)
	}
	if len(implied) > 0 {
		l = l.With(flatten(implied)...)
	}
	return &slogLogger{base: s.base, l: l, name: name, implied: implied}
}

func (s *slogLogger) With(args ...any) hclog.Logger {
	return s.derive(s.name, append(append([]any(nil), s.implied...), args...))
}

func (s *slogLogger) Name() string { return s.name }

func (s *slogLogger) Named(name string) hclog.Logger {
	if s.name != "" {
		name = s.name + "." + name
	}
	return s.derive(name, s.implied)
}

func (s *slogLogger) ResetNamed(name string) hclog.Logger { return s.derive(name, s.implied) }

// SetLevel does nothing: the slog handler decides the level.
func (s *slogLogger) SetLevel(hclog.Level) {}

// GetLevel returns the lowest hclog level the handler writes.
func (s *slogLogger) GetLevel() hclog.Level {
	for _, l := range []hclog.Level{hclog.Trace, hclog.Debug, hclog.Info, hclog.Warn, hclog.Error} {
		if s.enabled(slogLevel(l)) {
			return l
		}
	}
	return hclog.Off
}

func (s *slogLogger) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	level := slog.LevelInfo
	if opts != nil && opts.ForceLevel != hclog.NoLevel {
		level = slogLevel(opts.ForceLevel)
	}
	return slog.NewLogLogger(s.l.Handler(), level)
}

func (s *slogLogger) StandardWriter(opts *hclog.StandardLoggerOptions) io.Writer {
	return s.StandardLogger(opts).Writer()
}
