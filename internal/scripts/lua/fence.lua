-- fence: the slow path of fencing (counters disagreed): write the token
-- back where we still hold the lock.
-- KEYS[1] lock key, KEYS[2] fencing counter, KEYS[3] quarantine marker
-- ARGV[1] value, ARGV[2] token, ARGV[3] counter TTL ms
-- Reply: 1 = the counter is the token now, 0 = lock
--   not held by ARGV[1], -1 = the counter is already above the token (never
--   hand it out).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local t = tonumber(ARGV[2])
local c = tonumber(redis.call('GET', KEYS[2]) or '0')
if c == nil or c > t then return -1 end
if c < t then redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3]) end
local h = tonumber(redis.call('HGET', KEYS[3], 'h') or '0') or 0
if h < t then redis.call('HSET', KEYS[3], 'h', ARGV[2]) end
return 1
