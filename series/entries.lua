-- purepcp: a batch of one stream's entries, added as PCP's loader adds them one by one.
-- KEYS[1]  the stream (pcp:values:series:<sid>)
-- ARGV[1]  the entries' fields, 20 bytes each (instance ids); empty: the one field ""
-- ARGV[2]  the entry ids, space-separated
-- ARGV[3]  each entry's field count, space-separated; -1: an error entry (-1, its code)
-- ARGV[4]  the values, each ended by a newline (stored values never hold one)
-- An entry not newer than the stream's last is refused, as PCP's are, and skipped; the
-- reply is the number added, or the first other error.
local key, blob = KEYS[1], ARGV[1]
local fields = {}
if #blob == 0 then
  fields[1] = ""
else
  for i = 1, #blob / 20 do fields[i] = string.sub(blob, (i - 1) * 20 + 1, i * 20) end
end
local ids, counts, values = {}, {}, {}
for id in string.gmatch(ARGV[2], "%S+") do ids[#ids + 1] = id end
for n in string.gmatch(ARGV[3], "%S+") do counts[#counts + 1] = tonumber(n) end
for v in string.gmatch(ARGV[4], "([^\n]*)\n") do values[#values + 1] = v end
local at, added, problem = 0, 0, nil
for e = 1, #ids do
  local n = counts[e]
  local args = {key, ids[e]}
  if n < 0 then
    args[3] = "-1"
    args[4] = values[at + 1]
    at = at + 1
  else
    for i = 1, n do
      args[2 * i + 1] = fields[i]
      args[2 * i + 2] = values[at + i]
    end
    at = at + n
  end
  local reply = redis.pcall("XADD", unpack(args))
  if type(reply) == "table" and reply.err then
    if not string.find(reply.err, "equal or smaller", 1, true) and problem == nil then
      problem = reply.err
    end
  else
    added = added + 1
  end
end
if problem then return redis.error_reply(problem) end
return added
