-- extend: compare-and-PEXPIRE; never re-creates an expired key. No
-- quarantine check: a node that still holds our fresh per-attempt value
-- remembered our grant, so its yes lets no one else in (docs/design.md
-- §4.8); TTLs above the node's MaxTTL are
-- still refused. The fencing counter's TTL is set too when the client
-- sends the counter's key: when it last set it more than a quarter of that
-- TTL ago (as extend_many; docs/design.md §4.6).
-- KEYS[1] lock key, KEYS[2] quarantine marker, KEYS[3] (only when its TTL
-- is due) fencing counter
-- ARGV[1] value, ARGV[2] TTL ms, ARGV[3] MaxTTL ms, ARGV[4] quarantine mode
-- ('0' off), ARGV[5] (with KEYS[3]) counter TTL ms
-- Reply: 1 = extended, 0 = not ours. (A bare integer and no counter key
-- when none is due: every argument and reply element costs server time,
-- docs/design.md §4.14.)
local ttl = tonumber(ARGV[2])
if ARGV[4] ~= '0' then
  local mx = tonumber(redis.call('HGET', KEYS[2], 'mx') or ARGV[3]) or tonumber(ARGV[3])
  if ttl > mx then
    return redis.error_reply('REDLEASE TTL ' .. ttl .. 'ms is above this node\'s MaxTTL ' .. mx .. 'ms')
  end
end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2]) -- the text as sent: no number to format
if KEYS[3] and ARGV[5] ~= '0' then redis.call('PEXPIRE', KEYS[3], ARGV[5]) end
return 1
