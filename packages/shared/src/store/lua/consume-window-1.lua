--[[
consume-window-1: adds to a fixed-window counter, only while the count stays within the limit.
One script, so the read and the add are atomic across every gateway process.

KEYS[1]  the counter of one window: <prefix>window:<key>:<windowMs>:<windowStartMs>
ARGV[1]  amount      integer >= 0; 0 only reads
ARGV[2]  limit       integer >= 0
ARGV[3]  resetAtMs   epoch milliseconds at which the window ends
ARGV[4]  windowMs    the window length in milliseconds

Returns { allowed (1 or 0), count after the call, resetAtMs }.
]]

local amount = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local resetAtMs = tonumber(ARGV[3])
local windowMs = tonumber(ARGV[4])

local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count + amount > limit then
  return { 0, count, resetAtMs }
end

if amount > 0 then
  count = redis.call('INCRBY', KEYS[1], ARGV[1])
  -- The window is chosen by the caller's clock. When that clock lags this server's, the window end can
  -- already be past here, and PEXPIREAT in the past would delete the counter at once and admit everything;
  -- so the counter lives at least one window length from now.
  local time = redis.call('TIME')
  local serverNowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  -- %d, because Lua turns large numbers into strings in exponent notation.
  redis.call('PEXPIREAT', KEYS[1], string.format('%d', math.max(resetAtMs, serverNowMs + windowMs)))
end

return { 1, count, resetAtMs }
