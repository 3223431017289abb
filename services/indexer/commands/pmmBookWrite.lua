-- Writes a chain's book unless a higher block, or the same block with the same hash, is
-- stored, then announces it (store/book-store.ts). The same height with another hash is a
-- reorg: that block's book is replaced.
-- KEYS[1] the book, KEYS[2] its block number, KEYS[3] its block hash, KEYS[4] its pairs' standing
-- against their references (core's band-record.ts), KEYS[5] the log of their transitions in and
-- out of band (core's band-transition.ts: a stream, history, no expiry)
-- ARGV[1] block number, ARGV[2] book body, ARGV[3] ttl ms, ARGV[4] update channel, ARGV[5] message,
-- ARGV[6] block hash, ARGV[7] the standing ('' when no pair has a reference: the key is removed),
-- ARGV[8] the log's length kept (approximate), ARGV[9] the entries' field, ARGV[10…] this block's
-- transitions, one entry each:
-- added only with a book written, so a replica computing the same block adds none twice
-- Returns 1 when written, 0 when a newer (or the same) book was already there.
local stored = tonumber(redis.call('GET', KEYS[2]))
local incoming = tonumber(ARGV[1])
if stored and stored > incoming then return 0 end
if stored == incoming and redis.call('GET', KEYS[3]) == ARGV[6] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[3])
redis.call('SET', KEYS[3], ARGV[6], 'PX', ARGV[3])
if ARGV[7] == '' then redis.call('DEL', KEYS[4]) else redis.call('SET', KEYS[4], ARGV[7], 'PX', ARGV[3]) end
for i = 10, #ARGV do redis.call('XADD', KEYS[5], 'MAXLEN', '~', ARGV[8], '*', ARGV[9], ARGV[i]) end
redis.call('PUBLISH', ARGV[4], ARGV[5])
return 1
