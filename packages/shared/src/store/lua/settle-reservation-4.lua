--[==[
settle-reservation-4: applies a reservation's final counter adjustments exactly once.

KEYS[1]  the reservations hash        <prefix>{gov}reservations
KEYS[2]  the reservation deadline set <prefix>{gov}reservation-deadlines
KEYS[3]  the mark of this settled reservation <prefix>{gov}settled:<id>
KEYS[4..] the counters to adjust, in the order of ARGV[2] (every key declared, for Redis Cluster)
ARGV[1]  reservation id
ARGV[2]  JSON [{delta, expireAt, ttl}], one per counter of KEYS[4..]
ARGV[3]  how long the mark lives, ms (a late admission of the same id counts nothing while it does)

Returns 1 when applied, 0 when the reservation was already settled or never existed.
]==]

if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('SET', KEYS[3], '1', 'PX', ARGV[3])
local nowMs
for index, adjustment in ipairs(cjson.decode(ARGV[2])) do
  local key = KEYS[3 + index]
  -- As in admit-counters-n: a counter's expiry is set when its key is made (an increment from nothing).
  local delta = string.format('%d', adjustment.delta)
  if adjustment.delta ~= 0 and redis.call('INCRBY', key, delta) == tonumber(delta) then
    if not nowMs then
      local time = redis.call('TIME')
      nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
    end
    redis.call('PEXPIREAT', key, string.format('%d', math.max(adjustment.expireAt, nowMs + adjustment.ttl)))
  end
end
return 1
