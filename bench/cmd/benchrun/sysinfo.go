package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// loadavg is the 1/5/15-minute load average from /proc/loadavg.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func load1(s string) float64 {
	f := strings.Fields(s)
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}

// cpuModel is the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// nproc is what `nproc` prints (the CPUs this process may run on).
func nproc() int {
	if out, err := exec.Command("nproc").Output(); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(out))); err == nil {
			return n
		}
	}
	return runtime.NumCPU()
}

type cpuTimes struct{ busy, total int64 } // clock ticks, all CPUs

// readCPU reads the first line of /proc/stat.
func readCPU() cpuTimes {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{-1, -1}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return cpuTimes{-1, -1}
	}
	var t cpuTimes
	for i, s := range f[1:] {
		v, _ := strconv.ParseInt(s, 10, 64)
		if i >= 8 { // guest time is already counted in user
			break
		}
		t.total += v
		if i != 3 && i != 4 { // idle, iowait
			t.busy += v
		}
	}
	return t
}

// ownCPU is the CPU time (ticks) of the given processes: the harness, its
// proxy child and its redis-servers.
func ownCPU(pids []int) int64 {
	var sum int64
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64) // utime (field 14)
		k, _ := strconv.ParseInt(f[12], 10, 64) // stime (field 15)
		sum += u + k
	}
	return sum
}

// otherCPUShare is the share of the machine's CPU time used by processes
// other than the benchmark's during the run (-1 when unknown).
func otherCPUShare(a, b cpuTimes, own int64) float64 {
	if a.total < 0 || b.total <= a.total {
		return -1
	}
	other := float64(b.busy-a.busy-own) / float64(b.total-a.total)
	return max(0, other)
}

// versions lists the libraries under test, from the build information.
func versions() []string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return []string{"unknown (no build information)"}
	}
	want := []struct{ path, name string }{
		{"github.com/redlease/redlease", "redlease"},
		{"github.com/go-redsync/redsync/v4", "redsync"},
		{"github.com/redis/rueidis", "rueidis (rueidislock)"},
		{"github.com/bsm/redislock", "bsm/redislock"},
		{"github.com/redis/go-redis/v9", "go-redis (redlease, redsync, bsm/redislock)"},
	}
	var out []string
	for _, w := range want {
		for _, d := range bi.Deps {
			if d.Path != w.path {
				continue
			}
			v := d.Version
			if d.Replace != nil {
				v = "=> " + d.Replace.Path
				if d.Replace.Version != "" {
					v += " " + d.Replace.Version
				}
				if w.name == "redlease" {
					v += gitState()
				}
			}
			out = append(out, w.name+" "+v)
		}
	}
	return out
}

// gitState describes the working tree redlease was built from.
func gitState() string {
	sha, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	s := " (git " + strings.TrimSpace(string(sha))
	st, err := exec.Command("git", "status", "--porcelain", "--", ":(top)", ":(top,exclude)bench", ":(top,exclude)docs").Output()
	if err == nil && len(strings.TrimSpace(string(st))) > 0 {
		s += ", with uncommitted changes"
	}
	return s + ")"
}
