package clocksanity

import (
	"testing"
	"time"
)

// rig feeds a Detector samples of a server whose clock is the local one
// plus off, each with a round trip of rtt (the server reads its clock
// halfway).
type rig struct {
	d   *Detector
	t0  time.Time
	off time.Duration
}

func (r *rig) at(sent, rtt time.Duration) Result {
	s := r.t0.Add(sent)
	return r.d.Observe(s, s.Add(rtt), s.Add(rtt/2+r.off), 2*time.Millisecond)
}

func TestHealthyClockNeverFlagged(t *testing.T) {
	r := &rig{d: New(0.01), t0: time.Now(), off: 3 * time.Hour}
	for i := range 1000 {
		// Round trips from 0 to 40ms, in any order of reading.
		if got := r.at(time.Duration(i)*100*time.Millisecond, time.Duration(i%41)*time.Millisecond); got.Verdict != OK {
			t.Fatalf("sample %d: %v (%s)", i, got.Verdict, got)
		}
	}
}

func TestJumpForwardIsFastOnce(t *testing.T) {
	r := &rig{d: New(0.01), t0: time.Now()}
	r.at(0, time.Millisecond)
	r.at(500*time.Millisecond, time.Millisecond)
	r.off = 6 * time.Second
	got := r.at(time.Second, time.Millisecond)
	if got.Verdict != Fast || got.Excess < 5900*time.Millisecond {
		t.Fatalf("after a 6s step: %v, excess %v; want fast, about 6s", got.Verdict, got.Excess)
	}
	if got := r.at(1500*time.Millisecond, time.Millisecond); got.Verdict != OK {
		t.Fatalf("the sample after the reported jump: %v; want ok (reported once)", got.Verdict)
	}
}

func TestFastRateIsFast(t *testing.T) {
	r := &rig{d: New(0.01), t0: time.Now()}
	// 5% fast: each 100ms interval is within the allowance against the
	// last sample, but not against the first.
	var got Result
	for i := range 100 {
		r.off = time.Duration(i) * 5 * time.Millisecond
		if got = r.at(time.Duration(i)*100*time.Millisecond, time.Millisecond); got.Verdict != OK {
			break
		}
	}
	if got.Verdict != Fast {
		t.Fatalf("a clock 5%% fast for 10s: %v; want fast", got.Verdict)
	}
}

func TestStepBackIsSlow(t *testing.T) {
	r := &rig{d: New(0.01), t0: time.Now()}
	r.at(0, time.Millisecond)
	r.off = -2 * time.Second
	if got := r.at(time.Second, time.Millisecond); got.Verdict != Slow {
		t.Fatalf("after a step back: %v; want slow", got.Verdict)
	}
}

func TestOverlappingRequestsNotSlow(t *testing.T) {
	r := &rig{d: New(0.01), t0: time.Now()}
	// A long request sent first, answered last, read its clock early: a
	// later reading of an overlapping request may be earlier; no verdict.
	s := r.t0
	r.d.Observe(s, s.Add(time.Second), s.Add(time.Second), 2*time.Millisecond)
	if got := r.d.Observe(s.Add(10*time.Millisecond), s.Add(20*time.Millisecond), s.Add(15*time.Millisecond), 2*time.Millisecond); got.Verdict != OK {
		t.Fatalf("overlapping requests: %v (%s)", got.Verdict, got)
	}
}

// TestStepWithinSlackNotFlagged: a forward step no larger than the slack
// (the drift allowance of the locks at hand) is no verdict: a clock within
// the safety model never is one.
func TestStepWithinSlackNotFlagged(t *testing.T) {
	d := New(0.01)
	t0 := time.Now()
	d.Observe(t0, t0, t0, 22*time.Millisecond)
	if got := d.Observe(t0.Add(time.Millisecond), t0.Add(time.Millisecond), t0.Add(21*time.Millisecond), 22*time.Millisecond); got.Verdict != OK {
		t.Fatalf("a 20ms step within a 22ms allowance: %v (%s)", got.Verdict, got)
	}
	if got := d.Observe(t0.Add(2*time.Millisecond), t0.Add(2*time.Millisecond), t0.Add(52*time.Millisecond), 22*time.Millisecond); got.Verdict != Fast {
		t.Fatalf("a further 30ms step: %v; want fast", got.Verdict)
	}
}
