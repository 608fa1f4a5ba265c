package notice

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testNonce = "q2sS-1bQ3v8_Xx9aZQ0kDg" // base64url, as redlock makes them

func TestValueRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		id   string
		md   map[string]string
	}{
		{"plain", "host-1234", nil},
		{"empty id", "", nil},
		{"separators", "a:b&c=d%e+f g/h?i#j;k,l", map[string]string{"k:&=": "v:&=", "": "empty key", "m.x": "", "id": "not the id"}},
		{"prefix inside", "rl1:abc:id=x", map[string]string{"rl1:": "rl1:n:id=y"}},
		{"unicode", "ノード-1 ✓", map[string]string{"région": "île-de-France", "emoji": "🔒"}},
		{"invalid utf-8", "\xff\xfe\x00", map[string]string{"\x80": "\xc3\x28"}},
		{"control characters", "a\r\nb\tc", map[string]string{"nl": "\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := EncodeValue(testNonce, EncodeHolder(tc.id, tc.md))
			assert.True(t, strings.Contains(v, testNonce), "the value contains the nonce")
			h := DecodeValue(v)
			require.False(t, h.Foreign, "value %q", v)
			assert.Equal(t, tc.id, h.ID)
			if len(tc.md) == 0 {
				assert.Nil(t, h.Metadata)
			} else {
				assert.Equal(t, tc.md, h.Metadata)
			}
			assert.Equal(t, testNonce, h.Nonce)
			assert.Equal(t, v, h.Raw)
		})
	}
}

func TestValueIsReadable(t *testing.T) {
	v := EncodeValue(testNonce, EncodeHolder("web-1", map[string]string{"zone": "eu", "addr": "10.0.0.1:80"}))
	assert.Equal(t, "rl1:"+testNonce+":id=web-1&m.addr=10.0.0.1%3A80&m.zone=eu", v)
}

func TestDecodeForeignValues(t *testing.T) {
	for _, v := range []string{
		"",
		testNonce,                              // a plain Redlock client's random value
		"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", // a UUID
		"rl1:",
		"rl1:" + testNonce,         // no fields separator
		"rl1::id=x",                // no nonce
		"rl1:" + testNonce + ":id", // a field without '='
		"rl1:" + testNonce + ":id=%zz",
		"rl1:" + testNonce + ":m.%zz=v",
		"rl1:" + testNonce + ":id=a&&",
		"rl2:" + testNonce + ":id=x", // a later, incompatible version
		"RL1:" + testNonce + ":id=x",
	} {
		h := DecodeValue(v)
		assert.True(t, h.Foreign, "%q", v)
		assert.Equal(t, Fields{Foreign: true, Raw: v}, h)
	}
}

func TestDecodeIgnoresUnknownFields(t *testing.T) {
	h := DecodeValue("rl1:" + testNonce + ":id=a&since=123&m.k=v")
	require.False(t, h.Foreign)
	assert.Equal(t, "a", h.ID)
	assert.Equal(t, map[string]string{"k": "v"}, h.Metadata)
}

func FuzzValueRoundTrip(f *testing.F) {
	f.Add("host-1", "k", "v")
	f.Add("a:b&c=d", "=&:", "%zz")
	f.Add("\xff", "", "ノード")
	f.Fuzz(func(t *testing.T, id, k, v string) {
		md := map[string]string{k: v}
		h := DecodeValue(EncodeValue(testNonce, EncodeHolder(id, md)))
		if h.Foreign || h.ID != id || h.Metadata[k] != v || len(h.Metadata) != 1 || h.Nonce != testNonce {
			t.Fatalf("round trip of (%q, %q=%q) gave %#v", id, k, v, h)
		}
	})
}

func FuzzDecodeValue(f *testing.F) {
	f.Add("rl1:n:id=x&m.a=b")
	f.Add("rl1:n:id=%")
	f.Add("plain")
	f.Fuzz(func(t *testing.T, v string) {
		h := DecodeValue(v) // must not panic
		if h.Raw != v {
			t.Fatalf("Raw = %q, want %q", h.Raw, v)
		}
		if !h.Foreign && !strings.HasPrefix(v, valuePrefix) {
			t.Fatalf("%q decoded as ours", v)
		}
	})
}
