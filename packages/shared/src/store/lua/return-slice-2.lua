--[==[
return-slice-2: an ingress gives back what it did not spend of its slice of one counter (the period rolled over,
or it drains), and forgets the slice.

KEYS[1]  the counter                       <prefix>{<owner>}counter:<key>
KEYS[2]  the slices of the counter (hash)  <prefix>{<owner>}slices:<key>
ARGV[1]  holder (the ingress's id)
ARGV[2]  used: what the holder admitted from its slice

Returns what went back (0 when the holder had no slice: its lease ended and another holder reclaimed it).
]==]

local entry = redis.call('HGET', KEYS[2], ARGV[1])
if not entry then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
local taken = tonumber(string.match(entry, '^(-?%d+):'))
local back = taken - tonumber(ARGV[2])
if back ~= 0 and redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('INCRBY', KEYS[1], string.format('%d', -back))
end
return back
