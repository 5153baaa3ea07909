--[==[
renew-lease-1: extends the alert evaluator's lease when this replica still holds it, else takes it when free.

KEYS[1]  the lease   <prefix>alerts:lease
ARGV[1]  this replica's token (random per process)
ARGV[2]  the lease time, ms

Returns 1 when this replica holds the lease afterwards, 0 when another one does.
]==]
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if holder == false then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
