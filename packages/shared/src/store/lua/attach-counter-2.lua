--[==[
attach-counter-2: adds a detached counter (detach-counter-2) to one owner's counter of the new layout, once per
entry however many passes try (a pass killed before it removed the entry from the outbox, two passes at once):
the mark of the entry is written with the addition, on the owner's slot, and lives until the counter's period
ends; a try after that finds the period over and adds nothing.

KEYS[1]  the owner's counter           <prefix>{<owner>}counter:<counter key>
KEYS[2]  the mark of the entry's move  <prefix>{<owner>}migrated:<nonce>
ARGV[1]  the count to add (an integer)
ARGV[2]  the old counter's expiry, epoch ms (-1: none)

The owner's counter keeps the later of the two expiries (none counting as the latest); one made here gets the
old counter's. Returns 1 when added, 0 when added before or the period is over.
]==]

if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local expireAt = tonumber(ARGV[2])
local time = redis.call('TIME')
local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if expireAt >= 0 and expireAt <= nowMs then return 0 end
local existing = redis.call('PEXPIRETIME', KEYS[1])
redis.call('INCRBY', KEYS[1], ARGV[1])
if expireAt < 0 then
  redis.call('PERSIST', KEYS[1])
  redis.call('SET', KEYS[2], '1')
  return 1
end
-- -2: the key was made by the INCRBY above; -1: it has no expiry, which is later than any.
if existing == -2 or (existing >= 0 and existing < expireAt) then
  redis.call('PEXPIREAT', KEYS[1], ARGV[2])
end
redis.call('SET', KEYS[2], '1', 'PXAT', ARGV[2])
return 1
