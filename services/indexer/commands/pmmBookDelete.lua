-- Deletes a chain's book unless a book above a block is stored (store/book-store.ts).
-- KEYS[1] the book, KEYS[2] its block number, KEYS[3] its block hash, KEYS[4] its standing; ARGV[1] the highest block that may be deleted
-- Returns the number of keys deleted.
local stored = tonumber(redis.call('GET', KEYS[2]))
if stored and stored > tonumber(ARGV[1]) then return 0 end
return redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
