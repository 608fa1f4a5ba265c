package testnodes

import (
	"fmt"
	"sync"
	"testing"
)

func TestLogBuffer(t *testing.T) {
	b := &LogBuffer{T: t}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() { fmt.Fprintf(b, "[WARN] node=%d quarantined\n", i%2) })
	}
	wg.Wait()
	fmt.Fprintln(b, "[INFO] node=0 floor raised")
	if n := b.Count("[WARN]", "node=0"); n != 2 {
		t.Errorf("Count([WARN], node=0) = %d, want 2", n)
	}
	if n := b.Count("quarantined"); n != 4 {
		t.Errorf("Count(quarantined) = %d, want 4", n)
	}
	if n := b.Count("[ERROR]"); n != 0 {
		t.Errorf("Count([ERROR]) = %d, want 0", n)
	}
	if n := b.Count(); n != 5 {
		t.Errorf("Count() = %d lines, want 5", n)
	}
	if s := b.String(); len(s) == 0 || s[len(s)-1] != '\n' {
		t.Errorf("String() = %q, want every line kept", s)
	}
}
