--[==[
take-slice-2: an ingress's slice of one counter (docs/governance.md "Allowances"): renews its lease, reports
what it spent, arms it further and takes more of the counter when asked, all on the counter's owner's slot.
Slices of other holders whose lease ended (a killed ingress) give back their unarmed part first.

KEYS[1]  the counter                       <prefix>{<owner>}counter:<key>
KEYS[2]  the slices of the counter (hash)  <prefix>{<owner>}slices:<key>: holder → 'taken:armed:used:leaseEnd'
ARGV[1]  holder (the ingress's id)
ARGV[2]  want: how much more to take (0: only renew and report)
ARGV[3]  the counter's limit now
ARGV[4]  used: what the holder admitted from its slice so far
ARGV[5]  step: how far past `used` the holder may admit without asking again (armed = used + step, at most taken)
ARGV[6]  lease, ms
ARGV[7]  the counter's expiry (epoch ms) and ARGV[8] its least time to live (ms), as in take-counters-n

Returns { taken, armed, granted (1|0), fresh (1: the holder had no slice here) }. A take is granted only while
the counter has room for it and for one more slice of its size per other live holder; otherwise the holder admits
against the counter itself (the exact path) until the period ends.
]==]

local time = redis.call('TIME')
local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local holder, want, limit = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local used, step, leaseMs = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])

local function counterAdd(delta)
  local amount = string.format('%d', delta)
  if redis.call('INCRBY', KEYS[1], amount) == tonumber(amount) then
    redis.call('PEXPIREAT', KEYS[1], string.format('%d', math.max(tonumber(ARGV[7]), nowMs + tonumber(ARGV[8]))))
  end
end

local entries = redis.call('HGETALL', KEYS[2])
local others, reclaimed = 0, 0
local taken, armed, fresh = 0, 0, 1
for index = 1, #entries, 2 do
  local field = entries[index]
  local t, a, _, lease = string.match(entries[index + 1], '^(-?%d+):(-?%d+):(-?%d+):(%d+)$')
  if field == holder then
    taken, armed, fresh = tonumber(t), tonumber(a), 0
  elseif tonumber(lease) < nowMs then
    -- Its holder stopped renewing (killed): what it never armed goes back; what it armed it may have admitted.
    reclaimed = reclaimed + tonumber(t) - tonumber(a)
    redis.call('HDEL', KEYS[2], field)
  else
    others = others + 1
  end
end
if reclaimed ~= 0 then counterAdd(-reclaimed) end

local granted = 0
if want > 0 then
  local current = tonumber(redis.call('GET', KEYS[1]) or '0')
  if limit - current >= want * (others + 1) then
    counterAdd(want)
    taken = taken + want
    granted = 1
  end
end
armed = math.min(taken, math.max(armed, used + step))
redis.call('HSET', KEYS[2], holder, string.format('%d:%d:%d:%d', taken, armed, used, nowMs + leaseMs))
redis.call('PEXPIREAT', KEYS[2], string.format('%d', math.max(tonumber(ARGV[7]), nowMs + tonumber(ARGV[8]))))
return { taken, armed, granted, fresh }
