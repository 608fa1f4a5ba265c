// Package sim simulates Redis servers in one process, in virtual time, for
// the deterministic-simulation tests of the library (docs/design.md §7.2).
//
// A [World] holds simulated servers, the addresses clients dial and the
// links between them, with their faults (pauses, partitions, slow replies,
// restarts empty or from a snapshot, failovers, clock steps). A [Server]
// runs the library's own Lua scripts on gopher-lua, the commands those
// scripts and the client use, and reports the facts the quarantine reads
// (TIME from its own clock, run_id, replication ID, role). go-redis
// clients reach it through in-memory connections ([Pipe]), so the library
// runs unchanged. Under testing/synctest every wait is on a channel or a
// timer, so a run is reproducible from its seed. A differential test keeps
// the simulation honest against real redis-server and valkey-server
// processes. The explorer that drives it is integration/faults/sim.
package sim
