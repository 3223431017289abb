-- Takes one of a key's price-stream slots (store/stream-slots.ts).
-- KEYS[1] the slots (a sorted set: member → lease expiry, Unix ms)
-- ARGV[1] limit, ARGV[2] lease ms, ARGV[3] member
-- Returns 1 when the lease was granted, else 0. Expired leases are dropped first.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
