package faults

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/redlease/redlease/internal/testing/checker"
	"github.com/redlease/redlease/internal/testing/checker/wire"
)

// store is the resource the leaders write (C3): one counter that leaders
// increment by read-modify-write, behind a fence. Every request carries
// the term's fencing token; a fenced store remembers the highest token it
// has seen, on reads as on writes, and refuses any request with a lower
// one (a stale leader), and a request with the same token from another
// term (a repeated token cannot tell two leaders apart). A write is
// "counter = base + 1", base being what the writer read; an accepted write
// whose base is not the current counter overwrites an increment it never
// saw: a lost update. An unfenced store (the negative control) checks no
// token.
type store struct {
	fenced bool
	srv    *httptest.Server

	mu       sync.Mutex
	fence    checker.Fence // holders are terms: id/ts
	value    int64
	accepted int
	refused  int
	lost     []string
	repeated []string
	log      []wire.Event
}

func newStore(t *testing.T, fenced bool) *store {
	s := &store{fenced: fenced}
	mux := http.NewServeMux()
	mux.HandleFunc("/read", s.handle)
	mux.HandleFunc("/write", s.handle)
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

func (s *store) url() string { return s.srv.URL }

func (s *store) handle(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	token, err1 := strconv.ParseUint(q.Get("token"), 10, 64)
	ts, err2 := strconv.ParseInt(q.Get("ts"), 10, 64)
	id := q.Get("id")
	if err1 != nil || err2 != nil || id == "" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	write := r.URL.Path == "/write"
	var base int64
	if write {
		var err error
		if base, err = strconv.ParseInt(q.Get("base"), 10, 64); err != nil {
			http.Error(w, "bad base", http.StatusBadRequest)
			return
		}
	}
	now := wire.Now()
	holder := fmt.Sprintf("%s/%d", id, ts)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fenced {
		highest, prev := s.fence.Highest, s.fence.Holder
		switch s.fence.Admit(token, holder) {
		case checker.Stale:
			s.refused++
			s.log = append(s.log, wire.Event{Ev: "store", T: now, ID: id, TS: ts, Token: token, Status: http.StatusConflict,
				What: fmt.Sprintf("%s refused: token %d < highest %d", r.URL.Path, token, highest)})
			http.Error(w, "stale token", http.StatusConflict)
			return
		case checker.Repeated:
			s.refused++
			v := fmt.Sprintf("C3: token %d used by two terms: %s and %s", token, prev, holder)
			if len(s.repeated) < 100 {
				s.repeated = append(s.repeated, v)
			}
			s.log = append(s.log, wire.Event{Ev: "store", T: now, ID: id, TS: ts, Token: token, Status: http.StatusConflict, What: v})
			http.Error(w, "repeated token", http.StatusConflict)
			return
		}
	}
	if !write {
		fmt.Fprintln(w, s.value)
		return
	}
	if base != s.value {
		v := fmt.Sprintf("C3: lost update: %s (token %d) wrote %d from a read of %d, over %d", holder, token, base+1, base, s.value)
		s.lost = append(s.lost, v)
		s.log = append(s.log, wire.Event{Ev: "store", T: now, ID: id, TS: ts, Token: token, What: v})
	}
	s.value = base + 1
	s.accepted++
	fmt.Fprintln(w, s.value)
}

// check returns C3's violations.
func (s *store) check() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append(append([]string(nil), s.repeated...), s.lost...)
	if len(s.lost) == 0 && s.value != int64(s.accepted) {
		out = append(out, fmt.Sprintf("C3: counter %d after %d accepted writes", s.value, s.accepted))
	}
	return out
}

func (s *store) stats() (value int64, accepted, refused int, log []wire.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.value, s.accepted, s.refused, append([]wire.Event(nil), s.log...)
}
