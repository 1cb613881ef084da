-- Table and string work: hashing string keys, concatenation, formatting,
-- pattern matching, sorting strings, a garbage-collected heap.
-- usage: lua - [N] < strings.lua
local n = tonumber(arg and arg[1]) or 200000
local words, count = {}, {}
local seed = 12345
local function rand(k)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed % k
end
for i = 1, n do
  local w = string.format("w%x_%d", rand(4096), rand(37))
  words[i] = w
  count[w] = (count[w] or 0) + 1
end
local keys = {}
for k in pairs(count) do keys[#keys + 1] = k end
table.sort(keys)
local parts = {}
for i = 1, #keys, 97 do parts[#parts + 1] = keys[i] .. "=" .. count[keys[i]] end
local joined = table.concat(parts, ",")
local digits = 0
for d in joined:gmatch("%d+") do digits = digits + #d end
local up = joined:gsub("w(%x+)", function(h) return h:upper() end)
local rev = {}
for i = 1, n, 7 do rev[#rev + 1] = words[i]:reverse():sub(1, 4) end
table.sort(rev, function(a, b) return a > b end)
print(#keys, #joined, digits, #up, up:sub(1, 40), rev[1], rev[#rev])
