package fence_test

import (
	"testing"

	"github.com/redlease/redlease/internal/testnodes"
)

func TestMain(m *testing.M) { testnodes.Main(m) }
