package redlock

import "time"

// readinessDue starts a readiness pass when one is due
// (internal/quarantine.Readiness, docs/design.md §4.9);
// every fan-out calls it.
func (c *Client) readinessDue() {
	if c.cfg.DisableQuarantine || c.raising.Load() {
		return
	}
	if c.ready.PassDue(time.Now().UnixNano()) {
		c.raisePass()
	}
}
