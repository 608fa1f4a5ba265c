package redlock

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/redlease/redlease/internal/testing/testnodes"
)

// reply is a server's error reply, classified as redlock receives it.
func reply(msg string) error { return classify(testnodes.ReplyError(msg)) }

func TestEventOutcome(t *testing.T) {
	qe := func(need int, votes ...NodeResult) error {
		return &QuorumError{Op: "acquire", Key: "k", Need: need, Nodes: votes, target: ErrNotAcquired}
	}
	no := NodeResult{Node: "n"}
	yes := NodeResult{Node: "n", Yes: true}
	late := NodeResult{Node: "n", Err: errNodeTimeout{D: 50 * time.Millisecond, NodeTimeout: true}}
	down := NodeResult{Node: "n", Err: errors.New("dial tcp: connection refused")}
	wrongType := NodeResult{Node: "n", Err: reply("WRONGTYPE Operation against a key holding the wrong kind of value")}
	quarantined := NodeResult{Node: "n", Quarantined: true, Quarantine: time.Second}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, "ok"},
		{qe(2, no, no, yes), "busy"},
		{fmt.Errorf("lease: %w", qe(2, no, no, down)), "busy"},
		{qe(2, wrongType, wrongType, yes), "refused"},
		{fmt.Errorf("%w: bad TTL", ErrInvalidArgument), "refused"},
		{ErrClosed, "refused"},
		{reply("NOPERM this user has no permissions to access one of the keys"), "refused"},
		{qe(2, late, late, yes), "timeout"},
		{errNodeTimeout{D: time.Second, NodeTimeout: false}, "timeout"},
		{context.DeadlineExceeded, "timeout"},
		{qe(2, down, late, yes), "error"},
		{qe(2, quarantined, quarantined, yes), "error"},
		{qe(2, wrongType, no, yes), "error"},
		{errors.Join(errors.New("x"), context.Canceled), "error"},
	} {
		assert.Equal(t, tc.want, outcome(tc.err), "%v", tc.err)
	}
}

func TestEventKindIsTheOpLabel(t *testing.T) {
	for k, want := range map[EventKind]string{EventAcquire: "acquire", EventExtend: "extend",
		EventRelease: "release", EventLost: "lost", EventNodeError: "node_error"} {
		assert.Equal(t, want, string(k))
	}
}
