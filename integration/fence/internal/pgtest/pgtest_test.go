package pgtest

import (
	"context"
	"testing"
)

func TestStart(t *testing.T) {
	s := Start(t)
	var v string
	if err := s.DB(t).QueryRowContext(context.Background(), "SHOW server_version").Scan(&v); err != nil {
		t.Fatalf("query: %v", err)
	}
	t.Logf("postgres %s at %s", v, s.DSN)
	if v == "" {
		t.Fatal("empty server_version")
	}
}
