-- Allocation and garbage collection: binary trees built and walked.
-- usage: lua - [N] < trees.lua
local n = tonumber(arg and arg[1]) or 16
local function make(d)
  if d == 0 then return { false, false } end
  return { make(d - 1), make(d - 1) }
end
local function check(t)
  if not t[1] then return 1 end
  return 1 + check(t[1]) + check(t[2])
end
local long = make(n)
local total = 0
for d = 4, n, 2 do
  local iters = 1 << (n - d + 4)
  local sum = 0
  for _ = 1, iters do sum = sum + check(make(d)) end
  total = total + sum
  print(d, iters, sum)
end
print("long", check(long), total)
