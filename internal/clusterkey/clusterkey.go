// Package clusterkey is the layout of redlock's locks on a Redis Cluster:
// which bucket a key is in, the hash tag of each copy of each bucket, and
// the slot of a key. Every function is pure: every client computes the
// same keys from the same copies (n) and buckets (B), whatever the
// cluster's topology (docs/design.md §4.11).
package clusterkey

import (
	"strconv"
	"strings"
)

// DefaultReplicas is the number of copies of a lock redlock.NewCluster
// keeps when given 0.
const DefaultReplicas = 3

// DefaultBuckets is the number of buckets redlock.NewCluster spreads keys
// over when Config.Buckets is 0 (docs/design.md §4.11).
const DefaultBuckets = 16

// MaxBuckets is the largest number of buckets redlock.Config.Buckets
// accepts.
const MaxBuckets = 1024

// LayoutKey is the key where the clients of a cluster record their layout
// ([Layout]): the first one writes it, and redlock.NewCluster refuses a
// client with another. Two layouts keep a key's copies in different slots, so their
// markers never meet; this key is where they do. Delete it only when every
// client is stopped, to change the layout. It matches the ACL pattern
// ~{rl*}:marker of SECURITY.md.
const LayoutKey = "{rl-layout}:marker"

// Layout names a cluster layout of n copies in B buckets, as the markers
// record it and errors print it: "n=3 B=16".
func Layout(n, buckets int) string {
	return "n=" + strconv.Itoa(n) + " B=" + strconv.Itoa(buckets)
}

// Tag is the hash tag of copy i of n with one bucket:
// BucketTag(i, 0, n, 1), whose slot is the middle of the i-th of n equal
// slot ranges.
func Tag(i, n int) string { return BucketTag(i, 0, n, 1) }

// BucketTag is the hash tag of copy i of n in bucket b of B (docs/design.md
// §4.11): the first name "rl<i>-<j>" (B = 1) or "rl<i>b<b>-<j>" (B > 1),
// j = 0, 1, ..., whose slot is the middle of the (i*B + b)-th of n*B equal
// slot ranges. So the n*B slots are spread evenly, the n copies of one
// bucket are 16384/n slots apart, and the buckets of copy i fill the i-th
// n-th of the slots. A pure function of its arguments, for 0 <= i < n and
// 0 <= b < B.
func BucketTag(i, b, n, buckets int) string {
	want := uint16((2*(i*buckets+b) + 1) * 16384 / (2 * n * buckets))
	var buf [32]byte
	p := append(buf[:0], "rl"...)
	p = strconv.AppendInt(p, int64(i), 10)
	if buckets > 1 {
		p = append(p, 'b')
		p = strconv.AppendInt(p, int64(b), 10)
	}
	p = append(p, '-')
	pre := crc16Update(0, p) // the CRC runs on: only the digits are new
	for j := 0; ; j++ {
		q := strconv.AppendInt(p, int64(j), 10)
		if crc16Update(pre, q[len(p):])%16384 == want {
			return string(q)
		}
	}
}

// Bucket is the bucket of key among B (docs/design.md §4.11): the 32-bit FNV-1a
// hash of the whole key, modulo B. It is 0 when B <= 1.
func Bucket(key string, buckets int) int {
	if buckets <= 1 {
		return 0
	}
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h ^= uint32(key[i])
		h *= 16777619
	}
	return int(h % uint32(buckets))
}

// Slot is the Redis Cluster hash slot of a key (CRC16 of the key, or of
// its first non-empty {hash tag}, modulo 16384).
func Slot(key string) uint16 {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return crc16(key) % 16384
}

// crc16 is CRC-16/XMODEM, the checksum Redis Cluster hashes keys with.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc = crc<<8 ^ crcTable[byte(crc>>8)^s[i]]
	}
	return crc
}

// crc16Update continues crc16 over b.
func crc16Update(crc uint16, b []byte) uint16 {
	for _, c := range b {
		crc = crc<<8 ^ crcTable[byte(crc>>8)^c]
	}
	return crc
}

// crcTable is CRC-16/XMODEM (polynomial 0x1021) of every byte: BucketTag
// tries thousands of names per tag.
var crcTable = func() (t [256]uint16) {
	for i := range t {
		crc := uint16(i) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
		t[i] = crc
	}
	return t
}()
