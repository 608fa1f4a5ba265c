package security

import (
	"context"
	"crypto/tls"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/redlock"
)

// startTLS starts n redis-servers that accept only TLS connections with a
// client certificate signed by the returned authority, and returns their
// TLS addresses.
//
// redistest's readiness probe speaks plain RESP, so the servers start with
// their plain port (and the TLS files); once ready, the TLS port is opened
// and the plain one closed with CONFIG SET (both are runtime settings in
// Redis 7). Processes are stopped by redistest's cleanup, by PID.
func startTLS(t *testing.T, n int) (addrs []string, ca *authority) {
	t.Helper()
	ctx := context.Background()
	ca = newAuthority(t, "redlease test CA")
	g := redistest.Start(t, n, redistest.Options{Extra: ca.serverFiles(t, t.TempDir())})
	for _, s := range g.Servers() {
		admin := s.Client(t)
		var port int
		var err error
		for range 5 { // a port that was free may be taken meanwhile
			port = freePort(t)
			if err = admin.ConfigSet(ctx, "tls-port", strconv.Itoa(port)).Err(); err == nil {
				break
			}
		}
		require.NoError(t, err, "CONFIG SET tls-port")
		require.NoError(t, admin.ConfigSet(ctx, "port", "0").Err(), "CONFIG SET port 0")
		_, err = net.DialTimeout("tcp", s.Addr(), time.Second)
		require.Error(t, err, "the plain port is closed")
		addrs = append(addrs, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	}
	return addrs, ca
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// tlsClient returns a go-redis client for addr over TLS with conf, closed
// on cleanup. No retries: a refused handshake is reported as it is.
func tlsClient(t *testing.T, addr string, conf *tls.Config) *redis.Client {
	// One dial attempt: a refused handshake fails the same way every time,
	// and go-redis' default (5 attempts, 100ms apart, each a TLS handshake
	// under -race) came near NodeTimeout (1s) in loaded runs, so that the
	// refused cases saw "no answer within 1s" instead of the TLS error.
	c := redis.NewClient(&redis.Options{Addr: addr, TLSConfig: conf, MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestTLS(t *testing.T) {
	skipShort(t)
	ctx := context.Background()
	addrs, ca := startTLS(t, 3)
	cert := ca.clientCert(t)

	t.Run("acquire and release", func(t *testing.T) { tlsCycle(t, addrs, ca, cert) })

	// redlock.Dial with DialOptions.TLS: the same, from the addresses.
	t.Run("Dial", func(t *testing.T) {
		conf := &tls.Config{RootCAs: ca.pool(), Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		c, err := redlock.Dial(ctx, redlock.Config{NodeTimeout: nodeTimeout, Logger: testLogger(t)}, addrs,
			redlock.DialOptions{TLS: conf, DialTimeout: 2 * time.Second})
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.Bootstrap(ctx))
		l, err := c.TryAcquire(ctx, "tls:dial", 5*time.Second)
		require.NoError(t, err)
		err = l.Release(ctx)
		require.NoError(t, err)
	})

	// A client that does not trust the servers' CA, or has no client
	// certificate, gets errors that say so: from Bootstrap and TryAcquire
	// (New logs them: a node that does not answer is not refused).
	for _, tc := range []struct {
		name string
		conf *tls.Config
		want string
	}{
		{"wrong CA", &tls.Config{RootCAs: newAuthority(t, "another CA").pool(), Certificates: []tls.Certificate{cert},
			MinVersion: tls.VersionTLS12}, "x509: certificate signed by unknown authority"},
		{"no client certificate", &tls.Config{RootCAs: ca.pool(), MinVersion: tls.VersionTLS12}, "certificate required"},
	} {
		t.Run(tc.name, func(t *testing.T) { tlsRefused(t, addrs, tc.conf, tc.want) })
	}
}

// tlsRefused: clients with conf get errors that say want, from Bootstrap
// and TryAcquire (New logs them).
func tlsRefused(t *testing.T, addrs []string, conf *tls.Config, want string) {
	ctx := context.Background()
	var nodes []redis.UniversalClient
	for _, a := range addrs {
		nodes = append(nodes, tlsClient(t, a, conf))
	}
	logs, logger := newLogBuffer(t)
	c, err := redlock.New(ctx, redlock.Config{NodeTimeout: time.Second, Logger: logger}, nodes...)
	require.NoError(t, err)
	defer c.Close()
	assert.Contains(t, logs.String(), want)
	err = c.Bootstrap(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), want)
	_, err = c.TryAcquire(ctx, "tls:refused", 5*time.Second)
	require.ErrorIs(t, err, redlock.ErrNotAcquired)
	assert.Contains(t, err.Error(), want)
}

// tlsCycle: acquire, extend, inspect and release over TLS, two nodes
// configured in code and one from a rediss:// URL.
func tlsCycle(t *testing.T, addrs []string, ca *authority, cert tls.Certificate) {
	ctx := context.Background()
	conf := &tls.Config{RootCAs: ca.pool(), Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	nodes := []redis.UniversalClient{tlsClient(t, addrs[0], conf), tlsClient(t, addrs[1], conf)}
	// The URL form: rediss:// turns TLS on (ServerName is the host);
	// the CA and the client certificate are added to its TLSConfig.
	opt, err := redis.ParseURL("rediss://" + addrs[2] + "/0")
	require.NoError(t, err)
	require.NotNil(t, opt.TLSConfig)
	opt.TLSConfig.RootCAs, opt.TLSConfig.Certificates = ca.pool(), []tls.Certificate{cert}
	byURL := redis.NewClient(opt)
	t.Cleanup(func() { _ = byURL.Close() })
	nodes = append(nodes, byURL)

	logs, logger := newLogBuffer(t)
	c, err := redlock.New(ctx, redlock.Config{NodeTimeout: nodeTimeout, Logger: logger}, nodes...)
	require.NoError(t, err)
	defer c.Close()
	assert.NotContains(t, logs.String(), "did not answer")
	require.NoError(t, c.Bootstrap(ctx))
	lockCycle(t, c, "tls:lock")
}
