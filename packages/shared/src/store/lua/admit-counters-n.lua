--[==[
admit-counters-n: governance admission over any number of counters, atomic across every gateway process.
Mirrors decideAdmission() in admission.ts.

KEYS[1]      the reservations hash        <prefix>reservations
KEYS[2]      the reservation deadline set <prefix>reservation-deadlines
KEYS[3]      the mark of a settled reservation <prefix>settled:<id> (any key when there is no reservation)
KEYS[4..]    the counters, in the order of the checks in ARGV[1]
ARGV[1]      JSON { groups: [[{limit, need, amount, expireAt, ttl}]] }: group 1 is `required`, the rest are
             alternatives in preference order
ARGV[2]      reservation id ('' for none)
ARGV[3]      reservation deadline, epoch ms
ARGV[4]      reservation payload (JSON text), stored as '<first passing alternative>\n<payload>'

Returns { allowed (1|0), failedGroup (-1 required, else alternative index; -2 none), failedIndex,
          failedCurrent, passing alternatives as a JSON array text, duplicate (1|0) }.

A reservation id is admitted once: when it is already reserved (another replica admitted the same request
before its answer was lost) or already settled, nothing is counted again and the reply says duplicate.
]==]

if ARGV[2] ~= '' then
  local existing = redis.call('HGET', KEYS[1], ARGV[2])
  if existing then
    local chosen = tonumber(string.match(existing, '^(-?%d+)'))
    return { 1, -2, 0, 0, chosen >= 0 and cjson.encode({ chosen }) or '[]', 1 }
  end
  if redis.call('EXISTS', KEYS[3]) == 1 then return { 1, -2, 0, 0, '[]', 1 } end
end

local spec = cjson.decode(ARGV[1])
local groups = spec.groups
local keyIndex = 4
local values = {}

-- Read every counter once.
for g = 1, #groups do
  values[g] = {}
  for c = 1, #groups[g] do
    values[g][c] = { key = KEYS[keyIndex], current = tonumber(redis.call('GET', KEYS[keyIndex]) or '0') }
    keyIndex = keyIndex + 1
  end
end

local function failing(g)
  for c = 1, #groups[g] do
    local check = groups[g][c]
    if values[g][c].current + check.need > check.limit then return c end
  end
  return 0
end

local requiredFailure = failing(1)
local passing = {}
local altFailGroup, altFailIndex, altFailCurrent = -2, 0, 0
for g = 2, #groups do
  local failure = failing(g)
  if failure == 0 then
    table.insert(passing, g - 2)
  elseif altFailGroup == -2 then
    altFailGroup, altFailIndex, altFailCurrent = g - 2, failure - 1, values[g][failure].current
  end
end
local passingJson = #passing == 0 and '[]' or cjson.encode(passing)

if requiredFailure ~= 0 then
  return { 0, -1, requiredFailure - 1, values[1][requiredFailure].current, passingJson, 0 }
end
if #groups > 1 and #passing == 0 then
  return { 0, altFailGroup, altFailIndex, altFailCurrent, passingJson, 0 }
end

local nowMs
local function add(g)
  for c = 1, #groups[g] do
    local check = groups[g][c]
    if check.amount ~= 0 then
      -- A counter's key is its period's (the period's start is in its name): its expiry is set when the key is
      -- made, the one increment that finds nothing before it, and never needs setting again.
      local amount = string.format('%d', check.amount)
      if redis.call('INCRBY', values[g][c].key, amount) == tonumber(amount) then
        if not nowMs then
          local time = redis.call('TIME')
          nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
        end
        -- A caller clock behind this server's must not expire the counter at once.
        redis.call('PEXPIREAT', values[g][c].key, string.format('%d', math.max(check.expireAt, nowMs + check.ttl)))
      end
    end
  end
end
add(1)
if #passing > 0 then add(passing[1] + 2) end

if ARGV[2] ~= '' then
  -- The admitted alternative is stored with the payload: only this step knows it.
  local chosen = #passing > 0 and passing[1] or -1
  redis.call('HSET', KEYS[1], ARGV[2], string.format('%d', chosen) .. '\n' .. ARGV[4])
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
end
return { 1, -2, 0, 0, passingJson, 0 }
