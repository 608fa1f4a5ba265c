-- acquire: SET NX PX, idempotent for our own value, with the quarantine check
-- and phase 1 of fencing (read the counter).
-- KEYS[1] lock key, KEYS[2] fencing counter, KEYS[3] quarantine marker
-- ARGV[1] value, ARGV[2] TTL ms, ARGV[3] MaxTTL ms, ARGV[4] quarantine mode ('0' off, '1' on; see quarantine.lua)
-- Reply: {vote, counter, ms, created, high, run_id}
--   vote 1 = locked (or already ours: PX refreshed), 0 = held by another
--   (ms = its PTTL), 2 = quarantined (ms = left), 3 = quarantine over but the
--   fencing floor is not raised yet. counter = max(counter, floor).
local ttl = tonumber(ARGV[2])
local created, base, high, rid = 0, 0, 0, ''
if ARGV[4] ~= '0' then
  local left, ok, mx
  left, ok, created, base, high, rid, mx = redlease_marker(KEYS[3], tonumber(ARGV[3]), true, ARGV[4])
  if ttl > mx then
    return redis.error_reply('ERR redlease: TTL ' .. ttl .. 'ms is above this node\'s MaxTTL ' .. mx .. 'ms')
  end
  if left > 0 then return {2, 0, left, created, high, rid} end
  if not ok then return {3, 0, 0, created, high, rid} end
end
local counter = tonumber(redis.call('GET', KEYS[2]) or '0')
if counter == nil then
  return redis.error_reply('ERR redlease: fencing counter ' .. KEYS[2] .. ' is not a number')
end
if counter < base then counter = base end
local cur = redis.call('GET', KEYS[1])
if not cur then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
elseif cur == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ttl)
else
  return {0, counter, redis.call('PTTL', KEYS[1]), created, high, rid}
end
return {1, counter, 0, created, high, rid}
