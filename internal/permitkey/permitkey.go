// Package permitkey is the layout of a semaphore's permits (K permits on a
// name: lease.Config.Permits): the key of each permit, and the most
// permits a semaphore may have. Packages lease, observer and the CLI use
// it, so that they all name the same keys (docs/design.md §5.3).
package permitkey

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/redlease/redlease/internal/keycheck"
)

// Max is the most permits a semaphore may have.
const Max = 1024

// suffix is between a semaphore's name and the index of its permits
// above 0.
const suffix = ":permit:"

// Key is the key of permit i of the semaphore called name: name itself
// for permit 0 (so that a plain lease on name is its permit 0), and
// "<name>:permit:<i>" for the others. A hash tag in name stays the tag of
// every permit.
func Key(name string, i int) string {
	if i == 0 {
		return name
	}
	return name + suffix + strconv.Itoa(i)
}

// Index returns i when key is the key of permit i of the semaphore
// called name (Key(name, i) == key), and false when it is none of its
// permits' keys.
func Index(name, key string) (int, bool) {
	if key == name {
		return 0, true
	}
	rest, ok := strings.CutPrefix(key, name+suffix)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(rest)
	if err != nil || i <= 0 || Key(name, i) != key { // "+1", "01": not a key Key makes
		return 0, false
	}
	return i, true
}

// Problem returns what is wrong with k permits on name ("" when nothing
// is): k outside 0..Max (0 and 1 mean a plain lock), or a permit key
// above the size limit. what names the setting ("Permits", "--permits").
func Problem(what, name string, k int) string {
	if k < 0 || k > Max {
		return fmt.Sprintf("%s (%d) must be between 0 and %d", what, k, Max)
	}
	if k > 1 {
		if p := keycheck.Problem("key", Key(name, k-1)); p != "" {
			return fmt.Sprintf("permit %d of the semaphore: %s", k-1, p)
		}
	}
	return ""
}
