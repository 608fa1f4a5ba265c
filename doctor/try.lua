-- doctor's ACL try: runs each command redlease's scripts run, on a scratch
-- key and its counter (expiring within a second, deleted at the end), and
-- reads the marker. KEYS[1] scratch key, KEYS[2] its counter, KEYS[3] the
-- quarantine marker; ARGV[1] a notice channel, ARGV[2] PUBLISH or SPUBLISH
-- (a cluster's sharded Pub/Sub). Reply: "COMMAND: error" for
-- each command refused.
local denied = {}
local function try(name, ...)
  local r = redis.pcall(...)
  if type(r) == 'table' and r.err then denied[#denied + 1] = name .. ': ' .. r.err end
  return r
end
local t = try('TIME', 'TIME')
try('INFO', 'INFO', 'server')
try('SET', 'SET', KEYS[1], 'doctor', 'NX', 'PX', 1000)
try('GET', 'GET', KEYS[1])
try('MGET', 'MGET', KEYS[1])
try('PTTL', 'PTTL', KEYS[1])
try('PEXPIRE', 'PEXPIRE', KEYS[1], 1000)
if type(t) == 'table' and t[1] then
  try('PEXPIREAT', 'PEXPIREAT', KEYS[1], tonumber(t[1]) * 1000 + 1000)
end
try('DEL', 'DEL', KEYS[1])
try('HSET', 'HSET', KEYS[1], 'doctor', 1)
redis.pcall('PEXPIRE', KEYS[1], 1000)
try('INCR', 'INCR', KEYS[2])
redis.pcall('PEXPIRE', KEYS[2], 1000)
redis.pcall('DEL', KEYS[1], KEYS[2])
try('HGET', 'HGET', KEYS[3], 'c')
try('HMGET', 'HMGET', KEYS[3], 'c', 'r')
try(ARGV[2], ARGV[2], ARGV[1], 'doctor')
return denied
