#!/usr/bin/env bash
# round2.sh ROUND_DIR LOG_DIR: matrix-vector round 11 on the GPU machine
# (docs/PERFORMANCE.md, "Matrix-vector round 11").  ROUND_DIR is what
# `make gpu-mv-round2` wrote here (build/gpu/mv-round2: ptx/ the committed
# kernel's PTX, variants/16-16384-4-pdl/ the committed body with
# PTX_MV_PDL); carry it.  Builds matvec_bw.cu with nvcc, then runs both
# kernels with --sweep --floor in four launch modes: stream (back to
# back), --pdl (programmatic stream serialization), --graph (64 launches
# as one CUDA graph, as the runtime replays them) and --graph --pdl
# (programmatic edges between the graph's kernel nodes).  Full logs
# LOG_DIR/mv.NAME.MODE.log; LOG_DIR/summary.txt (also printed) as
# round.sh's (digest.awk).  A run is killed after MV_LIMIT seconds
# (default 25), no run starts after MV_BUDGET seconds (default 95), so the
# whole fits in 120 s.
set -u
dir=${1:?usage: round2.sh ROUND_DIR LOG_DIR}
logs=${2:?usage: round2.sh ROUND_DIR LOG_DIR}
here=$(cd "$(dirname "$0")" && pwd)
budget=${MV_BUDGET:-95}
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

run() {  # run NAME PTX_DIR ROWS MODE [FLAGS...]
  local name=$1 ptx=$2 rows=$3 mode=$4
  shift 4
  if ((SECONDS - start > budget)); then
    echo "== $name $mode: not run (past ${budget} s)" | tee -a "$summary"
    return
  fi
  local t0=$SECONDS log=$logs/mv.$name.$mode.log
  timeout "${MV_LIMIT:-25}" "$logs/matvec_bw" "$ptx" --rows "$rows" --sweep --floor "$@" >"$log" 2>&1
  echo "status $?" >>"$log"
  {
    echo "== $name $mode (--rows $rows $*; $((SECONDS - t0)) s)"
    awk -f "$here/digest.awk" "$log"
  } | tee -a "$summary"
}

kernels=("committed $dir/ptx 16")  # NAME PTX_DIR ROWS
for v in "$dir"/variants/*/; do
  v=${v%/}
  name=$(basename "$v")
  kernels+=("$name $v ${name%%-*}")
done
first=1
for mode in stream pdl graph graph-pdl; do
  case $mode in
    stream) flags=() ;;
    pdl) flags=(--pdl) ;;
    graph) flags=(--graph) ;;
    graph-pdl) flags=(--graph --pdl) ;;
  esac
  for k in "${kernels[@]}"; do
    set -- $k
    run "$1" "$2" "$3" "$mode" ${flags[@]+"${flags[@]}"}
    if ((first)); then
      grep -m1 '^device' "$logs/mv.committed.stream.log" | tee -a "$summary"
      first=0
    fi
  done
done
echo "total $((SECONDS - start)) s" | tee -a "$summary"
