-- Appends audit records and indexes them by signature, atomically, within each integrator's
-- daily quota (store/audit-trail.ts).
-- KEYS[1] the chain's audit stream, KEYS[2] the signature index of the records' day,
-- KEYS[3] the records' day's count per integrator
-- ARGV[1] MINID cutoff, ARGV[2] index expiry (Unix ms), ARGV[3] the entry's field,
-- ARGV[4] most entry ids indexed under one signature, ARGV[5] count expiry (Unix ms),
-- then per record: signature, JSON, integrator id, quota (0: none).
-- Returns per record its entry id, or 0 when its integrator's quota for the day is spent
-- (then nothing of it is written).
local max_ids = tonumber(ARGV[4])
local ids = {}
local counted = false
for i = 6, #ARGV, 4 do
  local quota = tonumber(ARGV[i + 3])
  local allowed = true
  if quota > 0 then
    counted = true
    if redis.call('HINCRBY', KEYS[3], ARGV[i + 2], 1) > quota then
      redis.call('HINCRBY', KEYS[3], ARGV[i + 2], -1)
      allowed = false
    end
  end
  if allowed then
    local id = redis.call('XADD', KEYS[1], 'MINID', ARGV[1], '*', ARGV[3], ARGV[i + 1])
    if redis.call('HSETNX', KEYS[2], ARGV[i], id) == 0 then
      local prev = redis.call('HGET', KEYS[2], ARGV[i])
      local _, spaces = string.gsub(prev, ' ', ' ')
      if spaces + 1 < max_ids then redis.call('HSET', KEYS[2], ARGV[i], prev .. ' ' .. id) end
    end
    ids[#ids + 1] = id
  else
    ids[#ids + 1] = 0
  end
end
redis.call('PEXPIREAT', KEYS[2], ARGV[2])
if counted then redis.call('PEXPIREAT', KEYS[3], ARGV[5]) end
return ids
