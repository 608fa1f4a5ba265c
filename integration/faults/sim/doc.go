// Package sim is the deterministic-simulation explorer of docs/design.md §7.2: the
// real redlock, lease and election code against simulated servers
// (internal/testing/sim) in virtual time (testing/synctest), under seeded random
// schedules of clients and faults, checked by the fault suite's checkers
// (internal/testing/checker) and a no-resurrection monitor on the
// servers. Its tests are the explorer over a fixed seed range, the
// negative controls it must find, and the replay of one seed:
//
//	go test ./integration/faults/sim -run TestSimReplay -seed N [-control NAME] [-mode clock]
//
// `make sim DURATION=10m` explores from a random seed (TestSimSoak).
package sim
