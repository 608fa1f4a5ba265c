// Package unsafeopt turns safety guards of the library off, for the
// negative controls of its safety tests only: a control shows that a
// checker catches the violation its guard prevents. Nothing outside this
// module can import it, and no exported name of the public packages
// carries these switches.
package unsafeopt

// Off lists the guards a control may turn off. The zero value turns none
// off.
type Off struct {
	// ReplicationIDCheck: the quarantine compares a node's run_id with its
	// marker's, but not its replication ID, so a master whose dataset was
	// replaced while its process kept running (a failback after a full
	// resync) votes at once.
	ReplicationIDCheck bool
}

// setRedlock is registered by package redlock (see Register).
var setRedlock func(cfg any, off Off)

// Register is called once, by package redlock's init, with the function
// that records off in a *redlock.Config.
func Register(set func(cfg any, off Off)) { setRedlock = set }

// Apply records off in cfg, a *redlock.Config: a Client made from it runs
// with those guards off.
func Apply(cfg any, off Off) {
	if setRedlock == nil {
		panic("unsafeopt: package redlock is not linked in")
	}
	setRedlock(cfg, off)
}
