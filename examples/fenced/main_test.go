package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/redlease/redlease/internal/testing/testnodes"
)

// TestMain checks that the example leaves no goroutine behind.
func TestMain(m *testing.M) { testnodes.Main(m) }

// The example must keep telling its story: the late write of the first
// leader is refused, the second leader's value stays.
func TestFenced(t *testing.T) {
	s := testnodes.RunExample(t, 30*time.Second, run)
	assert.Regexp(t, `(?m)^alice writes "v1" with token (\d+): ok$`, s)
	assert.Regexp(t, `(?m)^bob writes "v2" with token \d+: ok$`, s)
	assert.Regexp(t, `(?m)^alice writes "v1, edited \(late\)" with token \d+: refused: fence: stale token \d+ for resource "report": it has accepted token \d+$`, s)
	assert.Regexp(t, `(?m)^the report holds "v2"$`, s)
}
