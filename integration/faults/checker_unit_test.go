package faults

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/checker"
	"github.com/redlease/redlease/internal/testing/checker/wire"
)

// Synthetic histories for the checkers: a clean one passes, and each kind
// of violation is reported. (The negative controls of TestFaults feed them
// real histories made with a guard turned off.)

const msec = int64(1e6)

// tenure is the events of one clean term of pid: elected at ts with token,
// valid for 1s, believed in from ts+1ms to ts+500ms, ended (resigned) at
// ts+501ms.
func tenure(pid int, ts int64, token uint64) []wire.Event {
	id := fmt.Sprintf("c%d", pid)
	return []wire.Event{
		{Ev: wire.Elected, ID: id, PID: pid, TS: ts, T: ts, Token: token, VU: ts + 1000*msec, DL: ts + 950*msec},
		{Ev: wire.Write, ID: id, PID: pid, TS: ts, T: ts + 2*msec, Token: token, OK: true},
		{Ev: wire.Belief, ID: id, PID: pid, TS: ts, T: ts + 501*msec, Token: token, First: ts + msec, Last: ts + 500*msec, N: 500},
		{Ev: wire.Stepdown, ID: id, PID: pid, TS: ts, T: ts + 501*msec, Token: token},
		{Ev: wire.Demoted, ID: id, PID: pid, TS: ts, T: ts + 502*msec, Token: token, VU: ts + 1000*msec, Cause: "election: resigned"},
	}
}

func history3(edit func(evs []wire.Event) []wire.Event) []wire.Event {
	var evs []wire.Event
	evs = append(evs, tenure(1, 1000*msec, 1)...)
	evs = append(evs, tenure(2, 2000*msec, 2)...)
	evs = append(evs, tenure(3, 3000*msec, 3)...)
	if edit != nil {
		evs = edit(evs)
	}
	return evs
}

func checkAll(evs []wire.Event) (c1, c2, c4 []string) {
	ts, orphans := checker.Terms(evs)
	return checker.C1(ts, orphans), checker.C2(ts), checker.C4(ts, c4Slack)
}

func TestCheckers(t *testing.T) {
	c1, c2, c4 := checkAll(history3(nil))
	require.Empty(t, c1)
	require.Empty(t, c2)
	require.Empty(t, c4)

	set := setEvents
	for _, tc := range []struct {
		name    string
		edit    func([]wire.Event) []wire.Event
		checker int // 1, 2 or 4
		want    string
	}{
		{"belief into the next term", set(1, wire.Belief, func(ev *wire.Event) { ev.Last = 2000 * msec }), 1, "tenures overlap: term 1 of c1"},
		{"write into the next term", set(2, wire.Write, func(ev *wire.Event) { ev.T = 3100 * msec }), 1, "term 2 of c2 (pid 2) believed it led 100.000ms after term 3"},
		{"belief past validity", set(3, wire.Belief, func(ev *wire.Event) { ev.Last = 4001 * msec }), 1, "believed it led 1.000ms after its validity ended"},
		{"belief in no term", func(evs []wire.Event) []wire.Event {
			return append(evs, wire.Event{Ev: wire.Belief, ID: "c9", PID: 9, TS: 5, First: 5, Last: 6, N: 1})
		}, 1, "in a term that never began"},
		{"equal tokens", set(2, wire.Elected, func(ev *wire.Event) { ev.Token = 1 }), 2, "term 1 of c2 (pid 2) began 1000.000ms after term 1 of c1"},
		{"token goes back", set(3, wire.Elected, func(ev *wire.Event) { ev.Token = 0 }), 2, "with a token that is not greater"},
		{"stepdown late", set(2, wire.Stepdown, func(ev *wire.Event) { ev.T = 3000*msec + c4Slack.Nanoseconds() + msec }), 4,
			fmt.Sprintf("saw its term end %d.000ms after its validity ended", c4Slack.Milliseconds()+1)},
		{"no stepdown", func(evs []wire.Event) []wire.Event {
			return set(2, wire.Stepdown, func(ev *wire.Event) { ev.Ev = "dropped" })(evs)
		}, 4, "term 2 of c2 (pid 2) never saw its term end"},
		{"no demotion", set(3, wire.Demoted, func(ev *wire.Event) { ev.Ev = "dropped" }), 4, "was never demoted"},
		{"belief past the final validity", // the validity is the last one reported (here by OnDemoted)
			set(3, wire.Demoted, func(ev *wire.Event) { ev.VU = 3400 * msec }), 1,
			"term 3 of c3 (pid 3) believed it led 100.000ms after its validity ended"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c1, c2, c4 := checkAll(history3(tc.edit))
			got := map[int][]string{1: c1, 2: c2, 4: c4}[tc.checker]
			require.NotEmpty(t, got, "C%d saw nothing", tc.checker)
			assert.Contains(t, strings.Join(got, "\n"), tc.want)
		})
	}

	t.Run("a paused or killed holder is not held to C4", testPausedHolder)
}

// setEvents changes the events of the term of pid that match kind.
func setEvents(pid int, kind string, f func(*wire.Event)) func([]wire.Event) []wire.Event {
	return func(evs []wire.Event) []wire.Event {
		for i := range evs {
			if evs[i].PID == pid && evs[i].Ev == kind {
				f(&evs[i])
			}
		}
		return evs
	}
}

// testPausedHolder: a holder paused or killed during its term is not held
// to C4 (it could not see its term end in time).
func testPausedHolder(t *testing.T) {
	set := setEvents
	evs := history3(set(2, wire.Stepdown, func(ev *wire.Event) { ev.T = 3500 * msec }))
	_, _, c4 := checkAll(evs)
	require.NotEmpty(t, c4)
	evs = append(evs, wire.Event{Ev: checker.Pause, PID: 2, T: 2100 * msec}, wire.Event{Ev: checker.Resume, PID: 2, T: 3400 * msec})
	_, _, c4 = checkAll(evs)
	require.Empty(t, c4)
	_, _, c4 = checkAll(history3(func(evs []wire.Event) []wire.Event {
		evs = set(3, wire.Stepdown, func(ev *wire.Event) { ev.Ev = "dropped" })(evs)
		evs = set(3, wire.Demoted, func(ev *wire.Event) { ev.Ev = "dropped" })(evs)
		return append(evs, wire.Event{Ev: checker.Kill, PID: 3, T: 3200 * msec})
	}))
	require.Empty(t, c4)
}

// TestStore: the fenced store refuses stale and repeated tokens and so
// keeps read-modify-writes whole; the unfenced one loses updates, and C3
// says so.
func TestStore(t *testing.T) {
	call := func(s *store, op, id string, token uint64, base int64) (int64, int) {
		q := url.Values{"id": {id}, "token": {strconv.FormatUint(token, 10)}, "ts": {"7"}, "base": {strconv.FormatInt(base, 10)}}
		resp, err := http.Get(s.url() + "/" + op + "?" + q.Encode())
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		v, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return v, resp.StatusCode
	}
	// interleave: a (token 1) reads, b (token 2) reads and writes, a writes.
	interleave := func(s *store) int {
		va, _ := call(s, "read", "a", 1, 0)
		vb, _ := call(s, "read", "b", 2, 0)
		_, sb := call(s, "write", "b", 2, vb)
		require.Equal(t, http.StatusOK, sb)
		_, sa := call(s, "write", "a", 1, va)
		return sa
	}

	fenced := newStore(t, true)
	assert.Equal(t, http.StatusConflict, interleave(fenced), "the stale write passed the fence")
	assert.Empty(t, fenced.check())
	_, st := call(fenced, "read", "c", 2, 0)
	assert.Equal(t, http.StatusConflict, st, "a second holder of token 2 was let in")
	assert.Contains(t, strings.Join(fenced.check(), "\n"), "token 2 used by two terms")

	unfenced := newStore(t, false)
	assert.Equal(t, http.StatusOK, interleave(unfenced))
	assert.Contains(t, strings.Join(unfenced.check(), "\n"), "lost update: a/7 (token 1) wrote 1 from a read of 0, over 1")
}
