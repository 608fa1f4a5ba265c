package nodecheck

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The configuration check on its own, over a fake node: what it admits,
// what it refuses, and when it reads the node's configuration again.

var errInvalid = errors.New("invalid config")

// replyErr is a server's error reply (redis.Error).
type replyErr string

func (e replyErr) Error() string { return string(e) }
func (replyErr) RedisError()     {}

type fakeNode struct {
	conf  Conf
	reads atomic.Int32
	mu    sync.Mutex
	read  func() (map[string]string, error)
}

func (n *fakeNode) Name() string { return "node#0" }
func (n *fakeNode) Conf() *Conf  { return &n.conf }
func (n *fakeNode) ReadConf(context.Context) (map[string]string, error) {
	n.reads.Add(1)
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.read()
}

func policy(p string) func() (map[string]string, error) {
	return func() (map[string]string, error) { return map[string]string{"maxmemory-policy": p}, nil }
}

func newChecker(t *testing.T) (*Checker, *sync.WaitGroup) {
	wg := &sync.WaitGroup{}
	t.Cleanup(wg.Wait)
	return &Checker{Invalid: errInvalid, Timeout: Stale, Log: hclog.NewNullLogger(), WG: wg}, wg
}

func TestAdmitRefusesEvicting(t *testing.T) {
	ch, _ := newChecker(t)
	n := &fakeNode{read: policy("allkeys-lru")}
	err := ch.Admit(context.Background(), n)
	require.ErrorIs(t, err, errInvalid)
	assert.Contains(t, err.Error(), "node node#0 has maxmemory-policy allkeys-lru")
	// A fresh verdict is given without reading again.
	require.ErrorIs(t, ch.Admit(context.Background(), n), errInvalid)
	assert.EqualValues(t, 1, n.reads.Load())

	ch.AllowEviction = true
	n = &fakeNode{read: policy("allkeys-lru")}
	assert.NoError(t, ch.Admit(context.Background(), n))
}

func TestAdmitNoEviction(t *testing.T) {
	ch, _ := newChecker(t)
	n := &fakeNode{read: policy("noeviction")}
	assert.NoError(t, ch.Admit(context.Background(), n))
}

// A node that refuses CONFIG GET is accepted and never read again.
func TestAdmitUncheckable(t *testing.T) {
	ch, wg := newChecker(t)
	n := &fakeNode{read: func() (map[string]string, error) {
		return nil, replyErr("NOPERM User has no permissions to run the 'config|get' command")
	}}
	assert.NoError(t, ch.Admit(context.Background(), n))
	wg.Wait()
	assert.NoError(t, ch.Admit(context.Background(), n))
	assert.EqualValues(t, 1, n.reads.Load())
}

// A failed read fails the vote, naming the step.
func TestAdmitReadFails(t *testing.T) {
	ch, _ := newChecker(t)
	n := &fakeNode{read: func() (map[string]string, error) { return nil, replyErr("ERR something odd") }}
	err := ch.Admit(context.Background(), n)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "configuration check (maxmemory-policy): ERR something odd")
}

// First records the start-up verdict, which Admit then gives while fresh.
func TestFirstThenAdmit(t *testing.T) {
	ch, _ := newChecker(t)
	n := &fakeNode{read: policy("volatile-lru")}
	conf, err := ch.First(context.Background(), n)
	require.ErrorIs(t, err, errInvalid)
	assert.Equal(t, "volatile-lru", conf["maxmemory-policy"])
	require.ErrorIs(t, ch.Admit(context.Background(), n), errInvalid)
	assert.EqualValues(t, 1, n.reads.Load())

	n = &fakeNode{read: func() (map[string]string, error) { return nil, replyErr("ERR unknown command 'config'") }}
	conf, err = ch.First(context.Background(), n)
	assert.NoError(t, err)
	assert.Nil(t, conf)
}
