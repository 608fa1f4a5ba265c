package election

import (
	"time"

	"github.com/redlease/redlease/observer"
)

// emit sends ev on the Events channel without ever waiting: a full buffer
// drops it (counted by Dropped).
func (e *Elector) emit(ev observer.Event) {
	ev.At = time.Now()
	select {
	case e.events <- ev:
	default:
		e.dropped.Add(1)
	}
}
