-- Loop-heavy numeric code: a sieve, a float kernel, a matrix product on
-- arrays (Lua tables with integer keys).
-- usage: lua - [N] < loops.lua
local n = tonumber(arg and arg[1]) or 100
local limit = n * 20000
local sieve, primes = {}, 0
for i = 2, limit do sieve[i] = true end
for i = 2, limit do
  if sieve[i] then
    primes = primes + 1
    for j = i * i, limit, i do sieve[j] = false end
  end
end
local inside = 0
for y = 0, n * 2 - 1 do
  for x = 0, n * 3 - 1 do
    local cr, ci = x / n - 2.0, y / n - 1.0
    local zr, zi, k = 0.0, 0.0, 0
    while k < 50 and zr * zr + zi * zi < 4.0 do
      zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
      k = k + 1
    end
    if k == 50 then inside = inside + 1 end
  end
end
local m = n
local a, b, c = {}, {}, {}
for i = 1, m do
  a[i], b[i], c[i] = {}, {}, {}
  for j = 1, m do a[i][j] = (i + j) % 7; b[i][j] = (i * j) % 5; c[i][j] = 0 end
end
for i = 1, m do
  local ai, ci = a[i], c[i]
  for k = 1, m do
    local aik, bk = ai[k], b[k]
    for j = 1, m do ci[j] = ci[j] + aik * bk[j] end
  end
end
local trace = 0
for i = 1, m do trace = trace + c[i][i] end
print(primes, inside, trace)
