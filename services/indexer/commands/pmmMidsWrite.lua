-- Records one block's tops of book in the mid history and trims it by time (store/mid-store.ts).
-- The same block again (a re-run job, a reorg's other block) replaces the record.
-- KEYS[1] the mids (score = block number), KEYS[2] their times (member = block number, score = time)
-- ARGV[1] block number, ARGV[2] block time (s), ARGV[3] the record's JSON, ARGV[4] retention (s)
local block = ARGV[1]
redis.call('ZREMRANGEBYSCORE', KEYS[1], block, block)
redis.call('ZADD', KEYS[1], block, ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[2], block)
local cutoff = tonumber(ARGV[2]) - tonumber(ARGV[4])
-- Blocks only grow with time, so the newest of the expired blocks bounds them all.
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. cutoff)
if #expired > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', expired[#expired])
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. cutoff)
end
return #expired
