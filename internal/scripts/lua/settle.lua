-- settle: lower a late spare's counter to the token (docs/design.md §4.5).
-- KEYS[1] lock key, KEYS[2] fencing counter
-- ARGV[1] value, ARGV[2] token t
-- Reply: 1 = the counter was above t and is t now (its TTL kept), 0 = left
--   as it was (the lock is not ARGV[1]'s, or the counter is not above t).
-- The marker's h and b are never touched.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local c = tonumber(redis.call('GET', KEYS[2]) or '0')
if c ~= nil and c > tonumber(ARGV[2]) then
  redis.call('SET', KEYS[2], ARGV[2], 'KEEPTTL')
  return 1
end
return 0
