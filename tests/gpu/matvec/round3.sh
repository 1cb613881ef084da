#!/usr/bin/env bash
# round3.sh ROUND_DIR LOG_DIR: matrix-vector round 12 on the GPU machine
# (docs/PERFORMANCE.md, "Matrix-vector round 12").  ROUND_DIR is what
# `make gpu-mv-round3` wrote here (build/gpu/mv-round3: ptx/ the committed
# kernel's PTX, variants/NAME/ the variants of MV_ROUND3); carry it.
#  1. SASS: each kernel's mv_f32 assembled by ptxas for sm_90 and
#     disassembled (cuobjdump -sass, else nvdisasm -hex; else a line says
#     neither is there); sass.awk prints the summing block's instructions
#     a term and the stall cycles its control bits encode (LOG_DIR/sass/);
#     sass_ctl.py reads the same from the cubin itself (no disassembler),
#     with how far ahead of their use the shared loads issue.
#  2. matvec_bw (nvcc) with --sweep --floor on every kernel, first with
#     --graph --pdl (programmatic edges, as round 11's best), then as
#     stream launches.  Full logs LOG_DIR/mv.NAME.MODE.log.
# LOG_DIR/summary.txt (also printed): the SASS digest, each run's digest
# (digest.awk) and a table, one row a run: correct, chain, 2048x768,
# 768x2048 (us, % of copy), the sweep's slope at 768 / 2112 outputs in
# cycles a term at 1.98 GHz.  A run is killed after MV_LIMIT seconds
# (default 15), none starts after MV_BUDGET seconds (default 110): the whole
# fits in 130 s.
set -u
dir=${1:?usage: round3.sh ROUND_DIR LOG_DIR}
logs=${2:?usage: round3.sh ROUND_DIR LOG_DIR}
here=$(cd "$(dirname "$0")" && pwd)
budget=${MV_BUDGET:-110}
start=$SECONDS
mkdir -p "$logs/sass"
summary=$logs/summary.txt
: >"$summary"

kernels=("committed $dir/ptx 16")  # NAME PTX_DIR ROWS
for v in "$dir"/variants/*/; do
  v=${v%/}
  name=$(basename "$v")
  kernels+=("$name $v ${name%%-*}")
done

# 1. SASS of each kernel's mv_f32 (sm_90)
ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
dis=""
if command -v cuobjdump >/dev/null 2>&1; then dis="cuobjdump -sass"
elif [ -x /usr/local/cuda/bin/cuobjdump ]; then dis="/usr/local/cuda/bin/cuobjdump -sass"
elif command -v nvdisasm >/dev/null 2>&1; then dis="nvdisasm -hex"
elif [ -x /usr/local/cuda/bin/nvdisasm ]; then dis="/usr/local/cuda/bin/nvdisasm -hex"
fi
echo "sass: disassembler ${dis:-none (neither cuobjdump nor nvdisasm)}" | tee -a "$summary"
for k in "${kernels[@]}"; do
  set -- $k
  cubin=$logs/sass/$1.cubin
  if ! "$ptxas" -arch=sm_90 -v "$2/mv_f32.ptx" -o "$cubin" >"$logs/sass/$1.ptxas.log" 2>&1; then
    echo "== sass $1: ptxas failed" | tee -a "$summary"
    continue
  fi
  grep -o 'Used [0-9]* registers.*' "$logs/sass/$1.ptxas.log" | sed "s/^/== sass $1: /" | tee -a "$summary"
  if command -v python3 >/dev/null 2>&1 && command -v readelf >/dev/null 2>&1; then
    python3 "$here/sass_ctl.py" "$cubin" mv_f32 | tee -a "$summary"
  fi
  [ -n "$dis" ] || continue
  $dis "$cubin" >"$logs/sass/$1.sass" 2>&1
  awk -v show=48 -f "$here/sass.awk" "$logs/sass/$1.sass" >"$logs/sass/$1.digest"
  head -n 2 "$logs/sass/$1.digest" | tee -a "$summary"
  gzip -f "$logs/sass/$1.sass"
  rm -f "$cubin" "$logs/sass/$1.ptxas.log"  # fewer files to fetch; the SASS is kept
done
echo "sass: $((SECONDS - start)) s" | tee -a "$summary"

# 2. timings
if ! nvcc -O2 -Xcompiler -ffp-contract=off -o "$logs/matvec_bw" "$here/matvec_bw.cu" -lcuda >"$logs/nvcc.log" 2>&1; then
  echo "matvec_bw: nvcc failed ($logs/nvcc.log)" | tee -a "$summary"
  tail -n 20 "$logs/nvcc.log"
  exit 1
fi
echo "nvcc: $(nvcc --version | tail -n 1), $((SECONDS - start)) s" | tee -a "$summary"
rows=$logs/rows.txt
: >"$rows"
run() {  # run NAME PTX_DIR ROWS MODE [FLAGS...]
  local name=$1 ptx=$2 nrows=$3 mode=$4
  shift 4
  if ((SECONDS - start > budget)); then
    echo "== $name $mode: not run (past ${budget} s)" | tee -a "$summary"
    return
  fi
  local t0=$SECONDS log=$logs/mv.$name.$mode.log
  timeout "${MV_LIMIT:-15}" "$logs/matvec_bw" "$ptx" --rows "$nrows" --sweep --floor "$@" >"$log" 2>&1
  echo "status $?" >>"$log"
  {
    echo "== $name $mode (--rows $nrows $*; $((SECONDS - t0)) s)"
    awk -v row="$name, $mode" -f "$here/digest.awk" "$log" | tee -a "$rows" | grep -v '^row |'
  } | tee -a "$summary"
}
first=1
for mode in graph-pdl stream; do
  case $mode in
    graph-pdl) flags=(--graph --pdl) ;;
    stream) flags=() ;;
  esac
  for k in "${kernels[@]}"; do
    set -- $k
    run "$1" "$2" "$3" "$mode" ${flags[@]+"${flags[@]}"}
    if ((first)); then
      grep -m1 '^device' "$logs/mv.committed.$mode.log" | tee -a "$summary"
      first=0
    fi
  done
done
{
  echo
  echo "| kernel, mode | correct | chain | 2048x768 us (% copy) | 768x2048 | slope 768 / 2112, cycles a term |"
  echo "|---|---|---|---:|---:|---:|"
  grep '^row |' "$rows" | sed 's/^row //'
} | tee -a "$summary"
echo "total $((SECONDS - start)) s" | tee -a "$summary"
