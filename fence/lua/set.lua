-- set (behind check.lua): KEYS[1] resource key; ARGV[1] value, ARGV[2] TTL in ms (0: none). Reply: OK.
if ARGV[2] ~= '0' then return redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end
return redis.call('SET', KEYS[1], ARGV[1])
