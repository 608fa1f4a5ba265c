-- Shared prelude of acquire.lua, probe.lua and inspect.lua: the
-- forgetful-node check (docs/design.md §4.7). Not a script of its own.
--
-- The marker is a hash per node: r = run_id, p = replication ID
-- (master_replid), c = created (server ms), ok = 1 once the node's fencing
-- floor was raised (or bootstrapped), b = fencing floor (base), h = highest
-- token ever written here, mx = the MaxTTL of the client that created it
-- (the quarantine length), l = the layout of the cluster clients that use
-- it ("n=3 B=16"; absent on independent nodes), t:<version> = the
-- incarnation token of the loaded copy of that version of the Function
-- library that last passed the check here (library.lua; docs/design.md
-- §4.7.5). A new marker drops every t: field: a new incarnation.
--
-- The quarantine mode (an ARGV of the scripts that use the marker) is '0'
-- (off), '1' (on) or '2' (on, but the replication ID not compared: only
-- the negative control of a test sets it); in the library, '3' is on but a
-- differing incarnation token does not quarantine, and '4' neither (the
-- negative controls).

-- The library's check by its incarnation token (library.lua sets it); nil
-- in the EVAL scripts, which run the full check every time.
local redlease_marker_token = nil

-- Integers go to Redis as decimal strings (a Lua number may print as 1e+12).
local function redlease_int(n)
  return string.format('%d', n)
end

-- A new marker: the quarantine of this incarnation starts at created; ok
-- is 1 when its floor needs no raise (bootstrap).
-- The marker is made anew (DEL, then HSET), so that no field of the last
-- incarnation stays (the t: fields), except the cluster layout.
local function redlease_new_marker(key, rid, rep, created, max_ttl, ok)
  local l = redis.call('HGET', key, 'l')
  redis.call('DEL', key)
  redis.call('HSET', key, 'r', rid, 'p', rep, 'c', redlease_int(created), 'ok', ok, 'b', 0, 'h', 0,
    'mx', redlease_int(max_ttl))
  if l then redis.call('HSET', key, 'l', l) end
end

local function redlease_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- run_id and replication ID of this server, or '' where INFO is not
-- available (miniredis). The run_id changes when the process restarts; the
-- replication ID changes at every promotion and full resync, and stays put
-- while a master serves (docs/design.md §4.7.2).
local function redlease_ids()
  local info = redis.pcall('INFO', 'server', 'replication')
  if type(info) ~= 'string' then
    -- A server that takes one INFO section per call.
    info = redis.pcall('INFO', 'server')
    if type(info) ~= 'string' then return '', '' end
    local r = redis.pcall('INFO', 'replication')
    if type(r) == 'string' then info = info .. r end
  end
  -- Plain finds: a pattern match over INFO costs several microseconds.
  local rid, rep = '', ''
  local i = string.find(info, 'run_id:', 1, true)
  if i then rid = string.sub(info, i + 7, i + 46) end -- 40 hex digits
  i = string.find(info, 'master_replid:', 1, true)
  if i then rep = string.sub(info, i + 14, i + 53) end
  return rid, rep
end

-- The full check of redlease_marker: TIME, INFO server and replication,
-- the marker.
local function redlease_marker_full(key, max_ttl, create, mode)
  local now = redlease_now()
  local rid, rep = redlease_ids()
  local m = redis.call('HMGET', key, 'r', 'c', 'ok', 'b', 'h', 'mx', 'p')
  if mode == '2' or mode == '4' then rep = '' end
  if not m[2] or (rid ~= '' and m[1] ~= rid) or (rep ~= '' and m[7] ~= rep) then
    -- No marker, or not the server that wrote it (another process), or
    -- its dataset may have been replaced since (a promotion, a full
    -- resync): this node may have forgotten locks it granted. It votes
    -- no for MaxTTL.
    if create then
      redlease_new_marker(key, rid, rep, now, max_ttl, 0)
    end
    return max_ttl, false, now, 0, 0, rid, max_ttl
  end
  local mx = tonumber(m[6]) or max_ttl
  local left = mx - (now - tonumber(m[2]))
  if left < 0 then left = 0 end
  return left, m[3] == '1', tonumber(m[2]), tonumber(m[4]) or 0, tonumber(m[5]) or 0, rid, mx
end

-- Reads (and, when create is true, starts) the quarantine of this node.
-- mode is the quarantine mode ('1' to '4', see above).
-- Returns left (ms of quarantine left; 0 once over), ok (floor raised),
-- created, base, high, run_id, mx.
local function redlease_marker(key, max_ttl, create, mode)
  if redlease_marker_token then return redlease_marker_token(key, max_ttl, create, mode) end
  return redlease_marker_full(key, max_ttl, create, mode)
end

-- Checks the layout of a cluster client (n copies, B buckets; '' or nil:
-- independent nodes, nothing to check) against the one the marker
-- records; with write, records it where none is. Returns an error text
-- naming both layouts when they differ, or nil.
local function redlease_layout(key, layout, write)
  if not layout or layout == '' then return nil end
  local l = redis.call('HGET', key, 'l')
  if l and l ~= layout then
    return 'REDLEASE layout: ' .. key .. ' belongs to cluster clients with ' .. l ..
      ', this client has ' .. layout .. ': every client sharing a cluster must use the same copies (n) and buckets (B)'
  end
  if not l and write then redis.call('HSET', key, 'l', layout) end
  return nil
end
