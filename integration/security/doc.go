// Package security holds integration tests of redlease's security
// posture against real redis-server processes: the least-privilege ACL
// rule of SECURITY.md, TLS with client certificates, and the holder
// metadata limit. It has no API; see the _test.go files.
package security
