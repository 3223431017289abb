-- The operator's resume of one scope, wherever it is halted (the operator's halts and the
-- ledgers' trips), logged and announced, atomically (halt-store.ts).
-- KEYS[1] the operator's halts (hash), KEYS[2] the halts' log (stream), KEYS[3..] ledgers' trips (hashes)
-- ARGV[1] the scope's name, ARGV[2] the resume's log entry (JSON), ARGV[3] the channel to announce on,
-- then four per trips field to remove: the index of its hash in KEYS, the field, the value the
-- caller read there, and the log entry that keeps the trip (JSON; '' for an unreadable field).
-- Returns {1, the operator's record or ''} when something was lifted; {0, ''} when nothing was
-- halted; {-1, ''} when a trips field is no longer what the caller read (nothing written: read
-- again). A trip leaves its hash for the log here, so the log holds every lifted trip.
for i = 4, #ARGV, 4 do
  if redis.call('HGET', KEYS[tonumber(ARGV[i])], ARGV[i + 1]) ~= ARGV[i + 2] then return {-1, ''} end
end
local lifted = false
local existing = redis.call('HGET', KEYS[1], ARGV[1])
if existing then
  redis.call('HDEL', KEYS[1], ARGV[1])
  lifted = true
end
for i = 4, #ARGV, 4 do
  redis.call('HDEL', KEYS[tonumber(ARGV[i])], ARGV[i + 1])
  if ARGV[i + 3] ~= '' then redis.call('XADD', KEYS[2], '*', 'event', ARGV[i + 3]) end
  lifted = true
end
if not lifted then return {0, ''} end
redis.call('XADD', KEYS[2], '*', 'event', ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[1])
return {1, existing or ''}
