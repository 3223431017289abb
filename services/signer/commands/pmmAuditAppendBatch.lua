-- Appends audit records and indexes them by signature, atomically (store/audit-trail.ts).
-- KEYS[1] the chain's audit stream, KEYS[2] the signature index of the records' day
-- ARGV[1] MINID cutoff, ARGV[2] index expiry (Unix ms), ARGV[3] the entry's field,
-- ARGV[4] most entry ids indexed under one signature, then per record: signature, JSON.
-- Returns the entry ids, in order.
local max_ids = tonumber(ARGV[4])
local ids = {}
for i = 5, #ARGV, 2 do
  local id = redis.call('XADD', KEYS[1], 'MINID', ARGV[1], '*', ARGV[3], ARGV[i + 1])
  if redis.call('HSETNX', KEYS[2], ARGV[i], id) == 0 then
    local prev = redis.call('HGET', KEYS[2], ARGV[i])
    local _, spaces = string.gsub(prev, ' ', ' ')
    if spaces + 1 < max_ids then redis.call('HSET', KEYS[2], ARGV[i], prev .. ' ' .. id) end
  end
  ids[#ids + 1] = id
end
redis.call('PEXPIREAT', KEYS[2], ARGV[2])
return ids
