-- check: the fence every fenced script begins with (the script's body follows it).
-- KEYS[#KEYS] the resource's token key, ARGV[#ARGV] the token (decimal, no
-- leading zeros): both are removed before the body runs, so the body sees
-- its own KEYS and ARGV. Reply: the error "FENCESTALE <highest>" (nothing
-- written) when the token is below the highest; else the token key holds the
-- token and the reply is the body's. Tokens are compared as decimal strings
-- (length, then bytes): exact for every uint64, where Lua numbers are not.
local fence_key = table.remove(KEYS)
local fence_token = table.remove(ARGV)
local fence_highest = redis.call('GET', fence_key)
if fence_highest and (#fence_highest > #fence_token or
    (#fence_highest == #fence_token and fence_highest > fence_token)) then
  return redis.error_reply('FENCESTALE ' .. fence_highest)
end
if fence_highest ~= fence_token then redis.call('SET', fence_key, fence_token) end
