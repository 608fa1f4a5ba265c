# redlease: `make test` is everything CI runs.
SHELL       := /bin/bash
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
GO_PKGS     := ./...

.PHONY: test check redis-server unit fuzz bench soak sim

## test: install redis-server if missing, then gofmt, vet, staticcheck, every test
## with -race, and a short run of every fuzzer (their seed corpora run as tests too).
## A failed run ends with its failures again (the failing tests' names, assertion
## reports, panics and leak reports), taken from the whole output kept in TEST_LOG.
TEST_LOG ?= $(or $(TMPDIR),/tmp)/redlease-test.log
test: redis-server check
	@echo "go test -race -count=1 -timeout 15m $(GO_PKGS)  (output also in $(TEST_LOG))"
	@set -o pipefail; go test -race -count=1 -timeout 15m $(GO_PKGS) 2>&1 | tee $(TEST_LOG) || { \
	  echo; echo "==== failures, repeated from $(TEST_LOG) ===="; \
	  grep -E -A7 -e 'Error Trace:|^panic:|goleak:|\[setup failed\]|build failed' $(TEST_LOG) | cut -c1-240 | tail -n 80; \
	  echo "==== failed:"; grep -E -e '--- FAIL|^FAIL|^panic:' $(TEST_LOG) | tail -n 25; \
	  exit 1; }
	$(MAKE) --no-print-directory fuzz FUZZTIME=5s

## fuzz: every fuzzer for FUZZTIME each (default 5m).
FUZZTIME ?= 5m
fuzz:
	go test -run '^$$' -fuzz '^FuzzParseReply$$' -fuzztime $(FUZZTIME) ./redlock/
	go test -run '^$$' -fuzz '^FuzzClientReplies$$' -fuzztime $(FUZZTIME) ./redlock/
	go test -run '^$$' -fuzz '^FuzzDecodeValue$$' -fuzztime $(FUZZTIME) ./lease/
	go test -run '^$$' -fuzz '^FuzzValueRoundTrip$$' -fuzztime $(FUZZTIME) ./lease/

## soak: the fault suite's soak alone (integration/faults, -race): candidate processes
## under a random fault every 5s for DURATION (default 90s; 30s at least), seeded
## by SEED (default: a new seed, printed; SEED=<it> replays the run's choices).
## REDLEASE_FAULTS_REPORT=<file> also writes its line of the "faults survived" table.
DURATION ?= 90s
SEED     ?=
soak: redis-server
	REDLEASE_SOAK=$(DURATION) $(if $(SEED),REDLEASE_FAULTS_SEED=$(SEED)) \
	  go test -race -count=1 -timeout 0 -v -run '^TestFaults$$/^soak$$' ./integration/faults/

## sim: the deterministic-simulation explorer (integration/faults/sim): the real
## client code against simulated servers in virtual time, from a random seed
## (SEED=<n> to choose) for DURATION; prints schedules per second, faults by
## kind, script-branch coverage and a last line `sim: schedules=N ...`.
sim:
	@set -o pipefail; REDLEASE_SIM=$(DURATION) $(if $(SEED),REDLEASE_SIM_SEED=$(SEED)) \
	  go test -count=1 -timeout 0 -v -run '^TestSimSoak$$' ./integration/faults/sim/ | grep -v -E '^(=== |    --- |--- PASS: TestSimSoak/)'

## check: formatting and static analysis only.
check:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	  if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	go vet $(GO_PKGS)
	go run $(STATICCHECK) $(GO_PKGS)

## unit: the fast tests only (miniredis; no real servers needed).
unit:
	go test -race -count=1 -short ./redlock/... ./lease/... ./election/... ./observer/...

## redis-server: the integration tests run real redis-server processes.
redis-server:
	@if ! command -v redis-server >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "redis-server missing: installing Debian's package"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; \
	  else \
	    echo "redis-server is missing: install it (Debian/Ubuntu: sudo apt-get install redis-server), then run make test again" >&2; \
	    exit 1; \
	  fi; \
	fi
	@redis-server --version

## bench: redlease against its peers (redsync, rueidislock, bsm/redislock) on 5 local
## redis-servers; bench/ is its own Go module (`make test` never builds it). Writes
## docs/bench/results.md and docs/bench/chart.svg; ~6 minutes on 2 cores.
## BENCH_FLAGS passes options, e.g. BENCH_FLAGS='-rounds 3' or BENCH_FLAGS='-note "..."'.
bench: redis-server
	cd bench && go run ./cmd/benchrun -out ../docs/bench $(BENCH_FLAGS)
