#!/bin/bash
# suite_report.sh SRC...: builds each C source (tests/gpu/e2e style) with
# plain -O2, -O3, -O2 -fno-unroll-loops and -O2 -msimd128, compiles it with twasmc
# --offload-report, and prints one markdown row per kernel_* function:
# the kinds of the nests offloaded at each level (matvec: a product with
# one row or column).  Run from the repository root after `make`.
# SUITE_CFLAGS adds to every level (`-fno-inline`: every kernel_*
# function named in the report, the way the textbook surveys are read).
set -eu
twasmc=${TWASMC:-build/bin/twasmc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc="clang-19 --target=wasm32-wasi --sysroot=/usr"
levels=("-O2" "-O3" "-O2 -fno-unroll-loops" "-O2 -msimd128")
echo "| function | -O2 | -O3 | -O2 -fno-unroll-loops | -O2 -msimd128 |"
echo "|---|---|---|---|---|"
for src in "$@"; do
  for i in 0 1 2 3; do
    $cc ${levels[$i]} ${SUITE_CFLAGS:-} -I tests/gpu/e2e -c "$src" -o "$tmp/m.o"
    $cc "$tmp/m.o" -o "$tmp/m$i.wasm" -Wl,--max-memory=4294967296 -Wl,-z,stack-size=1048576 -lm
    "$twasmc" --offload-report "$tmp/m$i.wasm" -o "$tmp/m$i" 2>"$tmp/r$i.txt"
  done
  awk '
    FNR == 1 { lvl++ }
    match($0, /: kernel_[A-Za-z0-9_]+: /) {
      f = substr($0, RSTART + 2, RLENGTH - 4)
      if (!(f in seen)) { seen[f] = 1; order[++n] = f }
      if ($0 ~ /offloaded as /) {
        k = $0; sub(/.*offloaded as /, "", k); sub(/ .*/, "", k)
        if (k == "matmul" && $0 ~ /matrix-vector/) k = "matvec"
        count[f, lvl, k]++; kinds[k] = 1
      }
    }
    END {
      for (i = 1; i <= n; i++) {
        line = "| " order[i]
        for (l = 1; l <= 4; l++) {
          cell = ""
          for (k in kinds) if ((order[i], l, k) in count) cell = cell (cell ? ", " : "") count[order[i], l, k] " " k
          line = line " | " (cell ? cell : "none")
        }
        print line " |"
      }
    }' "$tmp/r0.txt" "$tmp/r1.txt" "$tmp/r2.txt" "$tmp/r3.txt"
done
