-- probe: start this node's quarantine clock and report its state; New()
-- calls it on every node. With bootstrap (an operator's declaration that no
-- lock exists), a node with no marker, or still in its quarantine, gets a
-- marker dated MaxTTL ago, ready to vote. With restart (a client saw this
-- server's clock jump forward: its locks may have expired early), the
-- marker is made anew, dated now: the node votes no for MaxTTL, then until
-- its floor is raised, as after a restart (docs/design.md §6.5).
-- KEYS[1] quarantine marker
-- ARGV[1] MaxTTL ms, ARGV[2] quarantine mode ('0' off, '1' on; see quarantine.lua), ARGV[3] '1' = bootstrap,
-- '2' = restart,
-- ARGV[4] cluster layout ('' or absent: independent nodes; see redlease_layout)
-- Reply: {left, ok, run_id, created, high, INFO error ('' when INFO answers)}
local max_ttl = tonumber(ARGV[1])
local lerr = redlease_layout(KEYS[1], ARGV[4], true)
if lerr then return redis.error_reply(lerr) end
if ARGV[3] == '1' and ARGV[2] ~= '0' then
  local left, ok = redlease_marker(KEYS[1], max_ttl, false, ARGV[2])
  if left > 0 or not ok then
    local rid, rep = redlease_ids()
    redlease_new_marker(KEYS[1], rid, rep, redlease_now() - max_ttl, max_ttl, 1)
  end
end
if ARGV[3] == '2' and ARGV[2] ~= '0' then
  local rid, rep = redlease_ids()
  redlease_new_marker(KEYS[1], rid, rep, redlease_now(), max_ttl, 0)
end
local info = redis.pcall('INFO', 'server')
local info_err = ''
if type(info) == 'table' and info.err then info_err = info.err end
if ARGV[2] == '0' then return {0, 1, (redlease_ids()), 0, 0, info_err} end
local left, ok, created, base, high, rid = redlease_marker(KEYS[1], max_ttl, true, ARGV[2])
return {left, ok and 1 or 0, rid, created, high, info_err}
