--[==[
add-counters-n: adds to one owner's counters without a check: a settle's adjustments (real usage less what
admission reserved), once per reservation and owner however many times it is sent (a settle retried after an
answer was lost, a command a reconnecting client sent again); or what the earlier steps of an admission without
a reservation counted, given back when a later owner refused.

KEYS[1]    the mark of this owner's settle <prefix>{<owner>}settled:<reservation id> (any key when ARGV[2] is '')
KEYS[2..]  the counters, in the order of ARGV[1] (one owner's: one hash tag, one slot)
ARGV[1]    JSON [{delta, expireAt, ttl}], one per counter
ARGV[2]    reservation id ('' to add without a mark)
ARGV[3]    how long the mark lives, ms

Returns 1 when added, 0 when this reservation's adjustments were added to this owner before.
]==]

if ARGV[2] ~= '' and not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[3]) then
  return 0
end
local nowMs
for index, adjustment in ipairs(cjson.decode(ARGV[1])) do
  local key = KEYS[index + 1]
  -- As in take-counters-n: a counter's expiry is set when its key is made (an increment from nothing).
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
