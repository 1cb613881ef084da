#!/usr/bin/env bash
# round4.sh ROUND_DIR LOG_DIR: matrix-vector round 13 on the GPU machine
# (docs/PERFORMANCE.md, "Matrix-vector round 13").  ROUND_DIR is what
# `make gpu-mv-round4` wrote here (build/gpu/mv-round4: chain.ptx, the
# committed mv_f32's whole chunk in a loop of its own and the register
# chains, by chain_gen.py; ptx/ the committed kernels); carry it.
#  1. SASS: chain.ptx and the committed mv_f32 through ptxas for sm_90,
#     sass_ctl.py on each kernel (the encoded cycles a term of the chunk
#     in the microbenchmark against the committed kernel's), and with
#     cuobjdump the chain kernels' SASS (LOG_DIR/chain.sass.gz).
#  2. chain_bw (nvcc): every chain kernel, 1-16 warps an SM, cycles a term
#     by clock64 and by events; every sum checked.
#  3. matvec_bw --time --sweep on the committed kernel (stream launches),
#     the real kernel's slope in the same call, for reference.
# Few files come back: LOG_DIR/summary.txt (also printed), LOG_DIR/log.txt
# (every full log, one after the other), LOG_DIR/chain.sass.gz.  Each run
# is killed after MV_LIMIT seconds (default 30); expected 20-30 s in all.
set -u
dir=${1:?usage: round4.sh ROUND_DIR LOG_DIR}
logs=${2:?usage: round4.sh ROUND_DIR LOG_DIR}
here=$(cd "$(dirname "$0")" && pwd)
limit=${MV_LIMIT:-30}
start=$SECONDS
mkdir -p "$logs"
summary=$logs/summary.txt
log=$logs/log.txt
: >"$summary"
: >"$log"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
section() { echo "===== $* ($((SECONDS - start)) s)" >>"$log"; }

# 1. SASS
ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
section "ptxas -arch=sm_90 -v"
if "$ptxas" -arch=sm_90 -v "$dir/chain.ptx" -o "$work/chain.cubin" >>"$log" 2>&1 &&
   "$ptxas" -arch=sm_90 -v "$dir/ptx/mv_f32.ptx" -o "$work/mv_f32.cubin" >>"$log" 2>&1; then
  if command -v python3 >/dev/null 2>&1 && command -v readelf >/dev/null 2>&1; then
    {
      python3 "$here/sass_ctl.py" "$work/mv_f32.cubin" mv_f32 | sed 's/^/committed /'
      for k in chain_f32 chain_f32_st chain_fadd chain_fmuladd chain_muladd; do
        python3 "$here/sass_ctl.py" "$work/chain.cubin" $k
      done
    } | tee -a "$summary" >>"$log"
  else
    echo "sass: no python3 or readelf" | tee -a "$summary"
  fi
  dis=$(command -v cuobjdump || ls /usr/local/cuda/bin/cuobjdump 2>/dev/null)
  if [ -n "$dis" ]; then
    "$dis" -sass "$work/chain.cubin" 2>&1 | gzip >"$logs/chain.sass.gz"
  else
    echo "sass: no cuobjdump (the SASS text not kept)" | tee -a "$summary"
  fi
else
  echo "sass: ptxas failed (log.txt)" | tee -a "$summary"
fi

# 2. the chains
section "nvcc"
for tool in chain_bw matvec_bw; do
  if ! nvcc -O2 -Xcompiler -ffp-contract=off -o "$work/$tool" "$here/$tool.cu" -lcuda >>"$log" 2>&1; then
    echo "$tool: nvcc failed (log.txt)" | tee -a "$summary"
    tail -n 20 "$log"
    exit 1
  fi
done
echo "nvcc: $(nvcc --version | tail -n 1), $((SECONDS - start)) s" | tee -a "$summary"
section "chain_bw $dir"
timeout "$limit" "$work/chain_bw" "$dir" >"$work/chain.log" 2>&1
echo "status $?" >>"$work/chain.log"
cat "$work/chain.log" >>"$log"
{
  grep -v '^row |' "$work/chain.log"
  echo
  echo "| kernel | warps | summing | lanes | mode | clock64, cycles a term | events at 1,980 MHz | sums |"
  echo "|---|---:|---:|---:|---:|---:|---:|---|"
  grep '^row |' "$work/chain.log" | sed 's/^row //'
  echo "chain_bw: $((SECONDS - start)) s"
} | tee -a "$summary"

# 3. the committed kernel, for reference
section "matvec_bw $dir/ptx --time --sweep"
timeout "$limit" "$work/matvec_bw" "$dir/ptx" --time --sweep >"$work/mv.log" 2>&1
echo "status $?" >>"$work/mv.log"
cat "$work/mv.log" >>"$log"
{
  echo "== committed mv_f32, stream (--time --sweep)"
  awk -v row="committed, stream" -f "$here/digest.awk" "$work/mv.log" | grep -v '^row |'
} | tee -a "$summary"
echo "total $((SECONDS - start)) s" | tee -a "$summary"
