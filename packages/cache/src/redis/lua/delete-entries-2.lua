-- Deletes entries of one scope by id (all of them when no id is given), with their place in the scope's
-- index. Every key is in the scope's hash slot ({<scope>}).
--
-- KEYS[1]  the scope's ids (HASH id -> hash)
-- KEYS[2]  the scope's order (ZSET id scored by createdAt)
-- ARGV[1]  the prefix of the scope's entry keys (<prefix>cache:{<scope>}:h:)
-- ARGV[2…] the ids; none means every entry of the scope
--
-- Returns { the number of entries deleted (whose key had not expired), the ids that left the index }.

-- An entry's JSON starts with its id (encodeEntry writes it first, and ids are [A-Za-z0-9_-]), so reading
-- it never decodes the whole entry.
local function id_of(text)
  return string.match(text, '^{"id":"([%w_%-]+)"')
end

local ids = {}
if #ARGV > 1 then
  for index = 2, #ARGV do ids[#ids + 1] = ARGV[index] end
else
  ids = redis.call('HKEYS', KEYS[1])
end

local live = 0
local deleted = {}
for _, id in ipairs(ids) do
  local hash = redis.call('HGET', KEYS[1], id)
  if hash then
    local text = redis.call('GET', ARGV[1] .. hash)
    if text and id_of(text) == id then
      redis.call('DEL', ARGV[1] .. hash)
      live = live + 1
    end
    redis.call('HDEL', KEYS[1], id)
    redis.call('ZREM', KEYS[2], id)
    deleted[#deleted + 1] = id
  end
end
return { live, deleted }
