package doctor

import "testing"

// A server before Redis 7 warns (no real server of that age is installed
// here: the check's rule on INFO's redis_version).
func TestDoctorVersionBefore7(t *testing.T) {
	for v, want := range map[string]Severity{"6.2.14": Warn, "5.0.7": Warn, "7.0.15": Info, "7.2.4": Info, "8.0.1": Info} {
		f := version(map[string]string{"redis_version": v})
		if f.Severity != want || (want == Warn && (f.Risk == "" || f.Fix == "")) {
			t.Errorf("redis_version %s: %+v, want severity %s with risk and fix", v, f, want)
		}
	}
}
