#!/bin/bash
# as_survey.sh [SRC.ts...]: builds each AssemblyScript source (default
# tests/gpu/survey/as_matmul.ts) with asc at -O2 and -O3, with the default
# (incremental GC) runtime and with --runtime stub, for WASI through
# @assemblyscript/wasi-shim, compiles it with twasmc --offload-report, runs
# it, and prints per build and function what became of its nests, then the
# md5 of the program's output (equal across builds).  ASC_DIR names a
# folder where `npm install assemblyscript @assemblyscript/wasi-shim` was
# run; without one the survey says so and stops.  Run from the repository
# root after `make`.
set -u
twasmc=${TWASMC:-build/bin/twasmc}
asc_dir=${ASC_DIR:-}
if [ -z "$asc_dir" ] || [ ! -x "$asc_dir/node_modules/.bin/asc" ]; then
  echo "as_survey: skipped: set ASC_DIR to a folder with assemblyscript and @assemblyscript/wasi-shim installed by npm"
  exit 0
fi
[ $# -gt 0 ] || set -- tests/gpu/survey/as_matmul.ts
tmp=$(mktemp -d "$asc_dir/as_survey.XXXXXX") # asc finds the shim only under ASC_DIR
trap 'rm -rf "$tmp"' EXIT
for src in "$@"; do
  src=$(realpath "$src")
  b=$(basename "$src" .ts)
  mod=${b//[^A-Za-z0-9_]/_}
  for rt in incremental stub; do
    for lvl in O2 O3; do
      tag=$b.$lvl.$rt
      cp "$src" "$tmp/$b.ts"
      # the shim's config names its library relative to the folder asc runs
      # in when the config's path is absolute: give it a relative one
      if ! (cd "$tmp" && "$asc_dir/node_modules/.bin/asc" "$b.ts" --config "../node_modules/@assemblyscript/wasi-shim/asconfig.json" \
            -"$lvl" --runtime "$rt" --debug -o m.wasm) >"$tmp/asc.txt" 2>&1; then
        echo "$tag: asc failed: $(head -3 "$tmp/asc.txt")"
        continue
      fi
      "$twasmc" --offload-report "$tmp/m.wasm" -o "$tmp/m" 2>"$tmp/r.txt" >/dev/null || { echo "$tag: twasmc failed"; continue; }
      echo "$tag: output $("$tmp/m" | md5sum | cut -c1-12)"
      grep -E ": $b/" "$tmp/r.txt" | sed -E 's/^[^:]*:0x[0-9a-f]+: //; s/ \(sm_[^)]*\).*//; s/^'"$b"'\///' |
        sort | uniq -c | sed 's/^/  /'
    done
  done
done
