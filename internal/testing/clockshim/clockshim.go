// Package clockshim steps the wall clock of a server a test starts: an
// LD_PRELOAD library (shim.c.txt, built with gcc at test time) shifts
// clock_gettime(CLOCK_REALTIME and CLOCK_REALTIME_COARSE), gettimeofday
// and time by an offset read on every call from a memory-mapped file, so
// that [Clock.Step] moves the clock of a running server (its TIME, and the
// clock it expires keys by). CLOCK_MONOTONIC is never shifted. Debian's
// libfaketime deadlocks redis-server 7.0 at start-up (inside jemalloc);
// this shim calls the kernel directly and allocates nothing.
package clockshim

import (
	_ "embed"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

//go:embed shim.c.txt
var source string

// Clock is the wall-clock offset of the processes started with its Env.
type Clock struct {
	mu     sync.Mutex
	lib    string
	file   string
	offset time.Duration
}

// New builds the shim with gcc into a directory of t and makes a Clock
// with offset 0. It fails the test, naming gcc, when gcc is missing or the
// build fails: `make servers` installs it.
func New(t testing.TB) *Clock {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Fatalf("clockshim: gcc is needed to build the clock shim (LD_PRELOAD) and is not installed: %v; run `make servers` or `apt-get install gcc`", err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "shim.c")
	c := &Clock{lib: filepath.Join(dir, "clockshim.so"), file: filepath.Join(dir, "offset")}
	if err := os.WriteFile(src, []byte(source), 0o644); err != nil {
		t.Fatalf("clockshim: %v", err)
	}
	if out, err := exec.Command(gcc, "-shared", "-fPIC", "-O2", "-o", c.lib, src).CombinedOutput(); err != nil {
		t.Fatalf("clockshim: gcc: %v\n%s", err, out)
	}
	if err := c.write(0); err != nil {
		t.Fatalf("clockshim: %v", err)
	}
	return c
}

// Env is the environment a process needs to run with the Clock's offset
// (redistest.Options.Env).
func (c *Clock) Env() []string {
	return []string{"LD_PRELOAD=" + c.lib, "CLOCKSHIM_FILE=" + c.file}
}

// Step moves the wall clock of the Clock's processes by d (forward when
// positive), at once, and returns the offset it has now.
func (c *Clock) Step(d time.Duration) (time.Duration, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.write(c.offset + d); err != nil {
		return c.offset, err
	}
	c.offset += d
	return c.offset, nil
}

// write puts offset in the file, in place: the processes have it mapped.
func (c *Clock) write(offset time.Duration) error {
	f, err := os.OpenFile(c.file, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	var b [8]byte
	binary.NativeEndian.PutUint64(b[:], uint64(offset))
	if _, err := f.WriteAt(b[:], 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
