-- acquire: SET NX PX, idempotent for our own value, with the quarantine
-- check and the fencing grant (docs/design.md §4.5, §4.7).
-- KEYS[1] lock key, KEYS[2] fencing counter, KEYS[3] quarantine marker
-- ARGV[1] value, ARGV[2] TTL ms, ARGV[3] MaxTTL ms, ARGV[4] quarantine mode
-- ('0' off, '1' on; see quarantine.lua), ARGV[5] counter TTL ms ('0':
-- fencing off, no counter), ARGV[6] '1' = a missing counter starts from 0
-- (a test's negative control only), ARGV[7] cluster layout ("n=3 B=16";
-- '' or absent: independent nodes; see redlease_layout)
-- Reply: {vote, token, ms, created, high, id}
--   vote 1 = locked (or already ours: PX refreshed), 0 = held by another
--   (ms = its PTTL), 2 = quarantined (ms = left), 3 = quarantine over but the
--   fencing floor is not raised yet. token: on a grant, the counter this
--   call set, C := max(C or h, b) + 1 (h = highest token of this node, b =
--   its floor); on a re-sent attempt (our value already there), the counter
--   unchanged. created: the marker's incarnation (quarantined votes only).
--   high: this node's highest token. id: the first 48 bits of the server's
--   run_id, as an integer (0 where INFO is refused), to count one vote per
--   server.
local ttl = tonumber(ARGV[2])
local created, base, high, id = 0, 0, 0, 0
local lerr = redlease_layout(KEYS[3], ARGV[7], true)
if lerr then return redis.error_reply(lerr) end
if ARGV[4] ~= '0' then
  local left, ok, mx, rid
  left, ok, created, base, high, rid, mx = redlease_marker(KEYS[3], tonumber(ARGV[3]), true, ARGV[4])
  id = tonumber(string.sub(rid, 1, 12), 16) or 0
  if ttl > mx then
    return redis.error_reply('REDLEASE TTL ' .. ttl .. 'ms is above this node\'s MaxTTL ' .. mx .. 'ms')
  end
  if left > 0 then return {2, 0, left, created, high, id} end
  if not ok then return {3, 0, 0, created, high, id} end
end
-- created identifies the incarnation to raise a quarantined node's floor;
-- a voting node's reply leaves it out (one number less to send).
created = 0
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then
  return {0, 0, redis.call('PTTL', KEYS[1]), created, high, id}
end
if cur then
  -- Our own attempt, sent again (a client retry): never grant twice.
  redis.call('PEXPIRE', KEYS[1], ttl)
  if ARGV[5] == '0' then return {1, 0, 0, created, high, id} end
  return {1, tonumber(redis.call('GET', KEYS[2]) or '0') or 0, 0, created, high, id}
end
if ARGV[5] == '0' then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
  return {1, 0, 0, created, high, id}
end
if ARGV[4] == '0' then
  high = tonumber(redis.call('HGET', KEYS[3], 'h') or '0') or 0
end
local c = redis.call('GET', KEYS[2])
if c then
  c = tonumber(c)
  if c == nil then
    return redis.error_reply('REDLEASE fencing counter ' .. KEYS[2] .. ' is not a number')
  end
elseif ARGV[6] == '1' then
  c = 0
else
  c = high
end
if c < base then c = base end
c = c + 1
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
redis.call('SET', KEYS[2], redlease_int(c), 'PX', ARGV[5])
if c > high then
  high = c
  redis.call('HSET', KEYS[3], 'h', redlease_int(c))
end
return {1, c, 0, created, high, id}
