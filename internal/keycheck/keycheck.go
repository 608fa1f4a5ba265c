// Package keycheck holds the one rule on the keys (and election names) that
// redlease's packages accept: not empty, and at most MaxSize bytes. Errors
// quote a key truncated to a readable length, never a whole huge key.
//
// See docs/design.md §1.2 for the internal packages.
package keycheck

import (
	"fmt"
	"unicode/utf8"
)

// MaxSize is the longest key, in bytes, that redlease accepts. Lock keys
// are names; a longer one is almost certainly a mistake (a payload passed
// as the key), and it would travel in every request, notice and error.
const MaxSize = 4096

// quoteLen is how many bytes of a refused key its error quotes.
const quoteLen = 64

// Problem returns what is wrong with key ("" when nothing is), for the
// caller to wrap in its own sentinel error. what names the key ("key",
// "election name").
func Problem(what, key string) string {
	switch {
	case key == "":
		return what + " must not be empty"
	case len(key) > MaxSize:
		return fmt.Sprintf("%s %s is %d bytes, above the limit of %d", what, Quote(key), len(key), MaxSize)
	}
	return ""
}

// Quote returns key quoted as by %q, cut after its first 64 bytes (at a
// character boundary) with the number of bytes left out.
func Quote(key string) string {
	if len(key) <= quoteLen {
		return fmt.Sprintf("%q", key)
	}
	cut := quoteLen
	for cut > 0 && !utf8.RuneStart(key[cut]) {
		cut--
	}
	return fmt.Sprintf("%q... (%d more bytes)", key[:cut], len(key)-cut)
}
