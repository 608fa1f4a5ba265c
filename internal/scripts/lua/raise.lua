-- raise: lift a quarantined node's fencing floor to the highest token read
-- from a healthy majority, so tokens never go back after it forgot them.
-- KEYS[1] quarantine marker; ARGV[1] marker created (identifies the
-- incarnation), ARGV[2] floor
-- Reply: 1 = raised, 0 = marker changed meanwhile (not raised).
local m = redis.call('HMGET', KEYS[1], 'c', 'b', 'h')
if m[1] ~= ARGV[1] then return 0 end
local v = tonumber(ARGV[2])
if (tonumber(m[2]) or 0) < v then redis.call('HSET', KEYS[1], 'b', ARGV[2]) end
if (tonumber(m[3]) or 0) < v then redis.call('HSET', KEYS[1], 'h', ARGV[2]) end
redis.call('HSET', KEYS[1], 'ok', 1)
return 1
