--[==[
settle-reservation-3: closes a reservation in its shard of the journal, exactly once; the caller then adds the
settle's adjustments to each owner's counters (add-counters-n), only when this answered 1.

KEYS[1]  the reservations hash        <prefix>{res:<shard>}reservations
KEYS[2]  the reservation deadline set <prefix>{res:<shard>}reservation-deadlines
KEYS[3]  the mark of this settled reservation <prefix>{res:<shard>}settled:<id>
ARGV[1]  reservation id
ARGV[2]  how long the mark lives, ms (a late admission of the same id counts nothing while it does)

Returns 1 when closed now, 0 when the reservation was already settled or never existed.
]==]

if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('SET', KEYS[3], '1', 'PX', ARGV[2])
return 1
