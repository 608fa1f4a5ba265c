// Package observer tells who leads an election, and streams the changes,
// without ever campaigning: for standby replicas that forward requests to
// the leader, dashboards, and the CLI.
//
// It reads what package lease writes, through redlock's majority reads,
// and sits below package election. Who leads is a redlock.Holder, as in
// every package; redlock.ErrNoHolder says nobody does. A Watch is the
// standbys' path; a candidate has its elector's callbacks and events, and
// metrics the client's Hooks (docs/notifications.md). docs/design.md §6.2
// explains it, §4.4 the majority read, §4.12 the change notices:
// https://github.com/redlease/redlease/blob/main/docs/design.md
//
// The election's state lives in one lease key (the election's name; see
// package lease): [Observer.Leader] is a majority read of that key, giving
// the leader's ID, metadata, fencing token and remaining validity.
// [Observer.Watch] streams every change it sees, "no leader" included. It
// subscribes to the key's change notices on every node (lease publishes on
// acquire and release), confirms each notice with a majority read (notices
// are hints: they can be lost, late or forged), and polls at PollInterval
// for what Pub/Sub missed. It also reads again when the current leader's key
// is due to lapse, so a leader that crashed is reported gone soon after its
// key expired on a majority of nodes.
//
// # Unknown is not "no leader"
//
// When fewer than a majority of nodes answer (down, partitioned, or
// quarantined after losing their data), nobody can tell whether a leader
// exists: the answer is [ErrUnknown] (Leader, and the Err of a Watch's
// [Event]), never the last leader seen and never "no leader". A leader that
// holds the key on a majority is reported even if some nodes are down. A Watch says
// unknown only once no majority answered for Config.UnknownGrace (1s by
// default, two reads at least): one read lost to a loaded host is not an
// outage.
//
// # Guarantees
//
// A majority read is a snapshot: by the time it returns, the leader may
// have resigned or lost its term. Use the answer to route or to display,
// never to exclude: only the leader itself (election.Elector.IsLeader, its
// term's context) and fencing tokens are safe for that. Watch reports
// changes in the order it observed them; a leader that came and went
// between two reads (within a few milliseconds, with its notices lost) may
// be missed.
package observer
