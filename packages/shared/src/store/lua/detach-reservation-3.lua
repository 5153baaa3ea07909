--[==[
detach-reservation-3: takes one open reservation out of the one-`{gov}`-tag journal (redis-migration.ts),
atomically: it goes into the migration's outbox as an entry, with its deadline, and leaves the old journal. A
process of the old release that settles it afterwards finds nothing to settle (so it is settled once, in the new
journal, by a settle or the sweeper).

KEYS[1]  the old reservations hash       <prefix>{gov}reservations
KEYS[2]  the old deadline set            <prefix>{gov}reservation-deadlines
KEYS[3]  the migration's outbox (a hash) <prefix>{gov}migration: nonce → entry (JSON)
ARGV[1]  the reservation id
ARGV[2]  what the caller read of it ('<alternative>\n<payload>'): it is detached only as read
ARGV[3]  the entry's nonce
ARGV[4]  what the caller decided: JSON { kind: 'reservation', id, stored } (`stored` with its payload as the new
         release reads it), to which this adds `deadline` (epoch ms, as a string)

Returns { 1, entry } when detached; { 0, 'gone' } when it is no longer open; { 0, 'changed' } when it is not as
read.
]==]

local stored = redis.call('HGET', KEYS[1], ARGV[1])
if not stored then return { 0, 'gone' } end
if stored ~= ARGV[2] then return { 0, 'changed' } end
local entry = cjson.decode(ARGV[4])
entry.deadline = redis.call('ZSCORE', KEYS[2], ARGV[1]) or '0'
local text = cjson.encode(entry)
redis.call('HSET', KEYS[3], ARGV[3], text)
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return { 1, text }
