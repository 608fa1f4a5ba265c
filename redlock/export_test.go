package redlock

// Unexported values that the external tests (package redlock_test) use.
const (
	ConfStale = confStale
)
