package doctor_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/redlease/redlease/doctor"
)

// The ACL, tried with ACL DRYRUN (the user may run it here): SECURITY.md's
// rule passes; without +time, or for a name outside ~app:*, the denied
// commands are named. CONFIG GET, refused to this user, warns.
func TestDoctorACLDryRun(t *testing.T) {
	s, c := start(t)
	cfg := fast()
	cfg.Name = "app:job"
	aclUser(t, c, secureRule+" +acl|dryrun +acl|whoami")
	rep := run(t, cfg, "doctor", s.Addr())
	f := finding(t, rep, 0, doctor.CheckACL)
	assert.Equal(t, doctor.OK, f.Severity, "%+v", f)
	assert.Contains(t, f.Found, `ACL DRYRUN for user "doctor"`)
	assertRisky(t, finding(t, rep, 0, doctor.CheckConfig), doctor.Warn, "CONFIG GET refused")

	aclUser(t, c, strings.Replace(secureRule, "+time ", "", 1)+" +acl|dryrun +acl|whoami")
	assertRisky(t, finding(t, run(t, cfg, "doctor", s.Addr()), 0, doctor.CheckACL), doctor.Fail, "denied: TIME (")

	cfg.Name = "other:job"
	f = finding(t, run(t, cfg, "doctor", s.Addr()), 0, doctor.CheckACL)
	assertRisky(t, f, doctor.Fail, "denied: EVALSHA")
	assert.Contains(t, f.Found, "GET other:job (")
	assert.Contains(t, f.Found, "SUBSCRIBE other:job:notice (")
}

// Where the user may not run ACL DRYRUN, the commands are sent: the rule
// passes (info: the marker's write is not tried); without +hget or
// +publish, those are named.
func TestDoctorACLTried(t *testing.T) {
	s, c := start(t)
	cfg := fast()
	cfg.Name = "app:job"
	aclUser(t, c, secureRule)
	f := finding(t, run(t, cfg, "doctor", s.Addr()), 0, doctor.CheckACL)
	assert.Equal(t, doctor.Info, f.Severity, "%+v", f)
	assert.Contains(t, f.Found, "tried the commands instead")
	assert.Contains(t, f.Found, "all allowed")

	aclUser(t, c, strings.NewReplacer("+hget ", "", "+publish ", "").Replace(secureRule))
	f = finding(t, run(t, cfg, "doctor", s.Addr()), 0, doctor.CheckACL)
	assertRisky(t, f, doctor.Fail, "HGET: ")
	assert.Contains(t, f.Found, "PUBLISH app:job:notice (")
	assert.Contains(t, f.Found, "PUBLISH: ")     // from the script too
	assert.NotRegexp(t, `(: |; )GET: `, f.Found) // GET was allowed
}
