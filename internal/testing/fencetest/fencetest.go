// Package fencetest is the checker of the fence guards' concurrency tests
// (package fence and integration/fence): writers with interleaved tokens
// through a guard, and a check that the log of the accepted writes never
// goes down, lost nothing, and ends with the highest token's writes.
package fencetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"

	"github.com/redlease/redlease/fence"
)

// Interleaved returns the tokens 1..n, each repeat times (a leader writes
// many times in its term), in a random order.
func Interleaved(n, repeat int) []uint64 {
	var ts []uint64
	for tok := 1; tok <= n; tok++ {
		for range repeat {
			ts = append(ts, uint64(tok))
		}
	}
	rand.Shuffle(len(ts), func(i, j int) { ts[i], ts[j] = ts[j], ts[i] })
	return ts
}

// Write runs write for every token, from writers goroutines at once, and
// returns how many writes were accepted. A refusal (fence.ErrStaleToken)
// is expected; any other error is returned.
func Write(tokens []uint64, writers int, write func(token uint64) error) (int, error) {
	var mu sync.Mutex
	accepted, errs := 0, []error(nil)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := w; i < len(tokens); i += writers {
				err := write(tokens[i])
				mu.Lock()
				switch {
				case err == nil:
					accepted++
				case !errors.Is(err, fence.ErrStaleToken):
					errs = append(errs, fmt.Errorf("token %d: %w", tokens[i], err))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return accepted, errors.Join(errs...)
}

// CheckRising checks the log of the accepted writes' tokens: never lower
// than an earlier entry, every accepted write there (no update lost), and
// the highest token's repeat writes all accepted, last.
func CheckRising(log []string, accepted int, highest uint64, repeat int) error {
	if len(log) != accepted {
		return fmt.Errorf("%d writes accepted, %d in the log %v: updates lost", accepted, len(log), log)
	}
	prev := uint64(0)
	for i, s := range log {
		tok, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return fmt.Errorf("entry %d of %v: %w", i, log, err)
		}
		if tok < prev {
			return fmt.Errorf("entry %d of %v went down", i, log)
		}
		prev = tok
	}
	want := slices.Repeat([]string{strconv.FormatUint(highest, 10)}, repeat)
	if len(log) < repeat || !slices.Equal(log[len(log)-repeat:], want) {
		return fmt.Errorf("the highest token's %d writes are not all accepted, last: %v", repeat, log)
	}
	return nil
}

// Unguarded is the NEGATIVE CONTROL's log: the same writes without a
// guard all land, in the order they come.
func Unguarded(tokens []uint64) []string {
	log := make([]string, len(tokens))
	for i, tok := range tokens {
		log[i] = strconv.FormatUint(tok, 10)
	}
	return log
}
