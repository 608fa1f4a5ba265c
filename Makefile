# redlease: `make test` is everything CI runs.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
GO_PKGS     := ./...

.PHONY: test check redis-server unit fuzz bench

## test: install redis-server if missing, then gofmt, vet, staticcheck and every test with -race.
test: redis-server check
	go test -race -count=1 -timeout 15m $(GO_PKGS)

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
