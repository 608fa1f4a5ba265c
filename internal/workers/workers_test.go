package workers

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

// job reports on done when it runs.
type job struct{ done chan<- int }

func (j job) Run() { j.done <- 1 }

// A worker that finished takes the node's next job; it exits after Idle
// without one, or when closing is closed, and the WaitGroup counts it.
func TestPool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var wg sync.WaitGroup
		closing := make(chan struct{})
		p := New[job]()
		done := make(chan int, 1)
		for range 3 {
			wg.Add(1) // the caller's count of the job, as redlock's fan-out does
			p.Dispatch(job{done}, &wg, closing)
			<-done
			wg.Done()
			synctest.Wait() // the worker waits for the next job
		}
		time.Sleep(Idle + time.Millisecond)
		synctest.Wait()
		wg.Wait() // the idle worker exited

		wg.Add(1)
		p.Dispatch(job{done}, &wg, closing)
		<-done
		wg.Done()
		close(closing)
		wg.Wait() // the worker exits at closing
		assert.Empty(t, done)
	})
}
