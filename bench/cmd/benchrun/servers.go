package main

import (
	"os"
	"os/exec"
	"strings"
)

// redisVersion is `redis-server --version`.
func redisVersion() string {
	bin := os.Getenv("REDLEASE_REDIS_SERVER")
	if bin == "" {
		bin = "redis-server"
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return strings.TrimSpace(string(out))
}
