// Package leasex gives package election what it needs of a lease.Config
// beyond the public API: the Config with its defaults filled in, checked
// against the client it is used with, as lease.Acquire does. Package lease
// registers the function at init; this package cannot import lease (lease
// imports it), so [Resolve] is typed by its argument.
package leasex

import (
	"github.com/redlease/redlease/redlock"
)

var resolve func(cfg any, client *redlock.Client) (any, error)

// Register is called once, by package lease's init.
func Register(f func(cfg any, client *redlock.Client) (any, error)) { resolve = f }

// Resolve returns cfg, a lease.Config, with every default filled in, or
// the first reason lease.Acquire would refuse it with client (an error
// wrapping redlock.ErrInvalidConfig, or redlock.ErrInvalidArgument for a
// nil client). C is always lease.Config.
func Resolve[C any](cfg C, client *redlock.Client) (C, error) {
	if resolve == nil {
		panic("leasex: package lease is not linked in")
	}
	v, err := resolve(cfg, client)
	if err != nil {
		return cfg, err
	}
	return v.(C), nil
}
