//go:build !linux

package main

// subprocessMain: the watchdog's process tests run on Linux only.
func subprocessMain() {}
