package main

// The fault proxies (internal/testing/faultproxy) run in a child process, the
// harness binary re-executed with -proxy-child, driven by a line protocol
// on its stdin/stdout. In-process proxies would add their goroutines' CPU
// and their per-chunk allocations to every figure of the proxied cases
// (allocs/op is a process-wide MemStats delta); in a child they cost only
// what a network hop costs.
//
// Protocol (one command per line, one reply line each):
//
//	add <target>          -> ok <listen addr>
//	latency <i> <dur>     -> ok
//	disable <i>           -> ok      (node down: connections reset)
//	enable <i>            -> ok
//
// EOF on stdin closes every proxy and ends the child.

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redlease/redlease/internal/testing/faultproxy"
)

const proxyChildArg = "-proxy-child"

// runProxyChild is the child's main: it runs the commands read on stdin,
// one a line, and answers each on stdout ("ok ..." or "err ...").
func runProxyChild() int {
	var c proxyChild
	defer func() {
		for _, p := range c.proxies {
			_ = p.Close()
		}
	}()
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) == 0 {
			continue
		}
		fmt.Fprintln(out, c.do(f))
		_ = out.Flush()
	}
	return 0
}

// proxyChild is the child's proxies.
type proxyChild struct {
	proxies []*faultproxy.Proxy
}

// do runs one command, f being its fields, and returns the reply.
func (c *proxyChild) do(f []string) string {
	switch f[0] {
	case "add":
		if len(f) != 2 {
			return "err usage: add <target>"
		}
		p, err := faultproxy.New(f[1])
		if err != nil {
			return fmt.Sprintf("err %v", err)
		}
		c.proxies = append(c.proxies, p)
		return "ok " + p.Addr()
	case "latency":
		p, ok := c.get(f)
		if !ok || len(f) != 3 {
			return "err usage: latency <i> <dur>"
		}
		d, err := time.ParseDuration(f[2])
		if err != nil {
			return fmt.Sprintf("err %v", err)
		}
		p.SetLatency(d)
		return "ok"
	case "disable", "enable":
		p, ok := c.get(f)
		if !ok {
			return fmt.Sprintf("err usage: %s <i>", f[0])
		}
		if f[0] == "disable" {
			p.Disable()
		} else {
			p.Enable()
		}
		return "ok"
	}
	return fmt.Sprintf("err unknown command %q", f[0])
}

// get is the proxy whose index is f[1].
func (c *proxyChild) get(f []string) (*faultproxy.Proxy, bool) {
	if len(f) < 2 {
		return nil, false
	}
	i, err := strconv.Atoi(f[1])
	if err != nil || i < 0 || i >= len(c.proxies) {
		return nil, false
	}
	return c.proxies[i], true
}

// proxyCtl drives the proxy child.
type proxyCtl struct {
	mu   sync.Mutex
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	done chan struct{}
	n    int // proxies added
}

// startProxies starts the child and one proxy per target; it returns the
// proxies' addresses in the order of targets.
func startProxies(targets []string) (*proxyCtl, []string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(self, proxyChildArg)
	cmd.SysProcAttr = childAttr()
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	p := &proxyCtl{cmd: cmd, in: in, out: bufio.NewReader(out), done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	var addrs []string
	for _, t := range targets {
		_, a, err := p.add(t)
		if err != nil {
			p.close()
			return nil, nil, err
		}
		addrs = append(addrs, a)
	}
	return p, addrs, nil
}

// add starts one more proxy to target; it returns its index and address.
func (p *proxyCtl) add(target string) (int, string, error) {
	a, err := p.do("add " + target)
	if err != nil {
		return 0, "", err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	return p.n - 1, a, nil
}

// candProxies are one failover candidate's own proxies, one per server.
type candProxies struct {
	idx   []int
	addrs []string
}

// addCandidates starts n sets of proxies to targets, one set per failover
// candidate (so that one candidate can be cut off alone).
func (p *proxyCtl) addCandidates(targets []string, n int) ([]candProxies, error) {
	out := make([]candProxies, n)
	for i := range out {
		for _, t := range targets {
			k, a, err := p.add(t)
			if err != nil {
				return nil, err
			}
			out[i].idx = append(out[i].idx, k)
			out[i].addrs = append(out[i].addrs, a)
		}
	}
	return out, nil
}

// do sends one command and returns the text after "ok".
func (p *proxyCtl) do(line string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		return "", fmt.Errorf("proxy child: %w", err)
	}
	r, err := p.out.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("proxy child: %w", err)
	}
	r = strings.TrimSpace(r)
	if rest, ok := strings.CutPrefix(r, "ok"); ok {
		return strings.TrimSpace(rest), nil
	}
	return "", fmt.Errorf("proxy child: %q: %s", line, r)
}

func (p *proxyCtl) setLatency(i int, d time.Duration) error {
	_, err := p.do(fmt.Sprintf("latency %d %s", i, d))
	return err
}

func (p *proxyCtl) disable(i int) error { _, err := p.do(fmt.Sprintf("disable %d", i)); return err }
func (p *proxyCtl) enable(i int) error  { _, err := p.do(fmt.Sprintf("enable %d", i)); return err }

// close ends the child (EOF on its stdin), killing its PID if it does not
// exit within 5s.
func (p *proxyCtl) close() {
	_ = p.in.Close()
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}
