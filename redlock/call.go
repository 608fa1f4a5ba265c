package redlock

import "github.com/redlease/redlease/internal/scripts"

// scriptCall is one script call's whole command line (internal/scripts),
// built once and shared by every node whose keys are the same.
type scriptCall = scripts.Call
