// Package unsafetest turns the guards of a negative control off in a
// redlock.Config for a test (redlock.SetUnsafe, internal/unsafeopt). The
// switches exist only in a build with the redlease_unsafe tag (make test
// passes it); without it, a test that turns a guard off fails, saying so.
package unsafetest
