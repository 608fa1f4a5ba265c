package fencetest

import (
	"testing"

	"github.com/redlease/redlease/internal/testing/testnodes"
)

func TestMain(m *testing.M) { testnodes.Main(m) }
