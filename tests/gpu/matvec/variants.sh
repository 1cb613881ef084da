#!/usr/bin/env bash
# variants.sh MATVEC_DIR LOG_DIR: on the GPU machine, builds matvec_bw.cu
# with nvcc and runs it on the committed kernel's PTX (MATVEC_DIR/ptx) and
# on every variant of `make gpu-mv-variants` (MATVEC_DIR/variants/R-T-A:
# ROWS outputs a block, T bytes of W a chunk, A vectors read ahead), each
# launched with --rows R.  Prints the correctness and timing lines of each.
# Figures, not tests: a failed variant shows as its output.
set -u
dir=${1:?usage: variants.sh MATVEC_DIR LOG_DIR}
logs=${2:?usage: variants.sh MATVEC_DIR LOG_DIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$logs"
if ! nvcc -O2 -Xcompiler -ffp-contract=off -o "$logs/matvec_bw" "$here/matvec_bw.cu" -lcuda >"$logs/nvcc.log" 2>&1; then
  echo "matvec_bw: nvcc failed ($logs/nvcc.log)"
  exit 1
fi
run() {  # run NAME PTX_DIR ROWS
  echo "== $1 (--rows $3)"
  timeout "${MV_LIMIT:-60}" "$logs/matvec_bw" "$2" --rows "$3" >"$logs/mv.$1.log" 2>&1
  echo "status $?" >>"$logs/mv.$1.log"
  grep -E '^(device|correctness|copy|matvec|FAIL|status)' "$logs/mv.$1.log" | head -n 40
}
run default "$dir/ptx" 16
for v in "$dir"/variants/*/; do
  v=${v%/}
  name=$(basename "$v")
  run "$name" "$v" "${name%%-*}"
done
