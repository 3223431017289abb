-- Reserves rate-limit tokens from a window's shared counter (store/rate-limiter.ts).
-- KEYS[1] the counter; ARGV[1] limit, ARGV[2] wanted tokens, ARGV[3] ttl ms
-- Grants min(wanted, limit - used); returns {granted, used after}. The ttl is set when the
-- counter is created.
local limit = tonumber(ARGV[1])
local want = tonumber(ARGV[2])
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local grant = limit - used
if grant > want then grant = want end
if grant <= 0 then return {0, used} end
used = redis.call('INCRBY', KEYS[1], grant)
if used == grant then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return {grant, used}
