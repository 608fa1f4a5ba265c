package fence

import (
	"context"
	"fmt"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/redlock"
)

// TestPause is the end-to-end case of each guard: leader A writes, is
// paused (SIGSTOP) past its TTL, B is elected and writes, A resumes and
// writes with its old token. Fenced: A's write is refused (naming B's
// token) and B's value stays. The NEGATIVE CONTROL (unfenced): A's stale
// write lands over B's.
func TestPause(t *testing.T) {
	for _, name := range []string{"redis", "postgres", "sqlite", "http"} {
		for _, fenced := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/fenced=%t", name, fenced), func(t *testing.T) {
				pauseCase(t, stores[name](t, fenced), fenced)
			})
		}
	}
}

func pauseCase(t *testing.T, st store, fenced bool) {
	node := electionNode(t)
	args := append([]string{"-node", node, "-ttl", "2s", "-fenced=" + strconv.FormatBool(fenced)}, st.args...)
	a := startLeader(t, "A", args...)
	ta := a.elected()
	require.Equal(t, fmt.Sprintf("ok %d", ta), a.write("a1"))
	require.Equal(t, "a1", st.value(t))

	a.signal(syscall.SIGSTOP)
	b := startLeader(t, "B", args...)
	tb := b.elected() // A's term lapsed while it was paused
	require.Greater(t, tb, ta, "B's token")
	require.Equal(t, fmt.Sprintf("ok %d", tb), b.write("b1"))

	a.send("a2") // decided before the pause; carried out after it
	a.signal(syscall.SIGCONT)
	got := a.next()
	if fenced {
		require.Equal(t, fmt.Sprintf("stale %d %d", ta, tb), got, "A's stale write must be refused, naming B's token")
		require.Equal(t, "b1", st.value(t), "B's write must stay")
		return
	}
	require.Equal(t, fmt.Sprintf("ok %d", ta), got, "negative control: the unfenced stale write is accepted")
	require.Equal(t, "a2", st.value(t), "negative control: A's stale write overwrote B's")
}

// electionNode starts the election's Redis node and bootstraps it (a
// brand-new node is quarantined until then).
func electionNode(t *testing.T) string {
	rc := redistest.Start(t, 1).Server(0).Client(t)
	c, err := redlock.New(context.Background(), redlock.Config{}, rc)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Bootstrap(context.Background()))
	return rc.Options().Addr
}
