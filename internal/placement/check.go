package placement

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Check checks which master serves each copy, records it in the copy's
// Master (errors and logs name a copy by its slot and that master), and
// logs the placement once per change, as a warning when it costs fault
// tolerance. It reports whether the placement changed.
func (w *Watcher) Check(ctx context.Context) (changed bool) {
	rs, shared := w.Now(ctx)
	var b strings.Builder
	unknown := false
	var which []string // copies of one bucket on one master
	on := map[string][]string{}
	for i, r := range rs {
		if r.Index == 0 {
			which = sharing(which, on)
			clear(on)
		}
		fmt.Fprintf(&b, "%d:%s ", r.Slot, r.Master)
		w.copies[i].Master.Set(r.Master)
		if r.Master == "" {
			unknown = true
		} else {
			on[r.Master] = append(on[r.Master], fmt.Sprintf("%d (slot %d)", r.Index, r.Slot))
		}
	}
	which = sharing(which, on)
	sig := strings.TrimSpace(b.String())
	w.mu.Lock()
	changed = sig != w.last
	w.last = sig
	w.mu.Unlock()
	if !changed {
		return false
	}
	switch {
	case unknown:
		w.log.Warn("cluster: the master of a lock copy is unknown", "placement", sig)
	case shared:
		slices.Sort(which)
		msg := "cluster: two copies of every lock share a master: one failure costs two votes"
		if w.buckets > 1 {
			msg = "cluster: two copies of the locks of a bucket share a master: one failure costs two votes for its keys"
		}
		w.log.Warn(msg, "shared", strings.Join(which, "; "), "placement", sig)
	default:
		w.log.Info("cluster: each copy of the locks on its own master", "placement", sig)
	}
	return true
}

// sharing appends to which the copies of one bucket that on (master ->
// copies) puts on one master.
func sharing(which []string, on map[string][]string) []string {
	for m, cs := range on {
		if len(cs) > 1 {
			which = append(which, "copies "+strings.Join(cs, " and ")+" on "+m)
		}
	}
	return which
}
