package sim

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Coverage counts, for every script the servers ran, how often each branch
// of it was taken: every "then" and "else" arm (the text is instrumented
// before it is compiled; the instrumentation only counts).
type Coverage struct {
	mu       sync.Mutex
	branches []*branch
	seen     map[string]bool // scripts instrumented
}

type branch struct {
	script string
	line   int
	text   string
	hits   atomic.Int64
}

func newCoverage() *Coverage { return &Coverage{seen: map[string]bool{}} }

// instrument inserts a counter after every then and else keyword of src
// (outside strings and comments).
func (c *Coverage) instrument(name, src string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	line := 1
	lines := strings.Split(src, "\n")
	for i := 0; i < len(src); i++ {
		ch := src[i]
		switch {
		case ch == '\n':
			line++
		case ch == '-' && i+1 < len(src) && src[i+1] == '-':
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				j = len(src) - i
			}
			b.WriteString(src[i : i+j])
			i += j - 1
			continue
		case ch == '\'' || ch == '"':
			j := i + 1
			for j < len(src) && src[j] != ch {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			b.WriteString(src[i:min(j+1, len(src))])
			i = j
			continue
		case isIdentStart(ch) && (i == 0 || !isIdent(src[i-1])):
			j := i
			for j < len(src) && isIdent(src[j]) {
				j++
			}
			word := src[i:j]
			b.WriteString(word)
			if word == "then" || word == "else" {
				id := len(c.branches)
				c.branches = append(c.branches, &branch{script: name, line: line,
					text: strings.TrimSpace(lines[line-1]) + " [" + word + "]"})
				fmt.Fprintf(&b, " redlease_sim_cov(%d)", id)
			}
			i = j - 1
			continue
		}
		b.WriteByte(ch)
	}
	c.seen[name] = true
	return b.String()
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdent(c byte) bool      { return isIdentStart(c) || c >= '0' && c <= '9' }

func (c *Coverage) hit(id int) {
	c.mu.Lock()
	b := c.branches[id]
	c.mu.Unlock()
	b.hits.Add(1)
}

// BranchCount is one branch and how often it was taken.
type BranchCount struct {
	Script string
	Line   int
	Text   string
	Hits   int64
}

// Branches returns every branch of every script run so far, by script
// and line. A script text compiled in several variants (a control's
// mutation) counts once per variant.
func (c *Coverage) Branches() []BranchCount {
	c.mu.Lock()
	defer c.mu.Unlock()
	byKey := map[string]*BranchCount{}
	var out []*BranchCount
	for _, b := range c.branches {
		k := fmt.Sprintf("%s:%d:%s", b.script, b.line, b.text)
		if bc := byKey[k]; bc != nil {
			bc.Hits += b.hits.Load()
			continue
		}
		bc := &BranchCount{Script: b.script, Line: b.line, Text: b.text, Hits: b.hits.Load()}
		byKey[k] = bc
		out = append(out, bc)
	}
	res := make([]BranchCount, len(out))
	for i, b := range out {
		res[i] = *b
	}
	slices.SortFunc(res, func(a, b BranchCount) int {
		if a.Script != b.Script {
			return strings.Compare(a.Script, b.Script)
		}
		return a.Line - b.Line
	})
	return res
}

// Reset sets every count to zero.
func (c *Coverage) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range c.branches {
		b.hits.Store(0)
	}
}

// ScriptCoverage is the process-wide coverage of the scripts the simulated
// servers ran.
func ScriptCoverage() *Coverage { return sharedEngine.cov }

// WriteCounts writes branch counts to path (JSON), for another test
// process to merge (make sim: the differential test's counts beside the
// explorer's).
func WriteCounts(path string, counts []BranchCount) error {
	b, err := json.Marshal(counts)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// ReadCounts reads the branch counts WriteCounts wrote.
func ReadCounts(path string) ([]BranchCount, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var counts []BranchCount
	if err := json.Unmarshal(b, &counts); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return counts, nil
}

// MergeCounts adds the hits of b to those of the same branches of a
// (script, line and text), and appends b's other branches.
func MergeCounts(a, b []BranchCount) []BranchCount {
	out := slices.Clone(a)
	at := map[string]int{}
	for i, c := range out {
		at[c.Key()] = i
	}
	for _, c := range b {
		if i, ok := at[c.Key()]; ok {
			out[i].Hits += c.Hits
			continue
		}
		at[c.Key()] = len(out)
		out = append(out, c)
	}
	return out
}

// Key names the branch: its script, line and text.
func (c BranchCount) Key() string { return fmt.Sprintf("%s:%d:%s", c.Script, c.Line, c.Text) }

// PreludeKey names the branch by line and text only: the arms of the
// prelude the scripts share have the same one in every script.
func (c BranchCount) PreludeKey() string { return fmt.Sprintf("%d:%s", c.Line, c.Text) }
