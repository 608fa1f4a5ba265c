-- del (behind check.lua): KEYS[1] resource key. Reply: 1 if it existed, else 0.
return redis.call('DEL', KEYS[1])
