package redlock

// Unexported values that the external tests (package redlock_test) use.
const (
	ConfRecheck = confRecheck
	ConfStale   = confStale
)
