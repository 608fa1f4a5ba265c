package faults

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/checker"
	"github.com/redlease/redlease/internal/testing/checker/wire"
)

// The semaphore's scenarios (docs/design.md §5.3): five candidates hold
// one of K=2 permits of the key (candidate -permits), each for ~300ms,
// release it, and take one again; every history is judged by CK (never
// more than K at once) and, per permit, by C1 and C2 (rig.judge).
const (
	semPermits = 2
	semChecks  = "CK; C1 C2 per permit; C4"
)

func semRig(t *testing.T, bin string, plusOne bool) *rig {
	r := newRig(t, bin, rigOptions{cands: 5, permits: semPermits, plusOne: plusOne, resignAfter: 300 * time.Millisecond})
	r.start()
	r.waitTerms(3, 0, waitLong)
	return r
}

// scPermitsKill9Server: kill -9 one of three servers and leave it down
// for 2 TTLs while the holders come and go on the other two, then restart
// it empty: it is quarantined, and votes again after MaxTTL.
func scPermitsKill9Server(t *testing.T, bin string) {
	r := semRig(t, bin, false)
	v := r.rng.IntN(r.o.nodes)
	require.NoError(t, r.g.Server(v).Kill())
	at := r.mark("kill -9 server %d, down for %s", v, 2*ttl)
	r.waitTerms(3, at, waitLong)
	sleepUntil(at + (2 * ttl).Nanoseconds())
	require.NoError(t, r.g.Server(v).Restart(true))
	waitQuarantine(r, r.mark("server %d restarted empty", v))
	r.expect(r.finish())
}

// scPermitsSigstopServer: one of three servers SIGSTOPped for 2 TTLs
// while the holders come and go.
func scPermitsSigstopServer(t *testing.T, bin string) {
	r := semRig(t, bin, false)
	pauseServerTwoTTLs(r, 3)
	r.expect(r.finish())
}

// scPermitsRestartEmpty: kill -9 a server and restart it empty at once:
// it forgot the permits it granted, and its quarantine keeps it from
// granting them again until they lapsed.
func scPermitsRestartEmpty(t *testing.T, bin string) {
	r := semRig(t, bin, false)
	v := r.rng.IntN(r.o.nodes)
	require.NoError(t, r.g.Server(v).Kill())
	require.NoError(t, r.g.Server(v).Restart(true))
	waitQuarantine(r, r.mark("kill -9 server %d, restarted empty", v))
	r.expect(r.finish())
}

// scPermitsKill9Holder: kill -9 a candidate holding a permit (no release):
// another takes that permit once its key lapses, while the other permit
// changes hands meanwhile.
func scPermitsKill9Holder(t *testing.T, bin string) {
	r := semRig(t, bin, false)
	l, el := r.leader()
	from := r.hist.len()
	at := r.kill(l)
	next, _ := r.waitEv(from, waitLong, fmt.Sprintf("permit %d taken after its holder's kill", el.Permit), func(ev wire.Event) bool {
		return ev.Ev == wire.Elected && ev.Permit == el.Permit && ev.TS > at
	})
	t.Logf("permit %d: %s took it %s after holder %s was killed", el.Permit, next.ID, gap(at, next.TS), l.id)
	r.expect(r.finish())
}

// ctlPermitsPlusOne: the negative control of CK: the candidates take
// their permits among K+1 keys (unsafeopt PermitsPlusOne), and K+1 hold at
// once.
func ctlPermitsPlusOne(t *testing.T, bin string) {
	r := semRig(t, bin, true)
	// Terms until the history shows K+1 at once (most often at once; 30
	// terms at most, which take 2-3s).
	for i := 0; i < 30 && len(r.crowds()) == 0; i++ {
		r.waitTerms(1, wire.Now(), waitLong)
	}
	rep := r.finish()
	require.NotEmpty(t, rep.ck, "CK did not catch K+1 holders at once")
	t.Logf("caught, as it must be: %d reports, the first: %s", len(rep.ck), rep.ck[0])
}

// crowds are CK's reports on the history so far (beliefs of the runs of
// samples that ended).
func (r *rig) crowds() []string {
	evs, _ := r.hist.snapshot()
	ts, _ := checker.Terms(evs)
	return checker.CK(ts, r.o.permits)
}
