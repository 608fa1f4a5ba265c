package redistest

import (
	"context"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// versions caches describe's answers by binary path.
var versions sync.Map

// describe names the server a binary runs and its version, with the
// binary's path, as "Valkey 8.0.1 (/usr/bin/valkey-server)", for the
// errors of Start and its kin: a failure says which server failed. The
// binary's --version is read once per path.
func describe(bin string) string {
	if v, ok := versions.Load(bin); ok {
		return v.(string)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d := bin + " (version unknown)"
	// "Redis server v=7.0.15 sha=...", "Valkey server v=8.0.1 sha=..."
	if out, err := exec.CommandContext(ctx, bin, "--version").Output(); err == nil {
		f := strings.Fields(string(out))
		for _, w := range f {
			if v, ok := strings.CutPrefix(w, "v="); ok && len(f) > 0 {
				d = f[0] + " " + v + " (" + bin + ")"
				break
			}
		}
	}
	versions.Store(bin, d)
	return d
}
