--[==[
attach-reservation-4: records a detached reservation (detach-reservation-3) in its shard of the new journal, once
per entry however many passes try: the mark of the entry is written on the shard's slot with it. A reservation
that is in the journal already, or settled there, is not recorded again.

KEYS[1]  the reservations hash             <prefix>{res:<shard>}reservations
KEYS[2]  the reservation deadline set      <prefix>{res:<shard>}reservation-deadlines
KEYS[3]  the mark of a settled reservation <prefix>{res:<shard>}settled:<id>
KEYS[4]  the mark of the entry's move      <prefix>{res:<shard>}migrated:<nonce>
ARGV[1]  reservation id
ARGV[2]  its deadline, epoch ms
ARGV[3]  what is stored: '<admitted alternative>\n<payload>'
ARGV[4]  how long the mark lives, ms

Returns 1 when recorded, 0 otherwise.
]==]

if redis.call('EXISTS', KEYS[4]) == 1 then return 0 end
redis.call('SET', KEYS[4], '1', 'PX', ARGV[4])
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 or redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return 1
