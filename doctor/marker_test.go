package doctor_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/doctor"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/redlock"
)

// slowNode is the NodeTimeout of the redlock clients that write markers:
// far above a loaded machine's round trips, so that every marker is
// written before New returns (a node that times out is only logged).
const slowNode = 2 * time.Second

// touch has a redlock client of MaxTTL maxTTL meet the node (New writes
// its marker), bootstrapping it when asked, and closes it.
func touch(t *testing.T, maxTTL time.Duration, bootstrap bool, addr string) {
	t.Helper()
	ctx := context.Background()
	c := redistest.NewClient(t, redistest.FastOptions(addr))
	rl, err := redlock.New(ctx, redlock.Config{MaxTTL: maxTTL, NodeTimeout: slowNode}, c)
	require.NoError(t, err)
	if bootstrap {
		require.NoError(t, rl.Bootstrap(ctx))
	}
	require.NoError(t, rl.Close())
}

// The marker redlock writes, read and never written: none on a fresh
// server (info); New's, in quarantine (info) and recording its MaxTTL (ok
// when it is the run's, warn when another, either way); bootstrapped, it
// votes (ok); after a restart from the AOF, another run_id (info); with
// another replication ID (set by hand, undone), another dataset (info).
func TestDoctorMarker(t *testing.T) {
	s, c := start(t, redistest.Options{Persistence: redistest.PersistAOF})
	ctx := context.Background()
	cfg := fast()
	cfg.MaxTTL = 20 * time.Second
	rep := run(t, cfg, "", s.Addr())
	assertRisky(t, finding(t, rep, 0, doctor.CheckMarker), doctor.Info, "no marker")
	assert.Contains(t, finding(t, rep, 0, doctor.CheckMarker).Risk, "quarantines it for MaxTTL (20s)")
	assertOK(t, finding(t, rep, 0, doctor.CheckMaxTTL), "no marker records a MaxTTL")
	n, err := c.Exists(ctx, "{redlease}:marker").Result()
	require.NoError(t, err)
	require.Zero(t, n, "doctor wrote no marker")

	touch(t, 20*time.Second, false, s.Addr())
	created := c.HGet(ctx, "{redlease}:marker", "c").Val()
	rep = run(t, cfg, "", s.Addr())
	assertRisky(t, finding(t, rep, 0, doctor.CheckMarker), doctor.Info, "in quarantine: ")
	assertOK(t, finding(t, rep, 0, doctor.CheckMaxTTL), "record MaxTTL 20s, this run's")
	cfg.MaxTTL = 30 * time.Second
	f := finding(t, run(t, cfg, "", s.Addr()), 0, doctor.CheckMaxTTL)
	assertRisky(t, f, doctor.Warn, "a marker records MaxTTL 20s, this run's is 30s")
	assert.Contains(t, f.Risk, "two holders")
	assert.Contains(t, f.Risk, "refuses TTLs above 20s")
	cfg.MaxTTL = 10 * time.Second
	f = finding(t, run(t, cfg, "", s.Addr()), 0, doctor.CheckMaxTTL)
	assertRisky(t, f, doctor.Warn, "records MaxTTL 20s, this run's is 10s")
	assert.NotContains(t, f.Risk, "refuses")
	assert.Equal(t, created, c.HGet(ctx, "{redlease}:marker", "c").Val(), "the marker as New wrote it")

	touch(t, 20*time.Second, true, s.Addr())
	cfg.MaxTTL = 20 * time.Second
	assertOK(t, finding(t, run(t, cfg, "", s.Addr()), 0, doctor.CheckMarker), "marker of this server")

	replID := c.HGet(ctx, "{redlease}:marker", "p").Val()
	require.NoError(t, c.HSet(ctx, "{redlease}:marker", "p", "0123456789abcdef").Err())
	assertRisky(t, finding(t, run(t, cfg, "", s.Addr()), 0, doctor.CheckMarker), doctor.Info, "another dataset (replication ID 0123456789ab...")
	require.NoError(t, c.HSet(ctx, "{redlease}:marker", "p", replID).Err())

	require.NoError(t, s.Restart(false))
	rep = run(t, cfg, "", s.Addr())
	assertRisky(t, finding(t, rep, 0, doctor.CheckMarker), doctor.Info, "marker written by another server process")
	assertOK(t, finding(t, rep, 0, doctor.CheckMaxTTL), "record MaxTTL 20s")
}

// With the quarantine disabled the marker keeps the highest token only:
// a missing one is ok.
func TestDoctorMarkerNoQuarantine(t *testing.T) {
	s, _ := start(t)
	cfg := fast()
	cfg.DisableQuarantine = true
	assertOK(t, finding(t, run(t, cfg, "", s.Addr()), 0, doctor.CheckMarker), "quarantine disabled")
}

// assertOK checks a finding is ok, with found in what it found.
func assertOK(t *testing.T, f doctor.Finding, found string) {
	t.Helper()
	assert.Equal(t, doctor.OK, f.Severity, "%+v", f)
	assert.Contains(t, f.Found, found)
}
