package scripts

import (
	"context"
	"crypto/sha1"
	_ "embed"
	"encoding/hex"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/rediserr"
)

//go:embed lua/library.lua
var luaLibrary string

// entry is how the library calls one script: the argument that seeds its
// incarnation token on the copy's first call (a client nonce: the lock's
// value, or probe's nonce; 0: none, the script never starts the token),
// and the gate it runs first (extend and extend_many: redlease_gate on
// their marker; "" none).
type entry struct {
	seed int
	gate string
}

// entries are the library's functions, one per script.
var entries = map[*redis.Script]entry{
	Acquire:     {seed: 1},
	Fence:       {},
	Extend:      {seed: 1, gate: "redlease_gate(KEYS[2], ARGV[3], ARGV[4])"},
	ExtendMany:  {seed: 5, gate: "redlease_gate(KEYS[1], ARGV[1], ARGV[2])"},
	Release:     {},
	Probe:       {seed: 5},
	Raise:       {},
	Inspect:     {},
	Settle:      {},
	RestoreMany: {},
}

// versionMark stands for the version in the library's text until it is
// known (the version is the hash of the text with the mark).
const versionMark = "REDLEASE_VERSION"

// Version is the library's version: the first 16 hex digits of the SHA-1
// of its code, so that two versions of redlease load side by side (no
// FUNCTION LOAD REPLACE of another version) and keep their own tokens in
// the marker (docs/design.md §4.7.5).
// LibrarySource is its text, for FUNCTION LOAD.
var Version, LibrarySource = library()

// library builds the library's text and version: the quarantine prelude,
// library.lua, then every script as a local function, registered as
// redlease_<version>_<name>.
func library() (version, source string) {
	var b strings.Builder
	b.WriteString(luaQuarantine)
	b.WriteString(luaLibrary)
	for _, s := range All {
		a, e := catalogue[s], entries[s]
		body := strings.TrimPrefix(a.source, luaQuarantine)
		b.WriteString("\nlocal function redlease_fn_" + a.name + "(KEYS, ARGV)\n" + body + "\nend\n")
		b.WriteString("redis.register_function('redlease_" + versionMark + "_" + a.name + "', function(KEYS, ARGV)\n")
		if e.seed > 0 {
			arg := "ARGV[" + string(rune('0'+e.seed)) + "]"
			b.WriteString("  if not redlease_token and " + arg + " then redlease_start(" + arg + ") end\n")
		}
		if e.gate != "" {
			b.WriteString("  " + e.gate + "\n")
		}
		b.WriteString("  return redlease_fn_" + a.name + "(KEYS, ARGV)\nend)\n")
	}
	sum := sha1.Sum([]byte(b.String()))
	version = hex.EncodeToString(sum[:])[:16]
	return version, "#!lua name=redlease_" + version + "\n" + strings.ReplaceAll(b.String(), versionMark, version)
}

// FunctionName is s's function in the library (FCALL).
func FunctionName(s *redis.Script) string {
	return "redlease_" + Version + "_" + catalogue[s].name
}

// LoadLibrary loads the library on c (FUNCTION LOAD, never REPLACE: a
// loaded copy is the node's incarnation, and replacing it would quarantine
// the node). A library of this version already there is no error. The
// error is go-redis's, classified.
func LoadLibrary(ctx context.Context, c redis.UniversalClient) error {
	err := c.FunctionLoad(ctx, LibrarySource).Err()
	if err != nil && strings.Contains(err.Error(), "already exists") {
		return nil
	}
	return rediserr.Classify(err)
}
