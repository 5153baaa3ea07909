--[==[
release-counters-n: gives back, exactly once, what one owner's step of an admission added (take-counters-n),
when a later owner refused the request or the admission failed without an answer.

KEYS[1]    the mark of the step <prefix>{<owner>}taken:<reservation id>
KEYS[2..]  the step's counters, in the order take-counters-n had them
ARGV[1]    JSON [{expireAt, ttl}], one per counter (a counter given back to after it expired is made again)
ARGV[2]    how long the mark lives once released, ms (a late take of the same step then counts nothing); 0 when
           the step answered and the admission was refused: the mark is deleted, so that the request may be
           admitted again (a strict one at the smaller reservation its budget left buys: admission-core.ts)

Returns 1 when the step's amounts were given back now, 0 when it never ran or was released before.
]==]

local mark = redis.call('GET', KEYS[1])
if ARGV[2] ~= '0' then
  redis.call('SET', KEYS[1], 'released', 'PX', ARGV[2])
elseif mark and mark ~= 'released' then
  redis.call('DEL', KEYS[1])
end
if not mark or mark == 'released' then return 0 end
local counters = cjson.decode(ARGV[1])
local nowMs
for index, amount in ipairs(cjson.decode(mark)) do
  if amount ~= 0 then
    local key = KEYS[index + 1]
    local delta = string.format('%d', -amount)
    if redis.call('INCRBY', key, delta) == tonumber(delta) then
      if not nowMs then
        local time = redis.call('TIME')
        nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
      end
      local counter = counters[index]
      redis.call('PEXPIREAT', key, string.format('%d', math.max(counter.expireAt, nowMs + counter.ttl)))
    end
  end
end
return 1
