#!/usr/bin/env bash
# ptx_same.sh: records, and later compares against, what the offload path
# produces for every GPU corpus: the --offload-report text and every PTX
# file --extract-ptx writes, for the e2e corpus (tests/gpu/e2e), the bench
# programs (tests/bench/gpu), the detector corpus (tests/gpu/detect, under
# several flag sets, plus its host IR), the re-roll loops (tests/unit/reroll)
# and the PTX of the two kernel harnesses (tests/gpu/wmma, tests/gpu/mm_exact).
#   ptx_same.sh record DIR   compile the corpora to Wasm once (kept in
#                            DIR/wasm, so that clang plays no part later) and
#                            store the outputs of the current build in DIR/out
#   ptx_same.sh check DIR    rebuild the outputs with the current build from
#                            DIR/wasm and diff them against DIR/out; exits 1
#                            on any difference (listed, with a diff -r)
# The current build is TWASMC (default build/bin/twasmc) and the harness
# generators WMMA_GEN and MM_EXACT_GEN (`make ptx-same-tools` builds all).
set -u
mode=${1:?usage: ptx_same.sh record|check DIR}
dir=${2:?usage: ptx_same.sh record|check DIR}
twasmc=$(realpath "${TWASMC:-build/bin/twasmc}")
wmma_gen=${WMMA_GEN:-build/gpu/bench/tc/wmma_gen}
mm_exact_gen=${MM_EXACT_GEN:-build/gpu/mm_exact/mm_exact_gen}
wasi_cc="clang-19 --target=wasm32-wasi --sysroot=/usr"
jobs=${PTX_SAME_JOBS:-2}

# The detector corpus is compiled under each of these flag sets.
detect_flags=("" "--tensor-cores=tf32" "--fp-reassociate" "--gpu-arch=sm_80,sm_90")

flags_of() { sed -n 's|.*/\* twasmc-flags: \(.*[^ ]\) *\*/.*|\1|p' "$1"; }

# Wasm inputs, built as the Makefile and the unit tests build them.
make_wasm() {
  local w=$1/wasm src n
  mkdir -p "$w"
  for src in tests/gpu/e2e/*.c tests/bench/gpu/*.c; do
    n=$(basename "$src" .c)
    case $src in tests/gpu/*) n=e2e-$n ;; *) n=bench-$n ;; esac
    $wasi_cc -O2 -fno-unroll-loops -c "$src" -o "$w/$n.o" &&
      $wasi_cc "$w/$n.o" -o "$w/$n.wasm" -Wl,--max-memory=4294967296 -Wl,-z,stack-size=1048576 -lm ||
      return 1
    flags_of "$src" >"$w/$n.flags"
    rm -f "$w/$n.o"
  done
  for src in tests/gpu/detect/*.c; do
    n=detect-$(basename "$src" .c)
    $wasi_cc -O2 -c "$src" -o "$w/$n.o" &&
      $wasi_cc -nostdlib -Wl,--no-entry -Wl,--export-all -Wl,--allow-undefined "$w/$n.o" -o "$w/$n.wasm" ||
      return 1
    rm -f "$w/$n.o"
  done
  for src in tests/unit/reroll/*.c; do
    n=reroll-$(basename "$src" .c)
    $wasi_cc -O2 "$src" -o "$w/$n.wasm" || return 1
  done
}

# compile_one WASM OUT NAME FLAGS...: report, extracted PTX and status.
compile_one() {
  local wasm=$1 out=$2 name=$3
  shift 3
  local d=$out/$name
  mkdir -p "$d/ptx"
  "$twasmc" -c "$@" --offload-report "$wasm" -o "$d/obj.o" 2>"$d/report.txt"
  echo "status $?" >>"$d/report.txt"
  (cd "$d" && "$twasmc" --extract-ptx obj.o -o ptx >/dev/null 2>extract.txt)
  rm -f "$d/obj.o" "$d/obj.h"
}
export -f compile_one
export twasmc

# One line per compilation: WASM NAME FLAGS...
jobs_of() {
  local w=$1/wasm f n i
  for f in "$w"/e2e-*.wasm "$w"/bench-*.wasm "$w"/reroll-*.wasm; do
    n=$(basename "$f" .wasm)
    echo "$f $n $(cat "${f%.wasm}.flags" 2>/dev/null)"
  done
  for f in "$w"/detect-*.wasm; do
    n=$(basename "$f" .wasm)
    for i in "${!detect_flags[@]}"; do echo "$f $n.$i ${detect_flags[$i]}"; done
  done
}

outputs() {
  local out=$1
  rm -rf "$out"
  mkdir -p "$out"
  jobs_of "$dir" | xargs -d '\n' -n 1 -P "$jobs" bash -c 'set -- $1; compile_one "$1" "'"$out"'" "${@:2}"' _ ||
    return 1
  # the host IR around the kernels (kernel table, offload calls)
  for f in "$dir"/wasm/detect-*.wasm; do
    "$twasmc" --emit-llvm "$f" -o "$out/$(basename "$f" .wasm).ll" 2>/dev/null
  done
  mkdir -p "$out/gen-wmma" "$out/gen-mm_exact"
  "$wmma_gen" "$out/gen-wmma/" >/dev/null || echo "wmma_gen failed" >"$out/gen-wmma/status"
  "$mm_exact_gen" "$out/gen-mm_exact" >/dev/null || echo "mm_exact_gen failed" >"$out/gen-mm_exact/status"
}

case $mode in
record)
  rm -rf "$dir/wasm"
  make_wasm "$dir" || { echo "ptx_same: building the Wasm inputs failed"; exit 1; }
  outputs "$dir/out" || exit 1
  echo "ptx_same: recorded $(find "$dir/out" -name '*.ptx' | wc -l) PTX files and" \
    "$(find "$dir/out" -name report.txt | wc -l) reports in $dir/out"
  ;;
check)
  [ -d "$dir/out" ] || { echo "ptx_same: no baseline in $dir (run record first)"; exit 1; }
  now=$(mktemp -d /tmp/ptx-same.XXXXXX)
  outputs "$now/out" || exit 1
  if diff -r -q "$dir/out" "$now/out" >"$now/list"; then
    echo "ptx_same: identical: $(find "$now/out" -name '*.ptx' | wc -l) PTX files," \
      "$(find "$now/out" -name report.txt | wc -l) reports, $(find "$now/out" -name '*.ll' | wc -l) host IR files"
    rm -rf "$now"
    exit 0
  fi
  echo "ptx_same: DIFFERENT ($(wc -l <"$now/list") entries; outputs kept in $now/out):"
  cat "$now/list"
  exit 1
  ;;
*)
  echo "usage: ptx_same.sh record|check DIR"
  exit 2
  ;;
esac
