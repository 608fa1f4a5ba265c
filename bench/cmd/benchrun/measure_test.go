package main

import (
	"testing"
	"time"
)

func TestGuardAbandonsAHungCall(t *testing.T) {
	h := newHarness(time.Millisecond, time.Millisecond, 0, 0)
	old := h.bufs[3]
	block := make(chan struct{})
	defer close(block)
	if h.guard(20*time.Millisecond, []int{3}, func() { <-block }) {
		t.Fatal("guard reported a blocked call as returned")
	}
	if &h.bufs[3][:1][0] == &old[:1][0] {
		t.Fatal("the abandoned call's latency buffer was not replaced")
	}
	if !h.guard(time.Second, nil, func() {}) {
		t.Fatal("guard reported a returning call as hung")
	}
}

func TestKeyGenMakesFreshKeys(t *testing.T) {
	kg := newKeyGen("p:")
	a, b := kg.next(), kg.next()
	if a != "p:1" || b != "p:2" {
		t.Fatalf("keys %q %q", a, b)
	}
}

func TestRotate(t *testing.T) {
	got := rotate([]int{1, 2, 3}, 4)
	if got[0] != 2 || got[1] != 3 || got[2] != 1 {
		t.Fatalf("rotate: %v", got)
	}
}
