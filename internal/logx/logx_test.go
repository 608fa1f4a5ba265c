package logx

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var joined = errors.Join(errors.New("node a: refused"), errors.New("node b: timeout"))

// A joined error is one line in hclog's output: one record, the parts
// separated by "; ", and errors.Is still finds the parts.
func TestFlatHclog(t *testing.T) {
	var b bytes.Buffer
	l := Flat(hclog.New(&hclog.LoggerOptions{Output: &b, Level: hclog.Trace}))
	l.Warn("acquire failed", "key", "k", "error", joined)
	l.With("id", "x").Named("sub").Info("demoted", "cause", joined, "stack", "line 1\nline 2")
	out := b.String()
	require.Equal(t, 2, strings.Count(out, "\n"), out)
	assert.Contains(t, out, `error="node a: refused; node b: timeout"`)
	assert.Contains(t, out, `stack="line 1; line 2"`)
	assert.Contains(t, out, "id=x")

	// The control: hclog alone spreads the joined error over lines.
	b.Reset()
	hclog.New(&hclog.LoggerOptions{Output: &b}).Warn("acquire failed", "error", joined)
	assert.Greater(t, strings.Count(b.String(), "\n"), 1, b.String())

	assert.Same(t, l, Flat(l), "wrapped once")
	null := hclog.NewNullLogger()
	assert.Equal(t, null, Flat(null), "a null logger is left alone")
	assert.NotNil(t, Flat(nil))
	assert.ErrorIs(t, FlatError{joined}, joined)
}

// The slog adapter: levels, attributes, names, implied args, source, and
// one JSON record per event with the error as an attribute.
func TestFromSlog(t *testing.T) {
	var b bytes.Buffer
	sl := slog.New(slog.NewJSONHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug, AddSource: true}))
	l := FromSlog(sl)
	assert.False(t, l.IsTrace())
	assert.True(t, l.IsDebug())
	assert.Equal(t, hclog.Debug, l.GetLevel())
	l.Trace("not written")
	l.Named("redlock").With("key", "k").Warn("refresh failed", "node", "n1", "error", joined)
	l.Log(hclog.Error, "lost", "token", uint64(7))

	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 2, b.String())
	var rec map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &rec))
	assert.Equal(t, "WARN", rec["level"])
	assert.Equal(t, "refresh failed", rec["msg"])
	assert.Equal(t, "redlock", rec["logger"])
	assert.Equal(t, "k", rec["key"])
	assert.Equal(t, "n1", rec["node"])
	assert.Equal(t, "node a: refused; node b: timeout", rec["error"])
	src, _ := rec["source"].(map[string]any)
	assert.Contains(t, src["file"], "logx_test.go", "the caller's position, not the adapter's")
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &rec))
	assert.Equal(t, "ERROR", rec["level"])
	assert.EqualValues(t, 7, rec["token"])

	// Trace maps below Debug.
	b.Reset()
	FromSlog(slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: LevelTrace}))).Trace("t", "error", joined)
	assert.Equal(t, 1, strings.Count(b.String(), "\n"), b.String())
	assert.Contains(t, b.String(), "level=DEBUG-4")
	assert.NotNil(t, FromSlog(nil))
	assert.NotNil(t, l.StandardLogger(nil))
}

// Durations are written rounded to 3 significant digits (never finer than
// needed, never coarser than 1ms), by hclog through Flat and by slog
// through FromSlog alike.
func TestDurationsRounded(t *testing.T) {
	for _, tc := range []struct {
		in, want time.Duration
	}{
		{172333333 * time.Nanosecond, 172 * time.Millisecond},
		{1234567 * time.Nanosecond, 1230 * time.Microsecond},
		{350123 * time.Nanosecond, 350 * time.Microsecond},
		{9412345678 * time.Nanosecond, 9412 * time.Millisecond},
		{-172333333 * time.Nanosecond, -172 * time.Millisecond},
		{999, 999},
		{0, 0},
		{10 * time.Second, 10 * time.Second},
	} {
		assert.Equal(t, tc.want, RoundDuration(tc.in), "%s", tc.in)
	}

	var b bytes.Buffer
	Flat(hclog.New(&hclog.LoggerOptions{Output: &b})).With("ttl", 2*time.Second/3).
		Info("renewed", "elapsed", 172333333*time.Nanosecond)
	assert.Contains(t, b.String(), "ttl=667ms")
	assert.Contains(t, b.String(), "elapsed=172ms")

	b.Reset()
	FromSlog(slog.New(slog.NewTextHandler(&b, nil))).Info("renewed", "elapsed", 172333333*time.Nanosecond)
	assert.Contains(t, b.String(), "elapsed=172ms")
}
