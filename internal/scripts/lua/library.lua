-- The Function library's own part, after the quarantine prelude and before
-- the scripts (library.go wraps each script in a function and registers
-- it). Not a script of its own; the EVAL scripts do not have it.
-- docs/design.md §4.7.5: a chunk-level local of a loaded library lives
-- exactly as long as that loaded copy; Redis loads the library anew on a
-- restart, a replica's full resync, DEBUG RELOAD and FUNCTION
-- FLUSH/RESTORE/LOAD REPLACE, and keeps it on a partial resync and
-- FLUSHALL. The copy's incarnation token is such a local.

-- This version's field in the marker (library.go puts the version in).
local redlease_tf = 't:REDLEASE_VERSION'

-- The incarnation token of this loaded copy: set on its first call that
-- carries a client nonce (never math.random: every fresh server seeds it
-- alike), with the server's TIME.
local redlease_token = nil

-- The markers whose quarantine this copy saw over (key -> created and
-- MaxTTL), so that a check needs no TIME once it is over.
local redlease_over = {}

-- redlease_start sets the token from a client nonce (the first call's).
local function redlease_start(nonce)
  local t = redis.call('TIME')
  redlease_token = redis.sha1hex(nonce .. ':' .. t[1] .. '.' .. t[2])
end

-- The replication ID alone (INFO replication, the cheap section); where
-- that is refused (an ACL that allows INFO server only, by its first
-- argument), redlease_ids' ('' where INFO is refused).
local function redlease_replid()
  local info = redis.pcall('INFO', 'replication')
  if type(info) ~= 'string' then
    local _, rep = redlease_ids()
    return rep
  end
  local i = string.find(info, 'master_replid:', 1, true)
  if not i then return '' end
  return string.sub(info, i + 14, i + 53)
end

-- The quarantine of a node that may have forgotten (see redlease_marker),
-- with the token recorded where create.
local function redlease_token_quarantine(key, rid, rep, max_ttl, create)
  local now = redlease_now()
  if create then
    redlease_new_marker(key, rid, rep, now, max_ttl, 0)
    redis.call('HSET', key, redlease_tf, redlease_token)
  end
  return max_ttl, false, now, 0, 0, rid, max_ttl
end

-- redlease_marker in the library. The marker's token for this version
-- equal to ours: this loaded copy checked the node and nothing that
-- reloads the library has happened since (no restart, full resync, DEBUG
-- RELOAD, FUNCTION FLUSH), so INFO server is not needed; the replication
-- ID is still compared (a promotion with its replication link broken keeps
-- the copy). No token for this version: the full check, and the token
-- recorded. A differing token: the library was reloaded since, quarantine
-- even when run_id and replication ID agree. So too where this copy has no
-- token yet (its first calls carry no nonce: inspect) but the marker has
-- one for this version: a copy records only its own, so that one was
-- another copy's.
redlease_marker_token = function(key, max_ttl, create, mode)
  local m = redis.call('HMGET', key, 'r', 'c', 'ok', 'b', 'h', 'mx', 'p', redlease_tf)
  local tok = redlease_token or ''
  if not m[2] or not m[8] or ((mode == '3' or mode == '4') and m[8] ~= tok) then
    local left, ok, created, base, high, rid, mx = redlease_marker_full(key, max_ttl, create, mode)
    if create and tok ~= '' then redis.call('HSET', key, redlease_tf, tok) end
    return left, ok, created, base, high, rid, mx
  end
  if m[8] ~= tok then
    local rid, rep = redlease_ids()
    return redlease_token_quarantine(key, rid, rep, max_ttl, create)
  end
  if mode ~= '2' and mode ~= '4' then
    local rep = redlease_replid()
    if rep ~= '' and m[7] ~= rep then return redlease_token_quarantine(key, m[1], rep, max_ttl, create) end
  end
  local mx = tonumber(m[6]) or max_ttl
  local left = 0
  local seen = m[2] .. '/' .. (m[6] or '')
  if redlease_over[key] ~= seen then
    left = mx - (redlease_now() - tonumber(m[2]))
    if left <= 0 then
      left = 0
      redlease_over[key] = seen
    end
  end
  return left, m[3] == '1', tonumber(m[2]), tonumber(m[4]) or 0, tonumber(m[5]) or 0, m[1], mx
end

-- redlease_gate is the check of the scripts that act only where our value
-- is (extend, extend_many): they vote as before (docs/design.md §4.8), but
-- a token that is not ours runs the check above, which quarantines the
-- node for the next acquisitions or records our token (§4.7.5).
local function redlease_gate(key, max_ttl, mode)
  if mode == '0' or redis.call('HGET', key, redlease_tf) == redlease_token then return end
  redlease_marker(key, tonumber(max_ttl), true, mode)
end
