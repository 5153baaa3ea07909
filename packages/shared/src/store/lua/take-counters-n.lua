--[==[
take-counters-n: one owner's step of a governance admission (a key with its provider configs, a team, a
customer…): checks every counter of the owner and counts them all or none, atomically. Mirrors
decideAdmission() in admission.ts for the checks of one owner; an admission over several owners takes their
steps in a fixed order and gives back what earlier steps counted when a later one refuses (redis-store.ts).

KEYS[1]      the mark of this step for the reservation <prefix>{<owner>}taken:<reservation id>
KEYS[2..]    the counters, in the order of the checks in ARGV[1] (one owner's: one hash tag, one slot)
ARGV[1]      JSON { groups: [[{limit, need, amount, expireAt, ttl}]] }: group 1 is the owner's required checks,
             the rest are alternatives in preference order
ARGV[2]      reservation id ('' for none: no mark)
ARGV[3]      how long the mark lives, ms

Returns { allowed (1|0), failedGroup (-1 required, else alternative index; -2 none; -3 this reservation's step
          was taken or released before), failedIndex, failedCurrent, passing alternatives as a JSON array text }.

The mark holds what the step added to each counter (JSON, in KEYS order), so that release-counters-n can give
it back exactly once: when a later owner refuses, or when the admission failed without an answer (a Redis that
stalled: the step may have run or not, and the release, sent after it on the same connection, runs after it).
]==]

if ARGV[2] ~= '' and redis.call('EXISTS', KEYS[1]) == 1 then
  return { 0, -3, 0, 0, '[]' }
end

local spec = cjson.decode(ARGV[1])
local groups = spec.groups
local keyIndex = 2
local values = {}

-- Read every counter once.
for g = 1, #groups do
  values[g] = {}
  for c = 1, #groups[g] do
    values[g][c] = {
      key = KEYS[keyIndex],
      index = keyIndex - 1,
      current = tonumber(redis.call('GET', KEYS[keyIndex]) or '0'),
    }
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
  return { 0, -1, requiredFailure - 1, values[1][requiredFailure].current, passingJson }
end
if #groups > 1 and #passing == 0 then
  return { 0, altFailGroup, altFailIndex, altFailCurrent, passingJson }
end

local nowMs
local added = {}
local function add(g)
  for c = 1, #groups[g] do
    local check = groups[g][c]
    added[values[g][c].index] = check.amount
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
  local amounts = {}
  for index = 1, #KEYS - 1 do amounts[index] = added[index] or 0 end
  redis.call('SET', KEYS[1], cjson.encode(amounts), 'PX', ARGV[3])
end
return { 1, -2, 0, 0, passingJson }
