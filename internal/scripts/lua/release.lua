-- release: compare-and-DEL, then an optional change notice.
-- KEYS[1] lock key; ARGV[1] value, ARGV[2] notice channel ('' = none),
-- ARGV[3] notice message, ARGV[4] '1' = SPUBLISH (cluster: the channel is
-- in the key's slot)
-- Reply: 1 = deleted, 0 = not ours (expired or taken).
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  if ARGV[2] ~= '' then
    -- A notice is a hint: a refused PUBLISH must not fail the release.
    redis.pcall(ARGV[4] == '1' and 'SPUBLISH' or 'PUBLISH', ARGV[2], ARGV[3])
  end
  return 1
end
return 0
