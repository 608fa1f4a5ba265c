package lease

import "github.com/redlease/redlease/internal/notice"

// Holder is the identity of a lease's holder, decoded from the value stored
// in its keys. A Holder is a plain value; its Metadata map is its own (a
// fresh map per decode), so the Holder may be shared read-only.
//
// The value, as redis-cli GET shows it, is
// "rl1:<nonce>:id=<ID>&m.<key>=<value>..." with ID, metadata keys and
// values escaped as in a URL query.
type Holder struct {
	// ID is the holder's [Config.ID].
	ID string
	// Metadata is the holder's [Config.Metadata]; nil when it had none.
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

// String returns the ID, or "foreign:<raw value>" for a foreign holder.
func (h Holder) String() string {
	if h.Foreign {
		return "foreign:" + h.Raw
	}
	return h.ID
}

// decodeValue decodes a lock value (internal/notice.DecodeValue); it never
// fails: a value of another format is a foreign Holder.
func decodeValue(v string) Holder { return Holder(notice.DecodeValue(v)) }
