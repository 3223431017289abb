-- Renews held price-stream leases (store/stream-slots.ts).
-- KEYS[1] the slots; ARGV[1] lease ms, ARGV[2..] members
-- Sets every member's expiry to now + lease; returns how many.
local t = redis.call('TIME')
local expiry = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], expiry, ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return #ARGV - 1
