package observer

import (
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/redlease/redlease/internal/logx"
	"github.com/redlease/redlease/internal/permitkey"
	"github.com/redlease/redlease/redlock"
)

// Defaults of [Config]; see each field.
const (
	defaultPollInterval = time.Second
	defaultEventBuffer  = 16
	defaultUnknownGrace = time.Second
)

// Config tunes an [Observer]. The zero value of every field means its
// default, documented on the field. [New] copies the Config: changing it
// afterwards has no effect.
type Config struct {
	// PollInterval is the mean time between two majority reads of a
	// [Watch] when no change notice arrives: a random time in
	// [PollInterval/2, PollInterval*3/2], so that observers do not read in
	// step. Polling only catches what Pub/Sub missed (a notice lost while a
	// node was unreachable, a subscription being re-established); changes
	// are normally seen within a round trip of their notice.
	// Default: 1s.
	PollInterval time.Duration

	// EventBuffer is the capacity of the channel of a [Watch]. A reader
	// that falls behind by more delays the watch's next read (never an
	// elector: observers do not campaign). Default: 16.
	EventBuffer int

	// UnknownGrace is how long fewer than a majority of nodes must answer
	// before a [Watch] reports unknown (an [Event] with Err set). A read that finds no
	// majority (every node slow to answer within NodeTimeout on a loaded
	// host, a node restarting) is read again, every UnknownGrace/4 with
	// jitter, and unknown is reported only when the reads kept failing for
	// UnknownGrace and at least two of them failed; any other state is
	// reported at once. A real outage is thus reported after UnknownGrace
	// plus a read. It applies to the first event of a Watch too, and not
	// to [Observer.Leader], which is one read. Default: 1s.
	UnknownGrace time.Duration

	// Permits, above 1, makes the name that of a semaphore of Permits
	// permits (lease.Config.Permits) rather than an election's: the
	// events of a [Watch] then list the holder of every permit
	// (Event.Holders), and [Observer.Leader], which reads one key, refuses.
	// It should be the semaphore's own Permits. At most 1024. Default: 1
	// (an election, or a plain lease).
	Permits int

	// Logger receives the observer's logs with stable keys (key, node,
	// error). Default: the client's logger (redlock.Config.Logger).
	Logger hclog.Logger
}

func (c Config) withDefaults() Config {
	if c.PollInterval == 0 {
		c.PollInterval = defaultPollInterval
	}
	if c.EventBuffer == 0 {
		c.EventBuffer = defaultEventBuffer
	}
	if c.UnknownGrace == 0 {
		c.UnknownGrace = defaultUnknownGrace
	}
	c.Logger = logx.Flat(c.Logger) // nil: a null logger
	return c
}

// validate reports the first invalid setting, with its value, as an error
// wrapping redlock.ErrInvalidArgument ([New] returns it). Zero values are
// valid (they mean defaults).
func (c Config) validate() error {
	switch {
	case c.PollInterval < 0:
		return fmt.Errorf("%w: PollInterval (%s) must not be negative", errInvalidConfig, c.PollInterval)
	case c.PollInterval > 0 && c.PollInterval < time.Millisecond:
		return fmt.Errorf("%w: PollInterval (%s) must be at least 1ms", errInvalidConfig, c.PollInterval)
	case c.EventBuffer < 0:
		return fmt.Errorf("%w: EventBuffer (%d) must not be negative", errInvalidConfig, c.EventBuffer)
	case c.Permits < 0 || c.Permits > permitkey.Max:
		return fmt.Errorf("%w: Permits (%d) must be between 0 and %d", errInvalidConfig, c.Permits, permitkey.Max)
	case c.UnknownGrace < 0:
		return fmt.Errorf("%w: UnknownGrace (%s) must not be negative", errInvalidConfig, c.UnknownGrace)
	}
	return nil
}

// errInvalidConfig starts the errors of validate.
var errInvalidConfig = fmt.Errorf("%w: observer.Config", redlock.ErrInvalidArgument)
