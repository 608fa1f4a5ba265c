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
-- A grant costs, besides the marker's check (TIME, INFO, HMGET): one SET NX
-- GET (the vote), INCR and PEXPIRE of the counter, and an HSET of h when
-- the counter passes it (docs/design.md §4.5).
local ttl = tonumber(ARGV[2])
local base, high, id = 0, 0, 0
local lerr = redlease_layout(KEYS[3], ARGV[7], true)
if lerr then return redis.error_reply(lerr) end
if ARGV[4] ~= '0' then
  local left, ok, created, mx, rid
  left, ok, created, base, high, rid, mx = redlease_marker(KEYS[3], tonumber(ARGV[3]), true, ARGV[4])
  id = tonumber(string.sub(rid, 1, 12), 16) or 0
  if ttl > mx then
    return redis.error_reply('REDLEASE TTL ' .. ttl .. 'ms is above this node\'s MaxTTL ' .. mx .. 'ms')
  end
  -- created identifies the incarnation to raise a quarantined node's
  -- floor; a voting node's reply leaves it out (one number less to send).
  if left > 0 then return {2, 0, left, created, high, id} end
  if not ok then return {3, 0, 0, created, high, id} end
end
-- The vote: set the key if it is free, and read what holds it if not, in
-- one command (SET NX with GET, Redis 7.0 and later).
local cur = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2], 'GET')
if cur then
  if cur ~= ARGV[1] then return {0, 0, redis.call('PTTL', KEYS[1]), 0, high, id} end
  -- Our own attempt, sent again (a client retry): never grant twice.
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  if ARGV[5] == '0' then return {1, 0, 0, 0, high, id} end
  return {1, tonumber(redis.call('GET', KEYS[2]) or '0') or 0, 0, 0, high, id}
end
if ARGV[5] == '0' then return {1, 0, 0, 0, high, id} end
if ARGV[4] == '0' then
  high = tonumber(redis.call('HGET', KEYS[3], 'h') or '0') or 0
end
-- The grant: C + 1 in place, its TTL refreshed; the rare corrections (a
-- missing counter, which INCR made 1; one below the floor) set it anew.
local c = redis.pcall('INCR', KEYS[2])
if type(c) ~= 'number' then
  -- Refused (not a number, another type, an ACL without INCR): the key
  -- set above is undone, and the node answers the error.
  redis.pcall('DEL', KEYS[1])
  if string.find(c.err, 'not an integer', 1, true) then
    return redis.error_reply('REDLEASE fencing counter ' .. KEYS[2] .. ' is not a number')
  end
  return c
end
if c == 1 or c <= base then
  if c == 1 and ARGV[6] ~= '1' then c = high + 1 end
  if c <= base then c = base + 1 end
  redis.call('SET', KEYS[2], redlease_int(c), 'PX', ARGV[5])
else
  redis.call('PEXPIRE', KEYS[2], ARGV[5])
end
if c > high then
  high = c
  redis.call('HSET', KEYS[3], 'h', redlease_int(c))
end
return {1, c, 0, 0, high, id}
