--[==[
abandon-reservation-2: closes a reservation id whose admission another process began but has not recorded (its
owners' steps are marked taken, record-reservation-3 has not run): an admission of the same id retried elsewhere
after the first went unanswered (a governance replica frozen between its steps and its record). Marked settled,
the id is recorded by nobody: the first admission, when it resumes, finds it settled and gives its steps back,
and the retry answers that the request's admission was interrupted. Nothing is counted, and no reservation is
left for the sweeper to charge.

KEYS[1]  the reservations hash             <prefix>{res:<shard>}reservations
KEYS[2]  the mark of a settled reservation <prefix>{res:<shard>}settled:<id>
ARGV[1]  reservation id
ARGV[2]  how long the mark lives, ms (as settle-reservation-3's)

Returns { 1, 0 } when closed now; { 0, alternative } when the id was recorded before (the first admission
finished meanwhile) and { 0, -1 } when it was settled already, as record-reservation-3 answers a duplicate.
]==]

local existing = redis.call('HGET', KEYS[1], ARGV[1])
if existing then
  return { 0, tonumber(string.match(existing, '^(-?%d+)')) }
end
if redis.call('EXISTS', KEYS[2]) == 1 then return { 0, -1 } end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
return { 1, 0 }
