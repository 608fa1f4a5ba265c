package main

import "syscall"

// pdeathsig has the kernel send SIGKILL to the child when its parent dies
// (even by SIGKILL): the watchdog, or redlease where there is none. A
// leader's command must not outlive the term that no one can end any more.
// It reaches the child only, not the processes the child started; those
// still get the signals sent to the group while its parent lives. (Linux
// sends it when the thread that started the child exits; the Go runtime
// ends no thread of a program that locks none.)
func pdeathsig(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
