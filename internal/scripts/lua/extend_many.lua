-- extend_many: extend.lua for many locks of one node (and, on a cluster,
-- one slot) in one call: compare-and-PEXPIREAT each (this server's TIME
-- plus the TTL), never re-create one.
-- No quarantine check, for the reason given in extend.lua; a TTL above the
-- node's MaxTTL is refused (the whole call: a misconfiguration).
-- Every lock of a call has the same TTL. The locks' values are read with
-- one MGET; a key that is missing or not a string holds no value of ours.
-- KEYS[1] quarantine marker, KEYS[2..n+1] the n lock keys, then, only when
-- ARGV[3] is not '0', KEYS[n+2..2n+1] their fencing counters in the same
-- order
-- ARGV[1] MaxTTL ms, ARGV[2] quarantine mode ('0' off), ARGV[3] counter TTL
-- ms ('0': leave the counters' TTL as it is: fencing off, or set
-- recently), ARGV[4] TTL ms (every lock), ARGV[5..n+4] the locks' values
-- Reply: one integer per lock, in order: 1 = extended, 0 = not ours; then
-- this server's TIME (seconds, microseconds), which the client's clock
-- sanity check reads (docs/design.md §6.5).
local n = #ARGV - 4
local ttl, cttl = ARGV[4], ARGV[3]
local fence = cttl ~= '0'
if n < 1 or #KEYS ~= (fence and 2 * n + 1 or n + 1) then
  return redis.error_reply('REDLEASE extend_many: ' .. #KEYS .. ' keys for ' .. n .. ' locks')
end
if ARGV[2] ~= '0' then
  local mx = tonumber(redis.call('HGET', KEYS[1], 'mx') or ARGV[1]) or tonumber(ARGV[1])
  if tonumber(ttl) > mx then
    return redis.error_reply('REDLEASE TTL ' .. ttl .. 'ms is above this node\'s MaxTTL ' .. mx .. 'ms')
  end
end
local got = redis.call('MGET', unpack(KEYS, 2, n + 1))
-- PEXPIREAT at this server's own time now + TTL, not PEXPIRE: the same
-- deadline or a later one (TIME is read after the call began, so after the
-- client sent it: a key never expires before the client's own deadline,
-- which counts from before it sent), and the server stores it as it is,
-- where PEXPIRE has its arguments rewritten for every key (about a third
-- of its cost). The clock is the server's, never the client's, and
-- TIME is floored to ms as PEXPIRE's own clock is (docs/design.md §5.2).
local t = redis.call('TIME')
local at = string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ttl))
local out = {}
for i = 1, n do
  if got[i] == ARGV[i + 4] then
    redis.call('PEXPIREAT', KEYS[i + 1], at)
    if fence then redis.call('PEXPIRE', KEYS[n + i + 1], cttl) end
    out[i] = 1
  else
    out[i] = 0
  end
end
out[n + 1], out[n + 2] = tonumber(t[1]), tonumber(t[2])
return out
