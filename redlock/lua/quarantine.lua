-- Shared prelude of acquire.lua, extend.lua, probe.lua and inspect.lua: the
-- forgetful-node check (DESIGN 3.5). Not a script of its own.
--
-- The marker is a hash per node: r = run_id, c = created (server ms),
-- ok = 1 once the node's fencing floor was raised (or bootstrapped),
-- b = fencing floor (base), h = highest token ever written here,
-- mx = the MaxTTL of the client that created it (the quarantine length).

-- Integers go to Redis as decimal strings (a Lua number may print as 1e+12).
local function redlease_int(n)
  return string.format('%d', n)
end

local function redlease_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- run_id of this server, or '' where INFO server is not available (miniredis).
local function redlease_run_id()
  local info = redis.pcall('INFO', 'server')
  if type(info) ~= 'string' then return '' end
  -- A plain find: a pattern match over INFO costs several microseconds.
  local i = string.find(info, 'run_id:', 1, true)
  if not i then return '' end
  return string.sub(info, i + 7, i + 46) -- run_id is 40 hex digits
end

-- Reads (and, when create is true, starts) the quarantine of this node.
-- Returns left (ms of quarantine left; 0 once over), ok (floor raised),
-- created, base, high, run_id, mx.
local function redlease_marker(key, max_ttl, create)
  local now = redlease_now()
  local rid = redlease_run_id()
  local m = redis.call('HMGET', key, 'r', 'c', 'ok', 'b', 'h', 'mx')
  if not m[2] or (rid ~= '' and m[1] ~= rid) then
    -- No marker, or the server is not the one that wrote it: this node
    -- may have forgotten locks it granted. It votes no for MaxTTL.
    if create then
      redis.call('HSET', key, 'r', rid, 'c', redlease_int(now), 'ok', 0, 'b', 0, 'h', 0,
        'mx', redlease_int(max_ttl))
    end
    return max_ttl, false, now, 0, 0, rid, max_ttl
  end
  local mx = tonumber(m[6]) or max_ttl
  local left = mx - (now - tonumber(m[2]))
  if left < 0 then left = 0 end
  return left, m[3] == '1', tonumber(m[2]), tonumber(m[4]) or 0, tonumber(m[5]) or 0, rid, mx
end
