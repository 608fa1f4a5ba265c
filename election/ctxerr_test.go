package election

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/testnodes"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/observer"
	"github.com/redlease/redlease/redlock"
)

// ctxFixture is what the calls of TestEveryCallHonoursAnEndedContext act
// on: a client over three nodes, and a key held by a redlock lock, a lease
// and an elected elector each.
type ctxFixture struct {
	nodes  []redis.UniversalClient
	addrs  []string
	client *redlock.Client
	lock   *redlock.Lock // holds "ctx/lock"
	lease  *lease.Lease  // holds "ctx/lease"
	leader *running      // leads "ctx/election"
	obs    *observer.Observer
}

func newCtxFixture(t *testing.T) *ctxFixture {
	ms, nodes := testnodes.Minis(t, 3)
	f := &ctxFixture{nodes: nodes, client: newClient(t, unitClientCfg, nodes)}
	for _, m := range ms {
		f.addrs = append(f.addrs, m.Addr())
	}
	ctx := context.Background()
	var err error
	f.lock, err = f.client.TryAcquire(ctx, "ctx/lock", 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.lock.Release(context.Background()) })
	f.lease, err = lease.TryAcquire(ctx, f.client, "ctx/lease", lease.Config{ID: "holder", TTL: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.lease.Release(context.Background()) })
	f.leader = start(t, newElector(t, f.client, "ctx/election", unitCfg(t, "leader")))
	require.Eventually(t, f.leader.IsLeader, 10*time.Second, time.Millisecond)
	f.obs, err = observer.New(f.client, "ctx/election", observer.Config{})
	require.NoError(t, err)
	return f
}

// ctxCalls are the exported calls of redlock, lease, observer and election
// that take a context (go doc -all ./<pkg> | grep context.Context), each
// reduced to its error.
//
// is, when set, is the call's own sentinel, which its error keeps; isNot,
// when set, is one the error must not match (a read cut short by its
// caller did not find that nobody holds the key).
var ctxCalls = []struct {
	name      string
	is, isNot error
	call      func(ctx context.Context, t *testing.T, f *ctxFixture) error
}{
	{"redlock.Dial", nil, nil, func(ctx context.Context, t *testing.T, f *ctxFixture) error {
		c, err := redlock.Dial(ctx, unitClientCfg, f.addrs, redlock.DialOptions{})
		closeIf(c)
		return err
	}},
	{"redlock.New", nil, nil, func(ctx context.Context, t *testing.T, f *ctxFixture) error {
		c, err := redlock.New(ctx, unitClientCfg, f.nodes...)
		closeIf(c)
		return err
	}},
	{"redlock.NewCluster", nil, nil, func(ctx context.Context, t *testing.T, f *ctxFixture) error {
		cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: f.addrs[:1]})
		defer cc.Close()
		c, err := redlock.NewCluster(ctx, unitClientCfg, cc, 3)
		closeIf(c)
		return err
	}},
	{"Client.Acquire", redlock.ErrNotAcquired, nil, func(ctx context.Context, t *testing.T, f *ctxFixture) error {
		_, err := f.client.Acquire(ctx, "ctx/lock", 5*time.Second) // held: it would wait
		return err
	}},
	{"Client.TryAcquire", redlock.ErrNotAcquired, nil, func(ctx context.Context, t *testing.T, f *ctxFixture) error {
		l, err := f.client.TryAcquire(ctx, "ctx/free", 5*time.Second)
		if err == nil {
			_ = l.Release(context.Background())
		}
		return err
	}},
	{"Client.Bootstrap", nil, nil, func(ctx context.Context, t *testing.T, f *ctxFixture) error {
		return f.client.Bootstrap(ctx)
	}},
	{"Client.Inspect", nil, redlock.ErrNoHolder, func(ctx context.Context, t *testing.T, f *ctxFixture) error {
		_, err := f.client.Inspect(ctx, "ctx/lock")
		return err
	}},
	{"Client.ExtendAll", nil, nil, func(ctx context.Context, t *testing.T, f *ctxFixture) error {
		errs := f.client.ExtendAll(ctx, []*redlock.Lock{f.lock})
		require.Len(t, errs, 1)
		return errs[0]
	}},
	{"Lock.Extend", nil, nil, func(ctx context.Context, t *testing.T, f *ctxFixture) error {
		return f.lock.Extend(ctx, 5*time.Second)
	}},
	{"Lock.Release", nil, nil, func(ctx context.Context, t *testing.T, f *ctxFixture) error {
		err := f.lock.Release(ctx)
		return err
	}},
	{"Client.Inspect", nil, redlock.ErrNoHolder, func(ctx context.Context, t *testing.T, f *ctxFixture) error {
		_, err := f.client.Inspect(ctx, "ctx/lease")
		return err
	}},
	{"lease.Acquire", redlock.ErrNotAcquired, nil, func(ctx context.Context, t *testing.T, f *ctxFixture) error {
		_, err := lease.Acquire(ctx, f.client, "ctx/lease", lease.Config{ID: "waiter", TTL: 5 * time.Second})
		return err
	}},
	{"lease.TryAcquire", redlock.ErrNotAcquired, nil, func(ctx context.Context, t *testing.T, f *ctxFixture) error {
		l, err := lease.TryAcquire(ctx, f.client, "ctx/free", lease.Config{ID: "other", TTL: 5 * time.Second})
		if err == nil {
			_ = l.Release(context.Background())
		}
		return err
	}},
	{"Lease.Release", nil, nil, func(ctx context.Context, t *testing.T, f *ctxFixture) error {
		return f.lease.Release(ctx)
	}},
	{"Observer.Leader", nil, redlock.ErrNoHolder, func(ctx context.Context, t *testing.T, f *ctxFixture) error {
		_, err := f.obs.Leader(ctx)
		return err
	}},
	{"Observer.Candidates", nil, nil, func(ctx context.Context, t *testing.T, f *ctxFixture) error {
		_, err := f.obs.Candidates(ctx)
		return err
	}},
	{"Observer.Watch", nil, nil, func(ctx context.Context, t *testing.T, f *ctxFixture) error {
		for range f.obs.Watch(ctx) {
		}
		return ctx.Err() // the channel closes when ctx ends
	}},
	{"Elector.Resign", nil, nil, func(ctx context.Context, t *testing.T, f *ctxFixture) error {
		return f.leader.Resign(ctx)
	}},
	{"Elector.Resign (no term)", nil, nil, func(ctx context.Context, t *testing.T, f *ctxFixture) error {
		e := newElector(t, f.client, "ctx/election", unitCfg(t, "standby"))
		return e.Resign(ctx)
	}},
	{"Elector.Run", nil, nil, func(ctx context.Context, t *testing.T, f *ctxFixture) error {
		e := newElector(t, f.client, "ctx/election", unitCfg(t, "standby"))
		return e.Run(ctx)
	}},
}

func closeIf(c *redlock.Client) {
	if c != nil {
		_ = c.Close()
	}
}

// TestEveryCallHonoursAnEndedContext: every exported call that takes a
// context, given one that was cancelled or whose deadline passed, returns
// an error matching the context's error (issue #32, item 2), keeping its
// own sentinel where it has one.
func TestEveryCallHonoursAnEndedContext(t *testing.T) {
	ended := map[string]func() (context.Context, context.CancelFunc){
		"cancelled": func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		},
		"expired": func() (context.Context, context.CancelFunc) {
			return context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		},
	}
	for _, tc := range ctxCalls {
		for how, mk := range ended {
			t.Run(tc.name+"/"+how, func(t *testing.T) {
				t.Parallel() // nodes of its own
				f := newCtxFixture(t)
				ctx, cancel := mk()
				defer cancel()
				done := make(chan error, 1)
				go func() { done <- tc.call(ctx, t, f) }()
				var err error
				select {
				case err = <-done:
				case <-time.After(10 * time.Second):
					t.Fatalf("%s did not return with an ended context", tc.name)
				}
				require.Error(t, err)
				assert.ErrorIs(t, err, ctx.Err(), "%s: %v", tc.name, err)
				other := context.Canceled
				if errors.Is(ctx.Err(), context.Canceled) {
					other = context.DeadlineExceeded
				}
				assert.NotErrorIs(t, err, other, "%s: %v", tc.name, err)
				if tc.is != nil {
					assert.ErrorIs(t, err, tc.is, "%s keeps its sentinel: %v", tc.name, err)
				}
				if tc.isNot != nil {
					assert.NotErrorIs(t, err, tc.isNot, "%s: %v", tc.name, err)
				}
			})
		}
	}
}

// TestCtxCallsCoverTheAPI: ctxCalls lists every exported function and
// method of redlock, lease, observer and election that takes a
// context.Context, so that a new one cannot miss the rule.
func TestCtxCallsCoverTheAPI(t *testing.T) {
	listed := map[string]bool{}
	for _, tc := range ctxCalls {
		name, _, _ := strings.Cut(tc.name, " (")
		listed[name] = true
	}
	var missing []string
	for _, pkg := range []string{"redlock", "lease", "observer", "election"} {
		for _, name := range ctxFuncs(t, filepath.Join("..", pkg), pkg) {
			if !listed[name] {
				missing = append(missing, name)
			}
		}
	}
	assert.Empty(t, missing, "exported calls taking a context but not in ctxCalls")
}

// ctxFuncs returns the exported functions ("pkg.Name") and methods of
// exported types ("Type.Name") declared in dir's non-test files that take
// a context.Context.
func ctxFuncs(t *testing.T, dir, pkg string) []string {
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !fd.Name.IsExported() || !takesContext(fd.Type) {
				continue
			}
			name := pkg + "." + fd.Name.Name
			if fd.Recv != nil {
				typ := fd.Recv.List[0].Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				id, ok := typ.(*ast.Ident)
				if !ok || !id.IsExported() {
					continue
				}
				name = id.Name + "." + fd.Name.Name
			}
			out = append(out, name)
		}
	}
	return out
}

func takesContext(ft *ast.FuncType) bool {
	for _, p := range ft.Params.List {
		if sel, ok := p.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Context" {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "context" {
				return true
			}
		}
	}
	return false
}
