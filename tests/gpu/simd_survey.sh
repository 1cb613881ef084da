#!/bin/bash
# simd_survey.sh SRC...: builds each C source (tests/gpu/e2e or tests/bench/gpu
# style) at -O2 and -O3, each with and without -msimd128, each linked with
# and without -O2 (binaryen's wasm-opt, which drops the function names:
# func[N]), compiles it with twasmc --offload-report, and prints one line
# per build: the kinds of the nests offloaded in each function (a part of
# a nest of several counts one).  CONFIGS="O2 0 0;O2 1 0" (level, simd,
# wasm-opt) picks builds.  Run from the repository root after `make`.
set -u
twasmc=${TWASMC:-build/bin/twasmc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc="clang-19 --target=wasm32-wasi --sysroot=/usr"
configs=${CONFIGS:-"O2 0 0;O2 1 0;O3 0 0;O3 1 0;O2 0 1;O2 1 1;O3 0 1;O3 1 1"}
for src in "$@"; do
  b=$(basename "$src" .c)
  IFS=';' read -ra list <<<"$configs"
  for c in "${list[@]}"; do
    read -r lvl simd wopt <<<"$c"
    tag=$b.$lvl$([ "$simd" = 1 ] && echo .simd)$([ "$wopt" = 1 ] && echo .wasm-opt)
    if ! $cc -"$lvl" $([ "$simd" = 1 ] && echo -msimd128) -I tests/gpu/e2e -I tests/bench/gpu -c "$src" -o "$tmp/m.o" ||
       ! $cc $([ "$wopt" = 1 ] && echo -O2) "$tmp/m.o" -o "$tmp/m.wasm" -Wl,--max-memory=4294967296 \
           -Wl,-z,stack-size=1048576 -lm; then
      echo "$tag: build failed"
      continue
    fi
    "$twasmc" --offload-report "$tmp/m.wasm" -o "$tmp/m" 2>"$tmp/r.txt" >/dev/null || { echo "$tag: twasmc failed"; continue; }
    echo "$tag: $(grep -oE ': [^ ]+: (part [0-9]+ of [0-9]+: )?offloaded as [a-z]+' "$tmp/r.txt" |
      sed -E 's/: (part [0-9]+ of [0-9]+: )?offloaded as / /; s/^: //' | sort | uniq -c |
      awk '{ printf "%s%s %d %s", (NR > 1 ? ", " : ""), $2, $1, $3 }')"
  done
done
