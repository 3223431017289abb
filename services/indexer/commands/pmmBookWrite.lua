-- Writes a chain's book unless a higher block is stored, then announces it (store/book-store.ts).
-- KEYS[1] the book, KEYS[2] its block number
-- ARGV[1] block number, ARGV[2] book body, ARGV[3] ttl ms, ARGV[4] update channel, ARGV[5] message
-- Returns 1 when written, 0 when a newer book was already there.
local stored = tonumber(redis.call('GET', KEYS[2]))
local incoming = tonumber(ARGV[1])
if stored and stored > incoming then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[5])
return 1
