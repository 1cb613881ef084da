-- Deep recursion: calls, returns and integer arithmetic in Lua's VM.
-- usage: lua - [N] < fib.lua
local n = tonumber(arg and arg[1]) or 30
local function fib(k)
  if k < 2 then return k end
  return fib(k - 1) + fib(k - 2)
end
local function ack(m, k)
  if m == 0 then return k + 1 end
  if k == 0 then return ack(m - 1, 1) end
  return ack(m - 1, ack(m, k - 1))
end
print("fib", n, fib(n))
print("ack", 2, n * 10, ack(2, n * 10))
