package faults

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/redlease/redlease/internal/testing/testnodes"
)

func TestMain(m *testing.M) { testnodes.Main(m) }

// buildCandidate builds the candidate program into dir, with the race
// detector when this test binary has it (the build then reuses the
// packages compiled for the test, and the candidates are checked for data
// races too).
func buildCandidate(t *testing.T, dir string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the candidate program: %v", err)
	}
	bin := filepath.Join(dir, "candidate")
	// The tag gives the candidate its negative controls' switches
	// (internal/unsafeopt); a normal build has none.
	args := []string{"build", "-tags", "redlease_unsafe", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	start := time.Now()
	cmd := exec.Command(goBin, append(args, "./internal/candidate")...)
	if raceEnabled {
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build of the candidate: %v\n%s", err, out)
	}
	t.Logf("candidate built (race=%t) in %s", raceEnabled, time.Since(start).Round(time.Millisecond))
	return bin
}
