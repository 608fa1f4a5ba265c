package redlock

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/nodecheck"
)

// A node's configuration is checked at start-up ([New]) and again while the
// client is in use, by internal/nodecheck; this file gives the checker the
// Client's settings and its nodes' configuration.

// checker is what c's configuration checks are given.
func checker(c *Client) nodecheck.Checker {
	return nodecheck.Checker{AllowEviction: c.cfg.AllowEviction, Invalid: ErrInvalidArgument,
		Timeout: max(time.Second, c.cfg.NodeTimeout), Log: c.log, WG: &c.wg}
}

// A node's configuration is what the checker reads (nodecheck.Node).
var _ nodecheck.Node = (*node)(nil)

// Conf is what the client knows of n's configuration.
func (n *node) Conf() *nodecheck.Conf { return &n.conf }

// ReadConf reads nodecheck.Params on n (on the master serving n's slot for
// a cluster node).
func (n *node) ReadConf(ctx context.Context) (map[string]string, error) {
	var client redis.UniversalClient = n.client
	if cc, ok := n.client.(*redis.ClusterClient); ok {
		m, err := cc.MasterForKey(ctx, n.marker())
		if err != nil {
			return nil, err
		}
		client = m
	}
	args := []any{"config", "get"}
	for _, p := range nodecheck.Params {
		args = append(args, p)
	}
	res, err := client.Do(ctx, args...).Result()
	if err != nil {
		return nil, classify(err)
	}
	conf := map[string]string{}
	switch v := res.(type) {
	case map[any]any: // RESP3
		for k, val := range v {
			conf[fmt.Sprint(k)] = fmt.Sprint(val)
		}
	case []any: // RESP2: name, value, name, value, ...
		for i := 0; i+1 < len(v); i += 2 {
			conf[fmt.Sprint(v[i])] = fmt.Sprint(v[i+1])
		}
	default:
		return nil, badReply(res)
	}
	return conf, nil
}
