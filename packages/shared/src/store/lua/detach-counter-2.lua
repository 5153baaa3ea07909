--[==[
detach-counter-2: takes one counter out of the one-`{gov}`-tag layout (a cluster upgraded from a release that
kept every counter in `{gov}`: redis-migration.ts), atomically: its value and expiry go into the migration's
outbox as an entry, and the counter is deleted. The entry is then added to each owner's counter once
(attach-counter-2) and removed from the outbox. A process that writes the old counter again afterwards (an
ingress of the old release) makes a new key, which a later pass detaches as a new entry.

KEYS[1]  the counter of the old layout   <prefix>{gov}counter:<counter key>
KEYS[2]  the migration's outbox (a hash) <prefix>{gov}migration: nonce → entry (JSON)
ARGV[1]  the entry's nonce
ARGV[2]  what the caller decided: JSON { kind: 'counter', key, owners }, to which this adds `value` (the count)
         and `expireAt` (epoch ms; -1 when the counter has no expiry), both as strings

Returns { 1, entry } when detached; { 0, 'gone' } when there is no counter (detached by another pass, or
expired); { 0, 'not a count' } when its value is not an integer (then it is left where it is).
]==]

local value = redis.call('GET', KEYS[1])
if not value then return { 0, 'gone' } end
if not string.match(value, '^-?%d+$') then return { 0, 'not a count' } end
local entry = cjson.decode(ARGV[2])
entry.value = value
entry.expireAt = string.format('%d', redis.call('PEXPIRETIME', KEYS[1]))
local text = cjson.encode(entry)
redis.call('HSET', KEYS[2], ARGV[1], text)
redis.call('DEL', KEYS[1])
return { 1, text }
