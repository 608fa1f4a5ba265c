-- inspect: read-only view of a lock on this node.
-- KEYS[1] lock key, KEYS[2] fencing counter, KEYS[3] quarantine marker
-- ARGV[1] MaxTTL ms, ARGV[2] quarantine mode ('0' off, '1' on; see quarantine.lua),
-- ARGV[3] cluster layout ('' or absent: independent nodes; see redlease_layout)
-- Reply: {value or '', pttl, counter, quarantine left ms, ok}
--   counter: the key's counter as stored (0 when missing), never this
--   node's floor b: on a node that holds the holder's value it is the grant
--   or the write-back of that holder, which Inspect's token reads
--   (docs/design.md §4.4); a floor raised after a failover may be far above
--   it (b is the highest token of any key).
local lerr = redlease_layout(KEYS[3], ARGV[3], false)
if lerr then return redis.error_reply(lerr) end
local v = redis.call('GET', KEYS[1]) or ''
local pttl = redis.call('PTTL', KEYS[1])
local c = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
if ARGV[2] == '0' then return {v, pttl, c, 0, 1} end
local left, ok = redlease_marker(KEYS[3], tonumber(ARGV[1]), false, ARGV[2])
return {v, pttl, c, left, ok and 1 or 0}
