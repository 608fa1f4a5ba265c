package election

import (
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// dispatcher is the elector's callback goroutine: it runs OnDemoted and
// OnLeaderChange one at a time, in the order they were queued, so that a
// callback that blocks delays only the callbacks after it, never the
// elector. The queue is unbounded (one entry per term or change).
type dispatcher struct {
	log  hclog.Logger
	mu   sync.Mutex
	q    []func()
	shut bool
	wake chan struct{} // capacity 1
	done chan struct{} // closed when the goroutine returned
}

func newDispatcher(log hclog.Logger) *dispatcher {
	d := &dispatcher{log: log, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go d.run()
	return d
}

// push queues f.
func (d *dispatcher) push(f func()) {
	d.mu.Lock()
	d.q = append(d.q, f)
	d.mu.Unlock()
	d.signal()
}

// close makes the goroutine return once the queue is empty.
func (d *dispatcher) close() {
	d.mu.Lock()
	d.shut = true
	d.mu.Unlock()
	d.signal()
}

func (d *dispatcher) signal() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *dispatcher) run() {
	defer close(d.done)
	for {
		d.mu.Lock()
		if len(d.q) == 0 {
			shut := d.shut
			d.mu.Unlock()
			if shut {
				return
			}
			<-d.wake
			continue
		}
		f := d.q[0]
		d.q[0] = nil
		d.q = d.q[1:]
		d.mu.Unlock()
		f()
	}
}

// guard runs a callback, recovering a panic: it returns the panic, nil
// when f returned.
func guard(name string, f func()) (perr *callbackPanic) {
	defer func() {
		if v := recover(); v != nil {
			perr = &callbackPanic{callback: name, value: v, stack: debug.Stack()}
		}
	}()
	f()
	return nil
}

// call runs a callback of the dispatcher, logging a panic.
func (d *dispatcher) call(name string, f func()) {
	if p := guard(name, f); p != nil {
		d.log.Error(fmt.Sprintf("%s panicked; recovered", name), "panic", p.value, "stack", string(p.stack))
	}
}
