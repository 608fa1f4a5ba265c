package notice

import (
	"maps"
	"net/url"
	"slices"
	"strings"
)

// The value format, version 1. A lease stores in its keys
//
//	rl1:<nonce>:id=<ID>&m.<key>=<value>&m.<key>=<value>...
//
// where <nonce> is redlock's random nonce of the acquisition attempt
// (base64url: no ':'), and ID, metadata keys and values are escaped with
// url.QueryEscape, so that any bytes round-trip, separators ('&', '=', ':')
// and invalid UTF-8 included, while plain IDs stay readable with redis-cli
// GET. Metadata comes sorted by key. A decoder ignores fields it does not
// know, so fields may be added within version 1; an incompatible change gets
// a new prefix ("rl2:"), which older decoders report as foreign.
const valuePrefix = "rl1:"

// MaxHolderSize is the largest encoding of a holder's ID and Metadata
// together (EncodeHolder), in bytes. It keeps the lock value small: it is
// sent on every acquire, compare-and-extend and release.
const MaxHolderSize = 4096

// Fields are what a lock value says, decoded: redlock fills its Holder (the
// one "who holds it" type) from them. Its Metadata map is a fresh one per
// decode.
type Fields struct {
	// ID is the holder's lease.Config.ID.
	ID string
	// Metadata is the holder's lease.Config.Metadata; nil when it had none.
	Metadata map[string]string
	// Nonce is the random part of the value: unique per acquisition.
	Nonce string
	// Foreign is true when the value was not written by this package (a
	// plain Redlock client, another tool, a newer format version) or does
	// not parse; then only Raw is set.
	Foreign bool
	// Raw is the value as stored.
	Raw string
}

// DecodeValue decodes a lock value. It never fails and never panics: a
// value in another format (that of another Redlock client, usually a random
// string) or a malformed one decodes as Fields{Foreign: true, Raw: v}.
// It is safe for concurrent use.
func DecodeValue(v string) Fields {
	foreign := Fields{Foreign: true, Raw: v}
	rest, ok := strings.CutPrefix(v, valuePrefix)
	if !ok {
		return foreign
	}
	nonce, fields, ok := strings.Cut(rest, ":")
	if !ok || nonce == "" {
		return foreign
	}
	h := Fields{Nonce: nonce, Raw: v}
	for f := range strings.SplitSeq(fields, "&") {
		name, val, ok := strings.Cut(f, "=")
		if !ok {
			return foreign
		}
		val, err := url.QueryUnescape(val)
		if err != nil {
			return foreign
		}
		switch {
		case name == "id":
			h.ID = val
		case strings.HasPrefix(name, "m."):
			k, err := url.QueryUnescape(name[2:])
			if err != nil {
				return foreign
			}
			if h.Metadata == nil {
				h.Metadata = map[string]string{}
			}
			h.Metadata[k] = val
		}
		// Other names: fields of a later minor revision, ignored.
	}
	return h
}

// EncodeHolder returns the fields part of a value: ID and Metadata.
func EncodeHolder(id string, md map[string]string) string {
	var b strings.Builder
	b.WriteString("id=")
	b.WriteString(url.QueryEscape(id))
	for _, k := range slices.Sorted(maps.Keys(md)) {
		b.WriteString("&m.")
		b.WriteString(url.QueryEscape(k))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(md[k]))
	}
	return b.String()
}

// EncodeValue makes the value of one acquisition attempt from its nonce
// (redlock's) and the holder's fields (EncodeHolder).
func EncodeValue(nonce, fields string) string {
	return valuePrefix + nonce + ":" + fields
}
