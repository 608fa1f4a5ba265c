module github.com/redlease/redlease

// go 1.26.0 is the lowest this module can declare: github.com/redis/go-redis/v9
// v9.23.0 and golang.org/x/sys v0.48.0 declare go 1.26.0 (go mod tidy puts it
// back under any lower directive), and the code uses errors.AsType (Go 1.26).
go 1.26.0

require (
	github.com/alicebob/miniredis/v2 v2.40.0
	github.com/hashicorp/go-hclog v1.6.3
	github.com/redis/go-redis/v9 v9.23.0
	github.com/stretchr/testify v1.12.1
	github.com/yuin/gopher-lua v1.1.1
	go.uber.org/goleak v1.3.0
	golang.org/x/sys v0.48.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/fatih/color v1.13.0 // indirect
	github.com/mattn/go-colorable v0.1.12 // indirect
	github.com/mattn/go-isatty v0.0.14 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
