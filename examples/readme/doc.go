// Package readme holds, as Example functions, the code snippets that the
// repository's README quotes; `go test ./examples/readme/` runs them on
// real redis-server processes and checks their output.
package readme
