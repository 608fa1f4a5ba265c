package redistest

import (
	"fmt"
	"os"
	"testing"
)

// StartMain starts n servers as [Start] does, for a package's TestMain,
// where there is no testing.TB (its Example functions need servers too).
// Call stop after m.Run: it stops the servers by PID and removes their
// directories. A failure to start is returned, not fatal.
func StartMain(n int, opts ...Options) (g *Group, stop func(), err error) {
	tb := &mainTB{}
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(mainFatal)
			if !ok {
				panic(r)
			}
			tb.cleanup()
			g, stop, err = nil, nil, f
		}
	}()
	return Start(tb, n, opts...), tb.cleanup, nil
}

// mainFatal is a Fatalf of a mainTB, carried by a panic to StartMain.
type mainFatal string

func (f mainFatal) Error() string { return string(f) }

// mainTB is the part of a testing.TB that Start uses, outside a test.
type mainTB struct {
	testing.TB // nil: any other method panics
	cleanups   []func()
}

func (*mainTB) Helper() {}

func (*mainTB) Fatalf(format string, args ...any) { panic(mainFatal(fmt.Sprintf(format, args...))) }

func (*mainTB) Logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

func (m *mainTB) Cleanup(f func()) { m.cleanups = append(m.cleanups, f) }

func (m *mainTB) TempDir() string {
	d, err := os.MkdirTemp("", "redistest-")
	if err != nil {
		m.Fatalf("redistest: %v", err)
	}
	m.Cleanup(func() { _ = os.RemoveAll(d) })
	return d
}

// cleanup runs the cleanups, the last registered first.
func (m *mainTB) cleanup() {
	for i := len(m.cleanups) - 1; i >= 0; i-- {
		m.cleanups[i]()
	}
	m.cleanups = nil
}
