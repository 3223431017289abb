-- The operator's halt of one scope, logged and announced, atomically (halt-store.ts).
-- KEYS[1] the operator's halts (hash), KEYS[2] the halts' log (stream)
-- ARGV[1] the scope's name, ARGV[2] the halt record's JSON, ARGV[3] the log entry's JSON,
-- ARGV[4] the channel to announce on.
-- Returns {1, ''} when the halt was made; {0, the record in place} when the operator had halted
-- the scope already, and then nothing is written.
local existing = redis.call('HGET', KEYS[1], ARGV[1])
if existing then return {0, existing} end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('XADD', KEYS[2], '*', 'event', ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[1])
return {1, ''}
