-- extend: compare-and-PEXPIRE; never re-creates an expired key.
-- KEYS[1] lock key, KEYS[2] quarantine marker
-- ARGV[1] value, ARGV[2] TTL ms, ARGV[3] MaxTTL ms, ARGV[4] quarantine mode ('0' off, '1' on; see quarantine.lua)
-- Reply: {vote, ms}: 1 = extended, 0 = not ours, 2 = quarantined (ms left),
--   3 = quarantine over, floor not raised.
local ttl = tonumber(ARGV[2])
if ARGV[4] ~= '0' then
  local left, ok, created, base, high, rid, mx = redlease_marker(KEYS[2], tonumber(ARGV[3]), true, ARGV[4])
  if ttl > mx then
    return redis.error_reply('ERR redlease: TTL ' .. ttl .. 'ms is above this node\'s MaxTTL ' .. mx .. 'ms')
  end
  if left > 0 then return {2, left} end
  if not ok then return {3, 0} end
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ttl)
  return {1, 0}
end
return {0, 0}
