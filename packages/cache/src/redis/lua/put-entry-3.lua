-- Stores one cache entry of a scope, replacing the scope's entry of the same hash, and evicts the oldest
-- entries past the scope's bound. Every key is in the scope's hash slot ({<scope>}), so on Redis Cluster the
-- script runs on one node, atomically.
--
-- KEYS[1]  the entry's key (<prefix>cache:{<scope>}:h:<hash>): the entry's JSON, expiring with it
-- KEYS[2]  the scope's ids (HASH id -> hash)
-- KEYS[3]  the scope's order (ZSET id scored by createdAt: the lowest is evicted first)
-- ARGV[1]  the entry id
-- ARGV[2]  the hash
-- ARGV[3]  the entry's JSON
-- ARGV[4]  its TTL in ms
-- ARGV[5]  its createdAt (epoch ms)
-- ARGV[6]  most entries the scope may hold
-- ARGV[7]  the prefix of the scope's entry keys (<prefix>cache:{<scope>}:h:)
--
-- Returns the ids that left the scope: the entry replaced, dead ids (their key expired) and evicted ones.

-- An entry's JSON starts with its id (encodeEntry writes it first, and ids are [A-Za-z0-9_-]), so reading
-- it never decodes the whole entry.
local function id_of(text)
  return string.match(text, '^{"id":"([%w_%-]+)"')
end

local removed = {}

local function forget(id)
  local hash = redis.call('HGET', KEYS[2], id)
  redis.call('HDEL', KEYS[2], id)
  redis.call('ZREM', KEYS[3], id)
  if hash then
    -- The hash's key may hold a newer entry already (replaced); only the id's own entry goes.
    local text = redis.call('GET', ARGV[7] .. hash)
    if text and id_of(text) == id then redis.call('DEL', ARGV[7] .. hash) end
  end
  removed[#removed + 1] = id
end

local previous = redis.call('GET', KEYS[1])
if previous then
  local previous_id = id_of(previous)
  if previous_id and previous_id ~= ARGV[1] then
    redis.call('HDEL', KEYS[2], previous_id)
    redis.call('ZREM', KEYS[3], previous_id)
    removed[#removed + 1] = previous_id
  end
end

local ttl = tonumber(ARGV[4])
redis.call('SET', KEYS[1], ARGV[3], 'PX', ttl)
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[3], tonumber(ARGV[5]), ARGV[1])

-- The oldest few ids whose entry expired are dropped, so a scope that never fills does not keep them.
for _, id in ipairs(redis.call('ZRANGE', KEYS[3], 0, 3)) do
  local hash = redis.call('HGET', KEYS[2], id)
  if not hash or redis.call('EXISTS', ARGV[7] .. hash) == 0 then forget(id) end
end

local bound = tonumber(ARGV[6])
while redis.call('ZCARD', KEYS[3]) > bound do
  forget(redis.call('ZRANGE', KEYS[3], 0, 0)[1])
end

-- The scope's index lives as long as its longest-lived entry.
for _, key in ipairs({ KEYS[2], KEYS[3] }) do
  if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
end

return removed
