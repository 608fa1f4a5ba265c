package fence_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/fence"
	"github.com/redlease/redlease/internal/testing/fencetest"
)

func TestLocal(t *testing.T) {
	var l fence.Local
	ctx := context.Background()
	value := ""
	set := func(v string) func(context.Context) error {
		return func(context.Context) error { value = v; return nil }
	}
	for _, step := range []struct {
		token   uint64
		value   string
		highest uint64 // > 0: refused, naming it
	}{
		{token: 3, value: "a"},
		{token: 3, value: "b"},
		{token: 2, value: "c", highest: 3},
		{token: 10, value: "d"},
		{token: 9, value: "e", highest: 10},
	} {
		err := l.Do(ctx, "r", step.token, set(step.value))
		if step.highest > 0 {
			assert.Equal(t, &fence.StaleTokenError{Resource: "r", Token: step.token, Highest: step.highest}, err)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, step.value, value)
	}
	assert.Equal(t, uint64(10), l.Highest("r"))
	assert.Equal(t, uint64(0), l.Highest("other"), "resources are independent")
	require.NoError(t, l.Do(ctx, "other", 1, set("o")))

	failed := errors.New("disk full")
	assert.Equal(t, failed, l.Do(ctx, "r", 11, func(context.Context) error { return failed }))
	assert.ErrorIs(t, l.Do(ctx, "r", 10, set("x")), fence.ErrStaleToken, "a presented token stays the highest")
	assert.ErrorIs(t, l.Do(ctx, "", 1, set("x")), fence.ErrInvalidResource)
	assert.ErrorIs(t, l.Do(ctx, "r", 0, set("x")), fence.ErrInvalidToken)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, l.Do(cctx, "r", 12, set("x")), context.Canceled)
	assert.Equal(t, "o", value)
}

// TestLocalConcurrent: the check and the write behind one lock; a
// read-modify-write in the write never loses an update and the log of
// tokens never goes down. The NEGATIVE CONTROL: the same writes without
// the guard, which the checker catches.
func TestLocalConcurrent(t *testing.T) {
	var l fence.Local
	var log []string // written only under the guard
	tokens := fencetest.Interleaved(16, 4)
	accepted, err := fencetest.Write(tokens, 8, func(tok uint64) error {
		return l.Do(context.Background(), "r", tok, func(context.Context) error {
			log = append(log, strconv.FormatUint(tok, 10)) // read-modify-write of log
			return nil
		})
	})
	require.NoError(t, err)
	require.NoError(t, fencetest.CheckRising(log, accepted, 16, 4))
	assert.Error(t, fencetest.CheckRising(fencetest.Unguarded(tokens), len(tokens), 16, 4), "negative control: without the guard")
}

func TestMiddleware(t *testing.T) {
	var value string
	h := fence.Middleware(&fence.Local{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, _ := fence.TokenFrom(r.Context())
		b, _ := io.ReadAll(r.Body)
		value = string(b) + "@" + strconv.FormatUint(tok, 10)
	}))
	for _, tc := range []struct {
		name, resource, token string
		status                int
		value, highest        string
	}{
		{name: "first", resource: "r", token: "5", status: 200, value: "first@5"},
		{name: "same term", resource: "r", token: "5", status: 200, value: "same term@5"},
		{name: "newer", resource: "r", token: "8", status: 200, value: "newer@8"},
		{name: "stale", resource: "r", token: "6", status: 409, value: "newer@8", highest: "8"},
		{name: "no token", resource: "r", status: 400, value: "newer@8"},
		{name: "zero token", resource: "r", token: "0", status: 400, value: "newer@8"},
		{name: "bad token", resource: "r", token: "x1", status: 400, value: "newer@8"},
		{name: "no resource", token: "9", status: 400, value: "newer@8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tc.name))
			if tc.resource != "" {
				req.Header.Set(fence.HeaderResource, tc.resource)
			}
			if tc.token != "" {
				req.Header.Set(fence.HeaderToken, tc.token)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			assert.Equal(t, tc.status, rec.Code, rec.Body.String())
			assert.Equal(t, tc.value, value)
			assert.Equal(t, tc.highest, rec.Header().Get(fence.HeaderHighest))
			if tc.status == 409 {
				err := fence.ResponseError(rec.Result())
				assert.Equal(t, &fence.StaleTokenError{Resource: "r", Token: 6, Highest: 8}, err)
			} else {
				assert.NoError(t, fence.ResponseError(rec.Result()))
			}
		})
	}
}

func TestTransport(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = r.Header.Clone() }))
	defer srv.Close()
	for _, tc := range []struct {
		name      string
		tr        *fence.Transport
		ctxToken  uint64
		wantToken string
		errPart   string
	}{
		{name: "from context", tr: &fence.Transport{Resource: "r"}, ctxToken: 7, wantToken: "7"},
		{name: "fixed", tr: &fence.Transport{Resource: "r", Token: 9}, ctxToken: 7, wantToken: "9"},
		{name: "no token", tr: &fence.Transport{Resource: "r"}, errPart: `token 0 for resource "r"`},
		{name: "no resource", tr: &fence.Transport{Token: 3}, errPart: "empty resource name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got = nil
			req, err := http.NewRequestWithContext(fence.WithToken(context.Background(), tc.ctxToken), http.MethodGet, srv.URL, nil)
			require.NoError(t, err)
			resp, err := (&http.Client{Transport: tc.tr}).Do(req)
			if tc.errPart != "" {
				require.Error(t, err)
				assert.ErrorContains(t, err, tc.errPart)
				assert.Nil(t, got, "not sent")
				return
			}
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			assert.Equal(t, "r", got.Get(fence.HeaderResource))
			assert.Equal(t, tc.wantToken, got.Get(fence.HeaderToken))
			assert.Empty(t, req.Header.Get(fence.HeaderToken), "the caller's request is not modified")
		})
	}
}

// TestMiddlewareConcurrent: clients with interleaved tokens post to a
// server behind the middleware, whose handler does a read-modify-write of
// its log; the log never goes down and loses nothing.
func TestMiddlewareConcurrent(t *testing.T) {
	var log []string // written only by the handler, under the resource's lock
	srv := httptest.NewServer(fence.Middleware(&fence.Local{}, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		log = append(log, r.Header.Get(fence.HeaderToken))
	})))
	defer srv.Close()
	c := &http.Client{Transport: &fence.Transport{Resource: "r"}}
	tokens := fencetest.Interleaved(16, 4)
	accepted, err := fencetest.Write(tokens, 8, func(tok uint64) error {
		return fencetest.Post(context.Background(), c, srv.URL, tok, nil)
	})
	require.NoError(t, err)
	require.NoError(t, fencetest.CheckRising(log, accepted, 16, 4))
}
