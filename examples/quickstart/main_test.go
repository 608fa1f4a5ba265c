package main

import (
	"testing"

	"go.uber.org/goleak"
)

// The quickstart must keep running: make test runs it on embedded nodes.
func TestQuickstart(t *testing.T) {
	defer goleak.VerifyNone(t)
	t.Setenv("REDLEASE_NODES", "")
	if err := run(); err != nil {
		t.Fatal(err)
	}
}
