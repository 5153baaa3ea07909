--[==[
release-lease-1: gives the lease up, only when this replica holds it (a lease that expired and was taken over
stays with its new holder).

KEYS[1]  the lease   <prefix>alerts:lease
ARGV[1]  this replica's token

Returns 1 when it was released.
]==]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
