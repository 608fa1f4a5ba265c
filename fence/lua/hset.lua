-- hset (behind check.lua): KEYS[1] resource key; ARGV field, value pairs. Reply: the number of fields added.
return redis.call('HSET', KEYS[1], unpack(ARGV))
