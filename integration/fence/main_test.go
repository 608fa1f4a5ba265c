package fence

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// leaderBin is the leader program (internal/leader), built once.
var leaderBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "redlease-fence-leader-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	leaderBin = filepath.Join(dir, "leader")
	build := exec.Command("go", "build", "-o", leaderBin, "./internal/leader")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	code := 1
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building internal/leader:", err)
	} else {
		code = m.Run()
		if err := goleak.Find(); code == 0 && err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
