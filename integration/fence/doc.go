// Package fence holds the tests of package fence
// (github.com/redlease/redlease/fence) against real stores: redis-server
// and valkey-server (internal/testing/redistest; REDLEASE_REDIS_SERVER picks the
// binary), PostgreSQL (internal/pgtest) and SQLite (modernc.org/sqlite).
// It is a module of its own so that the root go.mod carries no SQL driver.
//
// Each guard has its end-to-end case: leader A (a real process,
// internal/leader) writes, is paused with SIGSTOP past its TTL, B is
// elected and writes, A resumes and writes with its old token: the guard
// refuses A's write and keeps B's; a negative control without the guard
// shows A's stale write landing. And a concurrency case: many writers with
// interleaved tokens, the highest always wins. See docs/fencing.md.
package fence
