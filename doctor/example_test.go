package doctor_test

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/doctor"
)

// Check three nodes as a redlock client with the default settings and
// leases of 10s use them, and print what is not as redlease needs it.
// (Not run by go test: it needs the three servers.)
func Example() {
	var nodes []doctor.Node
	for _, addr := range []string{"10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379"} {
		nodes = append(nodes, doctor.Node{Name: addr, Client: redis.NewClient(&redis.Options{Addr: addr})})
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	report, err := doctor.Run(ctx, doctor.Config{TTL: 10 * time.Second, Name: "app:jobs"}, nodes)
	if err != nil {
		fmt.Println(err) // a bad argument only; a silent node is a finding
		return
	}
	for _, n := range report.Nodes {
		for _, f := range n.Findings {
			if f.Severity > doctor.Info {
				fmt.Printf("%s %s %s: %s (%s)\n", n.Node, f.Severity, f.ID, f.Risk, f.Fix)
			}
		}
	}
	fmt.Println("worst:", report.Worst)
}
