// Command redlease runs a command under leader election on Redis, and shows
// and follows an election.
//
//	go install github.com/redlease/redlease/cmd/redlease@latest
//
//	export REDLEASE_NODES=redis-a:6379,redis-b:6379,redis-c:6379
//	redlease run --name reports -- ./generate-reports --token-from-env
//	redlease status --name reports
//	redlease watch --name reports
//
// `redlease run` campaigns for the election; while it leads it runs the
// command with the term's fencing token in REDLEASE_TOKEN, and stops it
// (SIGTERM, then SIGKILL after --grace) before the term's validity ends
// when leadership is lost; on Unix a watchdog process kills it at the
// term's deadline if redlease itself is frozen. `redlease status` prints
// every node's view and the majority's verdict; `redlease watch` prints
// every change of leader; `redlease bootstrap`, an operator's act on a
// brand-new deployment (never after a crash), makes new nodes vote at once
// instead of after --max-ttl; `redlease doctor` checks the nodes against what
// redlease assumes (doctor), with exit codes of its own.
// See README.md beside this file, or `redlease --help`, for every flag and
// the exit codes.
//
// It adds no mechanism of its own to the library's but the watchdog: it
// is an elector (package election) whose term runs a child process, and
// an observer (package observer) for status and watch. docs/design.md §6 explains
// terms, handover and observers; §3 the assumptions under which a term's
// fencing token and its deadline can be trusted:
// https://github.com/redlease/redlease/blob/main/docs/design.md
package main
