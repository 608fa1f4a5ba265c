package testnodes

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// LogBuffer keeps what a logger writes, for tests that look for a line in
// it; with T set, it also echoes every write to T.Log. It is safe for
// concurrent use (clients log from their goroutines); the zero value keeps
// without echoing.
type LogBuffer struct {
	T testing.TB

	mu  sync.Mutex
	buf bytes.Buffer
}

// Write keeps p (and echoes it to T.Log when T is set).
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.T != nil {
		b.T.Log(strings.TrimSpace(string(p)))
	}
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Count returns the number of lines written that contain every one of
// parts.
func (b *LogBuffer) Count(parts ...string) int {
	n := 0
	for line := range strings.SplitSeq(b.String(), "\n") {
		all := line != ""
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			n++
		}
	}
	return n
}
