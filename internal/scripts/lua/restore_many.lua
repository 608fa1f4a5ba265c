-- restore_many: put back, on one node (and, on a cluster, one slot), the
-- copies of locks that the node lost while their holder holds them on a
-- majority (docs/design.md §4.3, "Restoring lost copies"). Never over a
-- value (SET NX: another holder's, or ours again), with the TTL an extend
-- would give, and the fencing counter left at or above the lock's token:
-- raised to it where below (as fence.lua), and the copy not restored where
-- the counter is above it (a failed attempt of another client granted
-- here: a copy at a higher counter could make a majority read report that
-- counter as the token, §4.4). A missing counter stays missing: the next
-- grant starts from h, which is raised to the token.
-- No quarantine check: the copy only ever blocks others, and the client
-- sends it only while the lock is valid (§4.3).
-- KEYS[1] quarantine marker, then per lock i (1..n) KEYS[2i] its key and
-- KEYS[2i+1] its fencing counter
-- ARGV[1] MaxTTL ms, ARGV[2] quarantine mode ('0' off), ARGV[3] TTL ms
-- (every lock), then per lock ARGV[2i+2] its value and ARGV[2i+3] its
-- token ('0': fencing off, the counter is left alone)
-- Reply: one integer per lock, in order: 1 = restored, 0 = not (the key
-- exists: another value, or ours), -1 = not (the counter is above the
-- token, or not a number).
local n = (#ARGV - 3) / 2
if n < 1 or n ~= math.floor(n) or #KEYS ~= 2 * n + 1 then
  return redis.error_reply('REDLEASE restore_many: ' .. #KEYS .. ' keys for ' .. #ARGV .. ' arguments')
end
local ttl = ARGV[3]
local m = redis.call('HMGET', KEYS[1], 'mx', 'h')
if ARGV[2] ~= '0' then
  local mx = tonumber(m[1] or ARGV[1]) or tonumber(ARGV[1])
  if tonumber(ttl) > mx then
    return redis.error_reply('REDLEASE TTL ' .. ttl .. 'ms is above this node\'s MaxTTL ' .. mx .. 'ms')
  end
end
local h = tonumber(m[2] or '0') or 0
local out = {}
for i = 1, n do
  local key, ckey, value, tok = KEYS[2 * i], KEYS[2 * i + 1], ARGV[2 * i + 2], ARGV[2 * i + 3]
  local t = tonumber(tok) or 0
  local c = 0
  if t > 0 then c = tonumber(redis.call('GET', ckey) or '0') end
  if c == nil or c > t then
    out[i] = -1
  elseif redis.call('SET', key, value, 'NX', 'PX', ttl) then
    if c > 0 and c < t then redis.call('SET', ckey, tok, 'KEEPTTL') end
    if t > h then
      redis.call('HSET', KEYS[1], 'h', tok)
      h = t
    end
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
