//go:build race

package sim

// raceEnabled: the race detector slows schedules about tenfold.
const raceEnabled = true
