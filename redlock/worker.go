package redlock

// Requests of a fan-out run in per-node worker goroutines that outlive one
// request (internal/workers, docs/design.md §4.13).

// job is node i of one fan-out.
type job struct {
	f *flight
	i int
}

// Run runs node i's request of the fan-out.
func (j job) Run() { j.f.run(j.i) }
