#!/usr/bin/env bash
# gpu_round5.sh CARRY OUT: issue 20, round 5, on the GPU machine, from a
# carried folder (binaries built on the build machine):
#   CARRY/bench/matvec/{ptx,variants}  the matrix-vector harness's PTX
#   CARRY/bench/llm, llm.before        the LLM-style program, this kernel and the one before
#   CARRY/bin                          e2e programs (the ones with a matrix-vector kernel)
#   CARRY/tests/...                    this branch's scripts and the e2e sources
# Runs, each part under its own limit, logs under OUT: the harness on every
# variant, the e2e programs, the LLM rounds (gpu_llm_rounds.sh), quant in
# cpu and auto (traced once, then timed interleaved, pinned).
set -u
c=${1:?usage: gpu_round5.sh CARRY OUT}
o=${2:?usage: gpu_round5.sh CARRY OUT}
mkdir -p "$o"
s=$o/summary.txt
say() { echo "$*" | tee -a "$s"; }
say "== $(date -u +%H:%M:%S) device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -n 1)"
if [ "${R5_MV:-1}" = 1 ]; then
  say "== matvec variants"
  timeout "${R5_MV_LIMIT:-110}" bash "$c/tests/gpu/matvec/variants.sh" "$c/bench/matvec" "$o/mv" 2>&1 | tee -a "$s"
fi
if [ "${R5_E2E:-1}" = 1 ]; then
  say "== $(date -u +%H:%M:%S) e2e"
  GPU_TEST_TIMEOUT=60 timeout "${R5_E2E_LIMIT:-60}" bash "$c/tests/gpu/e2e.sh" "$c/bin" "$o/e2e" >"$o/e2e.txt" 2>&1
  say "e2e status $?: $(grep -c '^PASS' "$o/e2e.txt") passed, $(grep -c '^FAIL' "$o/e2e.txt") failed"
  grep -E '^(FAIL|SKIP)' "$o/e2e.txt" | tee -a "$s"
fi
if [ "${R5_LLM:-1}" = 1 ]; then
  say "== $(date -u +%H:%M:%S) llm rounds"
  TWASM_DEVICE=auto TWASM_GPU_START_MS=0 timeout 30 "$c/bench/llm" 8 >/dev/null 2>&1  # the driver's JIT cache
  timeout "${R5_LLM_LIMIT:-80}" bash "$c/tests/bench/gpu_llm_rounds.sh" "$c/bench/llm" "${R5_ROUNDS:-3}" "$o/llm" \
    "$c/bench/llm.before" 2>&1 | tee -a "$s"
fi
if [ "${R5_QUANT:-1}" = 1 ] && [ -x "$c/bin/quant" ]; then
  say "== $(date -u +%H:%M:%S) quant"
  TWASM_DEVICE=auto TWASM_TRACE=1 TWASM_GPU_PROFILE=1 timeout 20 "$c/bin/quant" >"$o/quant.auto.out" 2>"$o/quant.auto.trace"
  grep -E 'gpu|start|cpu:' "$o/quant.auto.trace" | head -n 30 | tee -a "$s"
  for r in 1 2 3 4 5; do
    for m in cpu auto; do
      t0=$(date +%s%N)
      TWASM_DEVICE=$m taskset -c 2,3 timeout 20 "$c/bin/quant" >/dev/null 2>&1
      t1=$(date +%s%N)
      echo "quant $m round $r: $(((t1 - t0) / 1000000)) ms"
    done
  done | tee -a "$s"
fi
if [ "${R5_NSYS:-1}" = 1 ]; then
  # the products' kernel times inside the program (nsys, where installed)
  n=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -n 1)
  if [ -n "$n" ]; then
    say "== $(date -u +%H:%M:%S) nsys ($n)"
    TWASM_DEVICE=auto timeout "${R5_NSYS_LIMIT:-60}" "$n" profile -t cuda -o "$o/llm_nsys" -f true \
      "$c/bench/llm" 128 >"$o/nsys.out" 2>&1
    timeout 40 "$n" stats -q -r cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,cuda_api_sum -f csv \
      "$o/llm_nsys.nsys-rep" >"$o/nsys_stats.csv" 2>&1
    head -c 6000 "$o/nsys_stats.csv" | tee -a "$s"
  else
    say "nsys: not installed"
  fi
fi
say "== $(date -u +%H:%M:%S) done"
