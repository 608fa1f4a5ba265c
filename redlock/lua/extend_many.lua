-- extend_many: extend.lua for many locks of one node (and, on a cluster,
-- one slot) in one call: compare-and-PEXPIRE each, never re-create one.
-- No quarantine check, for the reason given in extend.lua; TTLs above the
-- node's MaxTTL are refused (the whole call: a misconfiguration).
-- KEYS[1] quarantine marker, then per lock i: KEYS[2i] lock key,
-- KEYS[2i+1] fencing counter
-- ARGV[1] MaxTTL ms, ARGV[2] quarantine mode ('0' off), ARGV[3] counter TTL
-- ms ('0': leave the counters' TTL as it is: fencing off, or set recently), then per lock i: ARGV[2i+2] value, ARGV[2i+3] TTL ms
-- Reply: one integer per lock, in order: 1 = extended, 0 = not ours.
local n = (#KEYS - 1) / 2
if ARGV[2] ~= '0' then
  local mx = tonumber(redis.call('HGET', KEYS[1], 'mx') or ARGV[1]) or tonumber(ARGV[1])
  for i = 1, n do
    local ttl = tonumber(ARGV[2 * i + 3])
    if ttl > mx then
      return redis.error_reply('REDLEASE TTL ' .. ttl .. 'ms is above this node\'s MaxTTL ' .. mx .. 'ms')
    end
  end
end
local out = {}
for i = 1, n do
  if redis.call('GET', KEYS[2 * i]) == ARGV[2 * i + 2] then
    redis.call('PEXPIRE', KEYS[2 * i], ARGV[2 * i + 3])
    if ARGV[3] ~= '0' then redis.call('PEXPIRE', KEYS[2 * i + 1], ARGV[3]) end
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
