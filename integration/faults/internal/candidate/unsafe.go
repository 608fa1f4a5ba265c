//go:build !redlease_unsafe

package main

import (
	"errors"

	"github.com/redlease/redlease/redlock"
)

// noReplIDCheck would turn the quarantine's replication-ID check off
// (--no-replication-id-check); a build without the redlease_unsafe tag has
// no such switch (the fault suite builds the candidate with it).
func noReplIDCheck(*redlock.Config) error {
	return errors.New("--no-replication-id-check needs a candidate built with -tags redlease_unsafe")
}

// permitsPlusOne would make a semaphore take one permit too many
// (--unsafe-permits-plus-one); a build without the redlease_unsafe tag has
// no such switch.
func permitsPlusOne(*redlock.Config) error {
	return errors.New("--unsafe-permits-plus-one needs a candidate built with -tags redlease_unsafe")
}
