#!/usr/bin/env bash
# round.sh ROUND_DIR LOG_DIR: matrix-vector round 10 on the GPU machine
# (docs/PERFORMANCE.md, "Matrix-vector round 10").  ROUND_DIR is what
# `make gpu-mv-round` wrote here (build/gpu/mv-round: ptx/ the committed
# kernel's PTX, variants/NAME/ each variant's); carry it.  Builds
# matvec_bw.cu with nvcc, then runs the committed kernel and every variant:
# correctness (every output bit-identical to the CPU loop), the timings,
# `--sweep` (K 256-8192 at 768 and 2112 outputs) and `--floor` (the empty
# kernel and K 0/4/64); a variant whose name has `pdl` runs again with
# `--pdl`.  Full logs: LOG_DIR/mv.NAME.log; LOG_DIR/summary.txt (also
# printed): per run the correctness line, the floor lines, each shape's
# time and share of copy, and the sweep's slope (2048 -> 8192, ns and
# cycles at 1.98 GHz a term) and intercept at K 0.  A run is killed after
# MV_LIMIT seconds (default 40: a variant that hangs), and no run starts
# after MV_BUDGET seconds (default 250), so the whole fits in 300 s.
set -u
dir=${1:?usage: round.sh ROUND_DIR LOG_DIR}
logs=${2:?usage: round.sh ROUND_DIR LOG_DIR}
here=$(cd "$(dirname "$0")" && pwd)
budget=${MV_BUDGET:-250}
start=$SECONDS
mkdir -p "$logs"
summary=$logs/summary.txt
: >"$summary"
if ! nvcc -O2 -Xcompiler -ffp-contract=off -o "$logs/matvec_bw" "$here/matvec_bw.cu" -lcuda >"$logs/nvcc.log" 2>&1; then
  echo "matvec_bw: nvcc failed ($logs/nvcc.log)" | tee -a "$summary"
  tail -n 20 "$logs/nvcc.log"
  exit 1
fi
echo "nvcc: $(nvcc --version | tail -n 1), $((SECONDS - start)) s" | tee -a "$summary"

# The summary of one log (digest.awk).
digest() { awk -f "$here/digest.awk" "$1"; }

run() {  # run NAME PTX_DIR ROWS [FLAGS...]
  local name=$1 ptx=$2 rows=$3
  shift 3
  if ((SECONDS - start > budget)); then
    echo "== $name: not run (past ${budget} s)" | tee -a "$summary"
    return
  fi
  local t0=$SECONDS
  timeout "${MV_LIMIT:-40}" "$logs/matvec_bw" "$ptx" --rows "$rows" --sweep --floor "$@" >"$logs/mv.$name.log" 2>&1
  echo "status $?" >>"$logs/mv.$name.log"
  {
    echo "== $name (--rows $rows $*; $((SECONDS - t0)) s)"
    digest "$logs/mv.$name.log"
  } | tee -a "$summary"
}

run committed "$dir/ptx" 16
grep -m1 '^device' "$logs/mv.committed.log" | tee -a "$summary"
for v in "$dir"/variants/*/; do
  v=${v%/}
  name=$(basename "$v")
  run "$name" "$v" "${name%%-*}"
  case $name in *pdl*) run "$name.pdl" "$v" "${name%%-*}" --pdl ;; esac
done
echo "total $((SECONDS - start)) s" | tee -a "$summary"
