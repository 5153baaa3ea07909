--[==[
record-reservation-3: records an admitted request's reservation in its shard of the journal, the last step of
an admission (after every owner's counters were taken), once per reservation id.

KEYS[1]  the reservations hash             <prefix>{res:<shard>}reservations
KEYS[2]  the reservation deadline set      <prefix>{res:<shard>}reservation-deadlines
KEYS[3]  the mark of a settled reservation <prefix>{res:<shard>}settled:<id>
ARGV[1]  reservation id
ARGV[2]  reservation deadline, epoch ms
ARGV[3]  what is stored: '<admitted alternative>\n<payload>'

Returns { 1, 0 } when recorded; { 0, alternative } when the id was admitted before (another replica admitted
the same request before its answer was lost: -1 when it was settled already or admitted no alternative), and
then the caller gives back what its steps counted.
]==]

local existing = redis.call('HGET', KEYS[1], ARGV[1])
if existing then
  return { 0, tonumber(string.match(existing, '^(-?%d+)')) }
end
if redis.call('EXISTS', KEYS[3]) == 1 then return { 0, -1 } end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return { 1, 0 }
