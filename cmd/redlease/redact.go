package main

import (
	"io"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// redacted replaces a password wherever redlease would print it.
const redacted = "REDACTED"

// Passwords reach the output in two ways, and both are closed:
//
//   - structurally: nodes are named by their address (host:port), never by
//     the URL they were given in, except in the errors about a node spec
//     itself, which show [redactURL] of it;
//   - by accident (a library error quoting a URL, a log line): every byte
//     redlease writes to stdout and stderr goes through a [redactWriter]
//     that replaces every password of the node specs with REDACTED.

// userinfo matches the userinfo of a URL-looking string, even one that
// url.Parse refuses: scheme://user:password@, the password running to the
// last '@' before a space or a comma (a malformed password may hold ':',
// '/' or '@'; a space or a comma cannot be in a node spec).
var userinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^/@:\s,"]*:)[^\s,]*@`)

// queryPassword matches a password given as a URL's query parameter (a
// Sentinel group's URL gives the master's so: password=).
var queryPassword = regexp.MustCompile(`([?&]password=)([^&\s,]*)`)

// redactURL returns raw with the password of its userinfo, and of a
// password= query parameter, replaced by REDACTED. It works on strings
// that do not parse as URLs, and returns anything without a password
// unchanged.
func redactURL(raw string) string {
	raw = userinfo.ReplaceAllString(raw, "${1}"+redacted+"@")
	return queryPassword.ReplaceAllString(raw, "${1}"+redacted)
}

// displaySpec is how a node spec is shown in errors: redactURL of a URL,
// and for a host:port that carries a userinfo by mistake
// ("user:password@host:port", the scheme forgotten), REDACTED in its place.
func displaySpec(spec string) string {
	if strings.Contains(spec, "://") {
		return redactURL(spec)
	}
	if i := strings.LastIndexByte(spec, '@'); i >= 0 {
		return redacted + spec[i:]
	}
	return spec
}

// specSecrets returns what a node spec may hold of a password, as
// written and decoded, for the output filter.
func specSecrets(spec string) []string {
	if !strings.Contains(spec, "://") {
		if i := strings.LastIndexByte(spec, '@'); i >= 0 {
			ui := spec[:i]
			out := []string{ui}
			if _, pw, ok := strings.Cut(ui, ":"); ok {
				out = append(out, pw)
			}
			return out
		}
		return nil
	}
	out := urlPassword(spec)
	for _, m := range queryPassword.FindAllStringSubmatch(spec, -1) {
		if m[2] == "" {
			continue
		}
		out = append(out, m[2])
		if dec, err := url.QueryUnescape(m[2]); err == nil && dec != m[2] {
			out = append(out, dec)
		}
	}
	return out
}

// urlPassword returns the password of a URL-looking string as written
// (percent-encoded) and decoded, or nothing.
func urlPassword(raw string) []string {
	m := userinfo.FindStringSubmatchIndex(raw)
	if m == nil {
		return nil
	}
	written := raw[m[3] : m[1]-1] // between "user:" and "@"
	out := []string{written}
	if dec, err := url.PathUnescape(written); err == nil && dec != written {
		out = append(out, dec)
	}
	return out
}

// minSecret is the shortest password the output filter replaces: a
// shorter one would also hit ordinary words and numbers (a token "1"), and
// shows in no output anyway (see above: the filter is the second line).
const minSecret = 4

// redactor replaces known secrets in text. The zero value replaces
// nothing. It is safe for concurrent use once built.
type redactor struct {
	r *strings.Replacer
}

// newRedactor returns a redactor of secrets; empty and short ones are
// ignored.
func newRedactor(secrets []string) *redactor {
	var keep []string
	for _, s := range secrets {
		if len(s) >= minSecret && !slices.Contains(keep, s) {
			keep = append(keep, s)
		}
	}
	if len(keep) == 0 {
		return &redactor{}
	}
	// Longest first: a secret that contains another is replaced whole.
	slices.SortFunc(keep, func(a, b string) int { return len(b) - len(a) })
	var pairs []string
	for _, s := range keep {
		pairs = append(pairs, s, redacted)
	}
	return &redactor{r: strings.NewReplacer(pairs...)}
}

// String returns s with every secret replaced by REDACTED.
func (r *redactor) String(s string) string {
	if r == nil || r.r == nil {
		return s
	}
	return r.r.Replace(s)
}

// redactWriter filters what is written to w through a redactor. Every
// write of redlease is a whole line (fmt.Fprintf, hclog), so a secret is
// never split across two writes. The redactor is set once the node specs
// are parsed; until then the writer only masks URL passwords. It is safe
// for concurrent use, and serializes the writes to w.
type redactWriter struct {
	mu sync.Mutex
	w  io.Writer
	r  *redactor
}

func newRedactWriter(w io.Writer) *redactWriter { return &redactWriter{w: w} }

// setRedactor sets the secrets to hide from now on.
func (w *redactWriter) setRedactor(r *redactor) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.r = r
}

// Write writes p with secrets replaced. It reports len(p) on success, as
// callers expect of a writer, whatever the length written.
func (w *redactWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := redactURL(w.r.String(string(p)))
	if _, err := io.WriteString(w.w, s); err != nil {
		return 0, err
	}
	return len(p), nil
}
