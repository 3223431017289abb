-- Halts or resumes one scope, logs it and announces it, atomically (halt-store.ts).
-- KEYS[1] the active halts (hash), KEYS[2] the halts' log (stream)
-- ARGV[1] 'halt' or 'resume', ARGV[2] the scope's name, ARGV[3] the halt record's JSON (halt) or
-- '' (resume), ARGV[4] the log entry's JSON, ARGV[5] the channel to announce on.
-- Returns {1, previous record or ''} when the change was made; {0, the record in place or ''}
-- when there was nothing to do (already halted; nothing to resume), then nothing is written.
local existing = redis.call('HGET', KEYS[1], ARGV[2])
if ARGV[1] == 'halt' then
  if existing then return {0, existing} end
  redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
else
  if not existing then return {0, ''} end
  redis.call('HDEL', KEYS[1], ARGV[2])
end
redis.call('XADD', KEYS[2], '*', 'event', ARGV[4])
redis.call('PUBLISH', ARGV[5], ARGV[2])
return {1, existing or ''}
