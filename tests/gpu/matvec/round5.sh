#!/usr/bin/env bash
# round5.sh ROUND_DIR LOG_DIR: matrix-vector round 14 on the GPU machine
# (docs/PERFORMANCE.md, "Matrix-vector round 14").  ROUND_DIR is what
# `make gpu-mv-round5` wrote here (build/gpu/mv-round5: chain.ptx, round
# 13's kernels and chain_pipe.py's variants with W and/or v in registers
# loaded ahead; ptx/ the committed kernels); carry it.
#  1. SASS: chain.ptx and the committed mv_f32 through ptxas for sm_90
#     with -v (each kernel's registers and spills), sass_ctl.py on each
#     chunk kernel, and with cuobjdump the SASS (LOG_DIR/chain.sass.gz).
#  2. chain_bw DIR 2048 pipe (nvcc): references (chain_fadd, chain_muladd,
#     chain_f32, chain_f32_st) and each variant at 1 warp (no staging)
#     and at 8 warps, warp 0 summing, with the staging and the barrier;
#     cycles a term by clock64 and by events; every sum checked.
#  3. matvec_bw --time --sweep on the committed kernel (stream launches),
#     the real kernel's slope in the same call, for reference.
# Few files come back: LOG_DIR/summary.txt (also printed), LOG_DIR/log.txt
# (every full log, one after the other), LOG_DIR/chain.sass.gz.  Each run
# is killed after MV_LIMIT seconds (default 30); expected 20-30 s in all.
set -u
dir=${1:?usage: round5.sh ROUND_DIR LOG_DIR}
logs=${2:?usage: round5.sh ROUND_DIR LOG_DIR}
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
      grep -A3 "Compiling entry function 'chain_f32" "$log" | grep -o "function '[a-z_0-9]*'\|Used [0-9]* registers\|[0-9]* bytes spill stores" |
        paste -d' ' - - - | sed "s/^function /registers /"
      for k in chain_f32 chain_f32_st chain_f32_w chain_f32_wg chain_f32_wg4 chain_f32_v chain_f32_wv chain_f32_wgv; do
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
timeout "$limit" "$work/chain_bw" "$dir" 2048 pipe >"$work/chain.log" 2>&1
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
