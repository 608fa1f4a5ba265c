// Package security holds integration tests of redlease's security
// posture against real redis-server processes: the least-privilege ACL
// rule of SECURITY.md, TLS with client certificates, and the holder
// metadata limit. It has no API; see the _test.go files.
//
// What the rule must allow follows from docs/design.md: TIME and INFO run
// inside the scripts (§4.7), and a node that refuses CONFIG GET is
// accepted unchecked (§4.10).
package security
