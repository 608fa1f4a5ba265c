# redlease: `make test` is everything CI runs.
SHELL       := /bin/bash
# staticcheck, pinned in .ci/tools/go.mod (v0.8.2) and built from the module
# cache: `go run honnef.co/go/tools/cmd/staticcheck@v0.8.2` asked the module
# proxy on every run, and a TLS handshake timeout failed make check once.
STATICCHECK_MOD := .ci/tools/go.mod
# The longest packages first, so that they start first and the short ones fill
# in after (go test starts them in this order, TEST_P at a time; ./... after
# them adds the rest once).
GO_PKGS     := ./integration/faults/sim/ ./redlock/ ./integration/faults/ ./lease/ ./election/ ./cmd/redlease/ ./...
# The tests build with the switches of the negative controls (internal/unsafeopt,
# redlock.SetUnsafe), which a normal build does not contain; so do the fault
# suite's candidate (integration/faults builds it so) and the simulator.
UNSAFE      := -tags redlease_unsafe

.PHONY: test check servers redis-server unit fence-sql busy-watch fuzz bench soak sim sim-wasm-build sim-replay sim-wasm sim-exact contrib tidy pin

## test: install the servers if missing (see servers), then gofmt, vet, staticcheck
## (make check: of the root module and of the adapter modules, CONTRIB; at nice 19
## beside the tests, so that it compiles while they wait on TTLs and servers and
## takes no CPU they want: before them it took ~3 minutes of a clean clone's ~14.5,
## and at the same priority beside them it slowed them; its output and verdict are
## printed after them), every test with -race on Redis (REDIS_SERVER) and the
## packages that start real servers again on Valkey (VALKEY_SERVER), the adapter
## modules' tests (see contrib), and a short run of every fuzzer (their seed corpora
## run as tests too). The two servers share one go test run: each test binary runs
## on Redis, then, for SERVER_PKGS, on Valkey (.ci/on-servers; side by side with
## TEST_SERVERS_AT_ONCE=2), so both are built once and one queue of packages keeps
## both cores busy (two passes one after the other left a core idle at the end of
## each). The run names its servers first and
## last; a failed run ends with its failures again (the failing tests' names,
## assertion reports, panics and leak reports), each under a line naming its
## server, and the longest runs are listed. The whole output is kept in TEST_LOG.
## Package fence against real stores (fence-sql) runs beside it (its output
## printed after it), and the observer's busy-host watch (busy-watch, for
## TEST_BUSY_WATCH) beside the adapters' tests and the fuzzers. The tests pick
## their server binary from REDLEASE_REDIS_SERVER (a path or a name in PATH;
## default redis-server).
TEST_LOG    ?= $(or $(TMPDIR),/tmp)/redlease-test.log
# The packages whose tests start real servers: run on Valkey too. (internal/testing/sim's
# differential test runs both servers itself; integration/faults/sim simulates them.)
# What does not depend on the server runs in the Redis run only: the tests on
# miniredis (REDLEASE_SERVER_ONLY makes testnodes skip them), and the fault
# suite's negative controls and soak (REDLEASE_FAULTS_SERVER_ONLY).
SERVER_PKGS := ./integration/faults/ ./redlock/... ./election/... ./lease/... ./cmd/... ./examples/cluster/... \
               ./examples/readme/... ./integration/security/... ./internal/testing/redistest/... \
               ./observer/... ./fence/... ./doctor/... ./examples/quickstart/...
# The busy-host watch in make test: 25s, about as long as the adapters' tests and
# the fuzzers it runs beside (make busy-watch alone: BUSY_WATCH, 2m; docs/testing.md).
TEST_BUSY_WATCH ?= 25s
# The fuzzers in make test: a count of executions each, not a duration. With a
# duration Go's fuzzing coordinator can fail at its deadline with "context
# deadline exceeded" and no failing input (golang/go#75804, fixed in Go 1.27;
# CI failed so on FuzzValueRoundTrip, 2026-11-28); a count has no deadline.
# 10,000 takes FuzzClientReplies ~8s here, FuzzParseReply ~6s, the others ~1s
# (each after ~3s of baseline coverage); make fuzz is the long run.
TEST_FUZZTIME ?= 10000x
# The free space make test wants in the file systems of Go's build cache and of
# TMPDIR (.ci/disk-check says what is short and what frees it). A clean-clone
# make test added 148 MiB to a warm cache (2026-11-28); the cache keeps every
# build of every commit until it is 5 days unused, and reached 77 GiB here.
TEST_DISK_GIB ?= 4
# How many test binaries go test runs at once (-p) and how many of a package's
# t.Parallel tests (-parallel); go test's defaults are GOMAXPROCS, 2 here. Most
# of a run is waiting (TTLs, quarantines, clusters forming, faults' timed ends):
# a third package and four parallel tests (the cluster, nemesis and fleet
# tests, written without tight timing) fill the cores (docs/testing.md). Where
# CI is set, go test's defaults (2 and 2): CI's shared machine runs the suite
# about 1.7 times slower than this one, and its timing tests keep their slack.
TEST_P ?= $(if $(CI),2,3)
TEST_PARALLEL ?= $(if $(CI),2,4)
# How many runs of a test binary at once (.ci/on-servers): 1, a package's Redis
# and Valkey runs one after the other; 2, side by side. Side by side was 34-53s
# faster idle and warm, but the load average under one busy core doubled (to
# 12-18), and the two runs of one package form their Redis Clusters at the same
# moment: once clusters in both runs did not form within 30s (docs/testing.md).
# So 1 is the default.
TEST_SERVERS_AT_ONCE ?= 1
test: servers
	@.ci/disk-check $(TEST_DISK_GIB)
	@rm -f $(TEST_LOG); status=0; \
	  check_log=$$(mktemp); nice -n 19 $(MAKE) --no-print-directory check >$$check_log 2>&1 & check=$$!; \
	  fence_log=$$(mktemp); $(MAKE) --no-print-directory fence-sql >$$fence_log 2>&1 & fence=$$!; \
	  SERVER_PKGS="$(SERVER_PKGS)" ON_SERVERS_AT_ONCE=$(TEST_SERVERS_AT_ONCE) .ci/gotest-on $(REDIS_SERVER) $(VALKEY_SERVER) $(TEST_LOG) -p $(TEST_P) -parallel $(TEST_PARALLEL) $(UNSAFE) $(GO_PKGS) || status=1; \
	  wait $$fence || status=1; cat $$fence_log; rm -f $$fence_log; \
	  wait $$check || { status=1; echo "==== make check FAILED:"; }; cat $$check_log; rm -f $$check_log; \
	  busy_log=$$(mktemp); $(MAKE) --no-print-directory busy-watch BUSY_WATCH=$(TEST_BUSY_WATCH) >$$busy_log 2>&1 & busy=$$!; \
	  $(MAKE) --no-print-directory contrib || status=1; \
	  $(MAKE) --no-print-directory fuzz FUZZTIME=$(TEST_FUZZTIME) || status=1; \
	  wait $$busy || status=1; cat $$busy_log; rm -f $$busy_log; \
	  exit $$status

## contrib: the tests of the metrics adapters, modules of their own (own go.mod)
## so that the root go.mod carries no metrics library: Prometheus against a real
## registry, OpenTelemetry through the SDK's ManualReader. Each go.mod requires
## this module at a pseudo-version of a commit on main, as a user's build resolves
## it (Go ignores `replace` in a dependency's go.mod: .ci/gomod-check refuses one);
## go.work, at the root, puts this checkout in its place for every go command run
## here (`./...` at the root still means the root module's packages only).
CONTRIB := contrib/prometheus contrib/otel
# The modules that require this one: CONTRIB, bench/ and integration/fence.
MODULES := $(CONTRIB) bench integration/fence
contrib:
	@set -e; for m in $(CONTRIB); do echo "== $$m"; (cd $$m && go test -race -count=1 ./...); done

## busy-watch: an observer watches three healthy servers for BUSY_WATCH (default 2m)
## while two goroutines keep both cores busy, and must never report "unknown" (#32).
## It slows whatever runs beside it, so make test runs it after the timing tests,
## beside only the adapters' tests and the fuzzers (which add load, not flakes),
## for TEST_BUSY_WATCH.
BUSY_WATCH ?= 2m
busy-watch:
	REDLEASE_BUSY_WATCH=$(BUSY_WATCH) REDLEASE_REDIS_SERVER=$(REDIS_SERVER) \
	  go test -race -count=1 -run '^TestWatchBusyHostNoUnknown$$' ./observer/

## fence-sql: the tests of package fence against real stores, a module of its own
## (integration/fence: the SQL drivers pgx and modernc.org/sqlite stay out of the root
## go.mod; it reaches this module through go.work): PostgreSQL (PG_BIN, started by the
## tests as their own cluster; run as PG_USER when root), SQLite, HTTP, and Redis on
## REDIS_SERVER, then the Redis cases again on VALKEY_SERVER.
PG_BIN  ?= /usr/lib/postgresql/15/bin
PG_USER ?= nobody
fence-sql:
	@echo "== integration/fence"
	cd integration/fence && go vet ./... && \
	  REDLEASE_PG_BIN=$(PG_BIN) REDLEASE_PG_USER=$(PG_USER) REDLEASE_REDIS_SERVER=$(REDIS_SERVER) go test -race -count=1 ./... && \
	  REDLEASE_REDIS_SERVER=$(VALKEY_SERVER) go test -race -count=1 -run '^TestPause$$/^redis/' .

## fuzz: every fuzzer for FUZZTIME each (default 5m; or a count, 10000x, as make
## test runs them: see TEST_FUZZTIME). Each new interesting input is
## minimized for at most FUZZMIN executions (default 100x): with go test's default (60s
## of it), the fuzzers spent most of a short run minimizing and reported 0 execs/s for
## seconds at a time (FuzzClientReplies: ~2,700 execs/s fuzzing, 10s stalls minimizing).
FUZZTIME ?= 5m
FUZZMIN  ?= 100x
FUZZ      = go test -run '^$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN)
fuzz:
	$(FUZZ) -fuzz '^FuzzParseReply$$' ./redlock/
	$(FUZZ) -fuzz '^FuzzClientReplies$$' ./redlock/
	$(FUZZ) -fuzz '^FuzzDecodeValue$$' ./internal/notice/
	$(FUZZ) -fuzz '^FuzzValueRoundTrip$$' ./internal/notice/

## soak: the fault suite's soak alone (integration/faults, -race): candidate processes
## under a random fault every 5s for DURATION (default 90s; 30s at least), seeded
## by SEED (default: a new seed, printed; SEED=<it> replays the run's choices).
## REDLEASE_FAULTS_REPORT=<file> also writes its line of the "faults survived" table.
## CLUSTER=1: the soak on a Redis Cluster (3 masters, a replica each; NewCluster)
## instead, with cluster faults too (a master killed and failed over, a slot migrated).
DURATION ?= 90s
SEED     ?=
CLUSTER  ?=
soak: servers
	REDLEASE_SOAK=$(DURATION) $(if $(SEED),REDLEASE_FAULTS_SEED=$(SEED)) $(if $(CLUSTER),REDLEASE_SOAK_CLUSTER=1) \
	  go test -race -count=1 -timeout 0 -v -run '^TestFaults$$/^soak$(if $(CLUSTER),_cluster)$$' ./integration/faults/

## sim: the deterministic-simulation explorer (integration/faults/sim): the real
## client code against simulated servers in virtual time, from a random seed
## (SEED=<n> to choose) for DURATION; prints schedules per second, faults by
## kind, script-branch coverage (with the differential test's, which runs
## first on both servers) and a last line `sim: schedules=N ...`. It runs
## sim-exact first (the exact build finds a control and repeats it).
SIM_COV ?= $(or $(TMPDIR),/tmp)/redlease-sim-coverage.json
sim: servers sim-exact
	@rm -f $(SIM_COV); REDLEASE_SIM_COVERAGE=$(SIM_COV) go test -count=1 -run '^TestDifferential(Redis|Valkey)$$' ./internal/testing/sim/
	@set -o pipefail; REDLEASE_SIM=$(DURATION) $(if $(SEED),REDLEASE_SIM_SEED=$(SEED)) REDLEASE_SIM_COVERAGE=$(SIM_COV) \
	  go test $(UNSAFE) -count=1 -timeout 0 -v -run '^TestSimSoak$$' ./integration/faults/sim/ | grep -v -E '^(=== | *--- PASS|PASS$$|ok )'

# The simulator built for wasip1 and run by Node.js's WASI (wasi/run.mjs):
# one thread, and the Go runtime's random source seeded, so that a schedule
# run twice with the same RAND takes the same path (docs/design.md §7.2).
SIM_DIR  := integration/faults/sim
SIM_WASM ?= $(or $(TMPDIR),/tmp)/redlease-sim.wasm
TRIES    ?= 20
SIM_ARGS  = -test.run 'TestSimReplay$$' $(if $(CONTROL),-control $(CONTROL)) $(if $(MODE),-mode $(MODE))

sim-wasm-build:
	@command -v node >/dev/null || { echo "the exact replay needs Node.js (apt-get install nodejs)"; exit 1; }
	GOOS=wasip1 GOARCH=wasm go test $(UNSAFE) -c -o $(SIM_WASM) ./$(SIM_DIR)/

## sim-replay: replay one schedule exactly, as the explorer's report says
## (SEED=, CONTROL=, MODE=). With RAND=<k> it runs once; without, it tries the
## random seeds 1..TRIES and names the one that shows the violation.
sim-replay: sim-wasm-build
	@test -n "$(SEED)" || { echo "sim-replay: set SEED=<n> (and CONTROL=, MODE= as the report says)"; exit 2; }
	cd $(SIM_DIR) && node wasi/run.mjs $(if $(RAND),-rand $(RAND),-pin $(TRIES)) $(SIM_WASM) $(SIM_ARGS) -test.v -seed $(SEED)

## sim-wasm: explore the schedules FROM..FROM+N-1 (CONTROL=, MODE= as for
## sim-replay) in the exact build, each with its seed as RAND: a failure is
## run twice more, checked to repeat its history, and named with the command
## that replays it.
FROM ?= 1
N    ?= 500
sim-wasm: sim-wasm-build
	cd $(SIM_DIR) && node wasi/run.mjs -explore $(FROM):$(shell expr $(FROM) + $(N)) $(SIM_WASM) $(SIM_ARGS)

## sim-exact: the exact build finds the no-quarantine control (and repeats
## it exactly), and 100 schedules of the default menu pass (make sim runs it).
sim-exact: sim-wasm-build
	@cd $(SIM_DIR) && out="$$(node wasi/run.mjs -explore 1:2000 $(SIM_WASM) -test.run 'TestSimReplay$$' -control no-quarantine)"; \
	  status=$$?; echo "$$out" | grep '^run.mjs:'; \
	  if [ $$status -ne 1 ] || ! echo "$$out" | grep -q 'printed the same history'; then \
	    echo "sim-exact: the exact build did not find and repeat the no-quarantine control"; exit 1; fi
	cd $(SIM_DIR) && node wasi/run.mjs -explore 1:101 $(SIM_WASM) -test.run 'TestSimReplay$$'

## tidy: go mod tidy in the root module and in MODULES. `go mod tidy` ignores
## go.work, and the root module's pseudo-version is not on the module proxy until
## main is published, so each module is tidied with a replace of the root module
## by this checkout, dropped again after (whether tidy succeeded or not).
tidy:
	go mod tidy
	@set -e; for m in $(MODULES); do echo "== $$m"; (cd $$m && \
	  go mod edit -replace github.com/redlease/redlease=$$(realpath --relative-to=. $(CURDIR)) && \
	  { s=0; go mod tidy || s=$$?; go mod edit -dropreplace github.com/redlease/redlease; exit $$s; }); done

## pin: MODULES require this module at the pseudo-version of COMMIT (default:
## main), and go.work replaces that version (.ci/pin-root). Run it on main after a
## change of this module that MODULES use (a user gets the version pinned).
COMMIT ?= main
pin:
	.ci/pin-root $(COMMIT)

## check: formatting and static analysis only; and no go.mod with a `replace`
## (.ci/gomod-check).
check:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	  if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	.ci/gomod-check
	go vet $(GO_PKGS)
	go vet $(UNSAFE) $(GO_PKGS)
	@set -e; bin=$$(mktemp -d); trap 'rm -rf "$$bin"' EXIT; \
	  echo "staticcheck (built from $(STATICCHECK_MOD)) $(UNSAFE) $(GO_PKGS)"; \
	  GOWORK=off go build -modfile=$(STATICCHECK_MOD) -o $$bin/staticcheck honnef.co/go/tools/cmd/staticcheck; \
	  $$bin/staticcheck $(UNSAFE) $(GO_PKGS); \
	  for m in $(CONTRIB); do (cd $$m && go vet ./... && $$bin/staticcheck ./...); done

## unit: the fast tests only (miniredis; no real servers needed).
unit:
	go test $(UNSAFE) -race -count=1 -short ./redlock/... ./lease/... ./election/... ./observer/...

## servers: the servers the tests run: REDIS_SERVER (default redis-server, Debian's
## 7.0 on bookworm) with redis-sentinel, VALKEY_SERVER (default valkey-server, 8.0
## from bookworm-backports), and PostgreSQL in PG_BIN (default Debian's postgresql 15,
## for integration/fence), and gcc (internal/testing/clockshim builds the LD_PRELOAD
## shim that steps a server's wall clock). A server present in PATH, or given by path, is used as it
## is; missing ones are installed with apt-get when run as root, after one line that
## says what, why and from where (on bookworm it adds the bookworm-backports source).
REDIS_SERVER  ?= redis-server
VALKEY_SERVER ?= valkey-server
BACKPORTS_SOURCES := /etc/apt/sources.list.d/bookworm-backports.sources
servers:
	@set -e; pkgs=""; from="Debian's archive"; backports=""; \
	for v in "REDIS_SERVER=$(REDIS_SERVER)=redis-server" "VALKEY_SERVER=$(VALKEY_SERVER)=valkey-server"; do \
	  var=$${v%%=*}; rest=$${v#*=}; bin=$${rest%=*}; pkg=$${rest##*=}; \
	  if command -v "$$bin" >/dev/null 2>&1; then continue; fi; \
	  case "$$bin" in */*) echo "$$var=$$bin: no such executable" >&2; exit 1;; esac; \
	  pkgs="$$pkgs $$pkg"; \
	done; \
	command -v redis-sentinel >/dev/null 2>&1 || pkgs="$$pkgs redis-sentinel"; \
	command -v gcc >/dev/null 2>&1 || pkgs="$$pkgs gcc"; \
	test -x $(PG_BIN)/postgres || pkgs="$$pkgs postgresql"; \
	if [ -n "$$pkgs" ]; then \
	  if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then \
	    echo "missing:$$pkgs; install them (Debian 12: apt-get install redis-server redis-sentinel postgresql gcc, and valkey-server from bookworm-backports), or name binaries with REDIS_SERVER=/path VALKEY_SERVER=/path PG_BIN=/dir, then run make test again" >&2; \
	    exit 1; \
	  fi; \
	  codename=$$(. /etc/os-release 2>/dev/null && echo "$${VERSION_CODENAME:-}"); \
	  case "$$pkgs" in *valkey-server*) if [ "$$codename" = bookworm ]; then backports=1; \
	    from="Debian bookworm's archive, valkey-server from bookworm-backports"; \
	    grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/ || from="$$from (adding $(BACKPORTS_SOURCES))"; fi;; esac; \
	  echo "make: the tests start real servers, and these are missing:$$pkgs; installing them with apt-get from $$from"; \
	  if [ -n "$$backports" ] && ! grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/; then \
	    printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' > $(BACKPORTS_SOURCES); \
	  fi; \
	  apt-get update -qq; \
	  main=$$(echo $$pkgs | tr ' ' '\n' | grep -v '^valkey-server$$' | tr '\n' ' '); \
	  if [ -n "$$main" ]; then DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$main >/dev/null; fi; \
	  case "$$pkgs" in *valkey-server*) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    $${backports:+-t bookworm-backports} valkey-server >/dev/null;; esac; \
	fi
	@for b in $(REDIS_SERVER) $(VALKEY_SERVER); do echo "$$(command -v $$b): $$($$b --version)"; done
	@echo "$(PG_BIN)/postgres: $$($(PG_BIN)/postgres --version)"

## redis-server: the servers, under the target's former name.
redis-server: servers

## bench: redlease against its peers (redsync, rueidislock, bsm/redislock) on 5 local
## redis-servers; bench/ is its own Go module (`make test` never builds it). Writes
## docs/bench/results.md and docs/bench/chart.svg; ~6 minutes on 2 cores.
## BENCH_FLAGS passes options, e.g. BENCH_FLAGS='-rounds 3' or BENCH_FLAGS='-note "..."'.
## Then the leases-at-scale cases (benchrun -scale; printed, ~15 minutes more): 10,000
## leases for a minute, 20,000 leases with 2 busy goroutines for 60s five times, and
## with BENCH_SCALE_LONG=1 100,000 leases for 5 minutes. BENCH_SCALE_FLAGS passes
## options (-scale-window, -scale-runs). Last, the spread of cluster lock traffic
## over 6 masters (BenchmarkClusterSpread: buckets B=1 against B=16). First, each
## script's server time on one redis-server (BenchmarkScriptServerTime: INFO
## commandstats under a steady stream, and one call at a time).
bench: servers
	go test -run '^$$' -bench '^BenchmarkScriptServerTime$$' ./redlock/
	cd bench && go run ./cmd/benchrun -out ../docs/bench $(BENCH_FLAGS)
	cd bench && go run ./cmd/benchrun -scale $(BENCH_SCALE_FLAGS)
	go test -run '^$$' -bench '^BenchmarkClusterSpread$$' -benchtime 4x ./redlock/
