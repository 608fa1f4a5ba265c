package main

import (
	"bytes"
	"net/url"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/redistest"
)

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"127.0.0.1:6379", "127.0.0.1:6379"},
		{"redis://127.0.0.1:6379/2", "redis://127.0.0.1:6379/2"},
		{"redis://alice@127.0.0.1:6379", "redis://alice@127.0.0.1:6379"},
		{"redis://:pw@h:1", "redis://:REDACTED@h:1"},
		{"rediss://alice:pw@h:1/0?dial_timeout=1s", "rediss://alice:REDACTED@h:1/0?dial_timeout=1s"},
		{"redis://alice:p%40ss%2Fw@h:1", "redis://alice:REDACTED@h:1"},
		{"redis://alice:p@ss/w:x@h:1", "redis://alice:REDACTED@h:1"},                                   // malformed: unescaped '@', '/' and ':'
		{`parse "redis://a:pw@h:bad": invalid port`, `parse "redis://a:REDACTED@h:bad": invalid port`}, // inside a message
		{"redis://a:pw1@h:1,redis://b:pw2@h:2", "redis://a:REDACTED@h:1,redis://b:REDACTED@h:2"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, redactURL(tt.in), tt.in)
	}
	assert.Equal(t, "REDACTED@h:1", displaySpec("alice:pw@h:1"), "a URL without its scheme")
	assert.Equal(t, []string{"p%40ss", "p@ss"}, urlPassword("redis://u:p%40ss@h:1"))
	assert.Equal(t, []string{"alice:pw", "pw"}, specSecrets("alice:pw@h:1"))
}

func TestRedactWriter(t *testing.T) {
	var b bytes.Buffer
	w := newRedactWriter(&b)
	_, _ = w.Write([]byte("dial redis://u:early-secret@h:1 failed\n")) // before the secrets are known
	w.setRedactor(newRedactor([]string{"hunter22", "hunter2222", "", "abc"}))
	n, err := w.Write([]byte("auth hunter2222 then hunter22; abc stays\n"))
	require.NoError(t, err)
	assert.Equal(t, len("auth hunter2222 then hunter22; abc stays\n"), n)
	assert.Equal(t, "dial redis://u:REDACTED@h:1 failed\nauth REDACTED then REDACTED; abc stays\n", b.String())
}

// No password of a node URL shows in anything redlease prints: status
// (text and JSON), watch, run (with debug logs), and the errors about
// nodes: a wrong password, an unreachable node, a malformed URL, a URL
// without its scheme. The servers require a password with characters that
// URLs must escape.
func TestNoPasswordInOutput(t *testing.T) {
	const pw = "s3cr3t/P@ss:w0rd"
	const wrong = "wr0ng-passw0rd"
	g := redistest.Start(t, 3, redistest.Options{Extra: []string{"requirepass " + pw}})
	var good []string
	for _, a := range g.Addrs() {
		good = append(good, nodeURL(a, pw))
	}
	escaped := strings.TrimPrefix(strings.Split(good[0], "@")[0], "redis://default:")
	require.NotEqual(t, pw, escaped, "the URL escapes the password")
	sc := &secretCheck{t: t, secrets: []string{pw, escaped, wrong}}

	client := testClient(t, g, pw)
	campaign(t, client, "secret", "cand-1")
	nodes := strings.Join(good, ",")
	code, stdout, stderr := runCLI(t, "status", "--name", "secret", "--nodes", nodes, "--verbose")
	sc.check("status", code, exitOK, stdout, stderr)
	assert.Contains(t, stdout, "verdict: leader cand-1")
	code, stdout, stderr = runCLI(t, "status", "--name", "secret", "--nodes", nodes, "--json")
	sc.check("status --json", code, exitOK, stdout, stderr)
	sc.nodeErrors(g, good, pw, wrong)

	t.Setenv(envNodes, nodes) // watch reads the nodes from the environment
	w := startCLI(t, "watch", "--name", "secret", "--verbose")
	w.stdout.waitContains(t, "leader cand-1")
	code = w.interrupt(t, signalCause{syscall.SIGINT})
	sc.check("watch", code, exitOK, w.stdout.String(), w.stderr.String())

	code, stdout, stderr = runCLI(t, "run", "--name", "secret-run", "--ttl", "3s", "--grace", "500ms", "--verbose",
		"--", "sh", "-c", "echo token=$REDLEASE_TOKEN")
	sc.check("run", code, 0, stdout, stderr)
	assert.Contains(t, stdout, "token=")
	sc.badURLs(pw, escaped)
	t.Logf("%d outputs checked, %d bytes", len(sc.outputs), len(strings.Join(sc.outputs, "")))
}

// nodeURL is the redis:// URL of addr with user default and password pass.
func nodeURL(addr, pass string) string {
	return (&url.URL{Scheme: "redis", User: url.UserPassword("default", pass), Host: addr}).String()
}

// secretCheck checks that no secret shows in what the CLI printed.
type secretCheck struct {
	t       *testing.T
	secrets []string
	outputs []string
}

func (sc *secretCheck) check(what string, code, want int, stdout, stderr string) {
	t := sc.t
	t.Helper()
	assert.Equal(t, want, code, "%s: exit code; stderr:\n%s", what, stderr)
	sc.outputs = append(sc.outputs, stdout, stderr)
	for _, s := range sc.secrets {
		assert.NotContains(t, stdout, s, "%s: stdout", what)
		assert.NotContains(t, stderr, s, "%s: stderr", what)
	}
}

// nodeErrors: a wrong password is refused for good
// (redlock.ErrAccessDenied), and the error names the node and why; an
// unreachable node's row says why.
func (sc *secretCheck) nodeErrors(g *redistest.Group, good []string, pw, wrong string) {
	t := sc.t
	mixed := strings.Join([]string{good[0], nodeURL(g.Addrs()[1], wrong), nodeURL("127.0.0.1:1", pw)}, ",")
	code, stdout, stderr := runCLI(t, "status", "--name", "secret", "--nodes", mixed, "--verbose")
	sc.check("status with a wrong password", code, exitError, stdout, stderr)
	assert.Contains(t, stderr, "WRONGPASS")
	assert.Contains(t, stderr, g.Addrs()[1])
	unreachable := strings.Join([]string{good[0], good[1], nodeURL("127.0.0.1:1", pw)}, ",")
	code, stdout, stderr = runCLI(t, "status", "--name", "secret", "--nodes", unreachable, "--verbose")
	sc.check("status with an unreachable node", code, exitOK, stdout, stderr)
	assert.Contains(t, stdout, "connection refused")
}

// badURLs: a malformed node URL is a usage error that shows it redacted.
func (sc *secretCheck) badURLs(pw, escaped string) {
	for _, bad := range []string{
		"redis://default:" + escaped + "@127.0.0.1:bad", // a bad port
		"redis://default:" + pw + "@127.0.0.1:1",        // the password not escaped
		"default:" + pw + "@127.0.0.1:1",                // the scheme forgotten
		"http://default:" + escaped + "@127.0.0.1:1",    // a bad scheme
		"redis://default:" + escaped + "@127.0.0.1:1/x", // a bad database
	} {
		code, stdout, stderr := runCLI(sc.t, "status", "--name", "secret", "--nodes", bad)
		sc.check(displaySpec(bad), code, exitUsage, stdout, stderr)
		assert.Contains(sc.t, stderr, "REDACTED", bad)
	}
}
