package main

import "syscall"

// pdeathsig has the kernel send SIGKILL to the child when redlease dies
// (even by SIGKILL): a leader's command must not outlive the term that
// redlease can no longer end. It reaches the child only, not the processes
// the child started; those still get the signals redlease sends to the
// group while it lives. (Linux sends it when the thread that started the
// child exits; the Go runtime ends no thread of a program that locks none.)
func pdeathsig(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
