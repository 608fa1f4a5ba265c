package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A failed command's error is one line, even when joined (#32: an
// election's error printed "context canceled\nterminated").
func TestFailOneLine(t *testing.T) {
	var b bytes.Buffer
	out := &outputs{rawOut: &b, rawErr: &b, out: newRedactWriter(&b), err: newRedactWriter(&b), getenv: os.Getenv}
	c := newCommand("run", runUsage, out)
	err := fmt.Errorf("election: stopped: %w", errors.Join(context.Canceled, errors.New("terminated")))
	assert.Equal(t, exitError, c.fail(err))
	assert.Equal(t, "redlease run: election: stopped: context canceled; terminated\n", b.String())
}
