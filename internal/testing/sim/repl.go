package sim

import (
	"slices"
	"time"
)

// Asynchronous replication: a master ships the effects of each command
// (the keys it wrote, as their new state with absolute expiry, or a flush)
// to its replicas, which apply them lag later, in order. A promotion
// applies what arrived (or, losing writes, drops what had not) and takes a
// new replication ID; REPLICAOF is a full resync: the replica's data and
// replication ID become its master's.

type replBatch struct {
	due     time.Time
	flushed bool
	keys    []string
	entries []*entry // nil: deleted
	offset  int64
}

// replicate ships the command's writes (s.mu held).
func (s *Server) replicate() {
	if len(s.dirty) == 0 && !s.flushed {
		return
	}
	b := replBatch{flushed: s.flushed}
	for _, k := range s.dirty {
		if slices.Contains(b.keys, k) {
			continue
		}
		var e *entry
		if cur := s.db[k]; cur != nil {
			e = cur.clone()
			s.offset += int64(len(cur.str) + 8*len(cur.hash))
		}
		b.keys = append(b.keys, k)
		b.entries = append(b.entries, e)
		s.offset += int64(len(k) + 16)
	}
	if b.flushed {
		s.offset += 16
	}
	b.offset = s.offset
	s.dirty = s.dirty[:0]
	s.flushed = false
	for _, r := range s.reps {
		r.enqueue(b)
	}
}

func (r *Server) enqueue(b replBatch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b.due = time.Now().Add(r.lag)
	r.pending = append(r.pending, b)
	if r.lag <= 0 {
		r.applyDue()
		return
	}
	time.AfterFunc(r.lag, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.applyDue()
	})
}

// applyDue applies the batches that arrived (r.mu held).
func (r *Server) applyDue() {
	now := time.Now()
	n := 0
	for _, b := range r.pending {
		if b.due.After(now) {
			break
		}
		r.apply(b)
		n++
	}
	r.pending = r.pending[n:]
}

func (r *Server) apply(b replBatch) {
	if b.flushed {
		r.db = map[string]*entry{}
	}
	for i, k := range b.keys {
		if b.entries[i] == nil {
			delete(r.db, k)
		} else {
			r.db[k] = b.entries[i].clone()
		}
	}
	r.offset = b.offset
}

// ReplicaOf makes s a replica of m (REPLICAOF m): a full resync now, then
// m's writes arrive lag later.
func (s *Server) ReplicaOf(m *Server, lag time.Duration) {
	s.detach()
	m.mu.Lock()
	defer m.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.db = map[string]*entry{}
	for k, e := range m.db {
		s.db[k] = e.clone()
	}
	s.reloadLibraries(m.librarySources()) // a full resync loads the master's anew
	s.replID, s.replID2, s.offset = m.replID, "0000000000000000000000000000000000000000", m.offset
	s.master, s.lag, s.pending = m, lag, nil
	m.reps = append(m.reps, s)
}

// Promote makes a replica a master (REPLICAOF NO ONE): it applies the
// writes that reached it, or, with lose, also drops those still in flight
// (a failover to a lagging replica loses them either way; without lose
// they are taken as having arrived). It takes a new replication ID.
func (s *Server) Promote(lose bool) {
	s.mu.Lock()
	if !lose {
		for _, b := range s.pending {
			s.apply(b)
		}
	} else {
		s.applyDue()
	}
	s.pending = nil
	s.mu.Unlock()
	s.detach()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w.mu.Lock()
	id := hex40(s.w.rnd)
	s.w.mu.Unlock()
	s.replID2, s.replID = s.replID, id
}

// detach ends s's replication from its master, if any.
func (s *Server) detach() {
	s.mu.Lock()
	m := s.master
	s.master = nil
	s.mu.Unlock()
	if m == nil {
		return
	}
	m.mu.Lock()
	m.reps = slices.DeleteFunc(m.reps, func(r *Server) bool { return r == s })
	m.mu.Unlock()
}

func (s *Server) lagOf() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lag
}

// Master returns the server s replicates from, or nil.
func (s *Server) Master() *Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.master
}
