#!/usr/bin/env bash
# gpu_llm.sh BIN_DIR [LOG_DIR]: the LLM-style benchmark (BIN_DIR/llm, from
# tests/bench/gpu/llm.c, `make gpu-bench-apps`) at transformer-110M shapes
# under TWASM_DEVICE=cpu, gpu and auto, LLM_TOKENS tokens each (default
# 16), untraced: tokens/s, the launches (counted in a traced run), and
# whether the three printed the same token ids; then,
# where nvcc is installed and BIN_DIR/matvec/ptx holds the generated PTX,
# tests/gpu/matvec/matvec_bw.cu: the exact matrix-vector kernel checked
# bit for bit and timed at the transformer's shapes against the copy
# bandwidth of the same process.  Prints one markdown table; gpu.sh runs
# it too.  Figures, not tests: a failed run shows as "-".
set -u
bin=${1:?usage: gpu_llm.sh BIN_DIR [LOG_DIR]}
logs=${2:-${TMPDIR:-/tmp}/twasm-gpu-llm}
limit=${GPU_BENCH_TIMEOUT:-240}
tokens=${LLM_TOKENS:-16}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$logs"
rows=()

# fig FILE PATTERN: the number just before PATTERN in FILE ("-" if none).
fig() {
  local v
  v=$(grep -o -E "[0-9.e+-]+ $2" "$1" 2>/dev/null | head -n 1 | cut -d' ' -f1)
  echo "${v:--}"
}

launches() { grep -c -E '^twasm: offload [^ ]+( \([a-z]+\))?: gpu' "$1" 2>/dev/null || true; }

# The timed runs are not traced: a trace turns off auto mode's quick
# answer and plans every call (it halved auto's tokens/s over the second
# half in the runs of 30 Nov 2026).  The launches are counted in one more
# run of each GPU mode, traced, whose time is not reported.
for mode in cpu gpu auto; do
  log=$logs/llm.$mode.log
  t0=$(date +%s.%N)
  env -u TWASM_TRACE TWASM_DEVICE=$mode timeout "$limit" "$bin/llm" "$tokens" >"$log" 2>"$log.err" ||
    echo "run failed: llm $tokens (TWASM_DEVICE=$mode, status $?)" >>"$log"
  t1=$(date +%s.%N)
  [ "$mode" = cpu ] || TWASM_DEVICE=$mode TWASM_TRACE=1 timeout "$limit" "$bin/llm" "$tokens" \
    >"$log.traced" 2>"$log.err" || echo "traced run failed: llm $tokens (TWASM_DEVICE=$mode)" >>"$log"
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
  after=$(grep -o -E '\([0-9.]+ after the first' "$log" | grep -o -E '[0-9.]+' | head -n 1)
  late=$(grep -o -E '[0-9.]+ over the last [0-9]+' "$log" | cut -d' ' -f1 | head -n 1)
  rows+=("| llm 110M, $tokens tokens, $mode | $(fig "$log" tokens/s) | ${after:--} | ${late:--} | $(fig "$log" 'ms, ') ms | $wall s | $(launches "$log.err") |")
done
same=yes
for mode in gpu auto; do
  if ! grep -q '^tokens:' "$logs/llm.cpu.log" ||
     ! cmp -s <(grep '^tokens:' "$logs/llm.cpu.log") <(grep '^tokens:' "$logs/llm.$mode.log"); then
    same="NO: $mode differs from cpu"
  fi
done

echo "| run | tokens/s | tokens/s after the first | tokens/s, second half | first token | whole process | launches |"
echo "|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "Token ids identical in cpu, gpu and auto: $same ($(grep '^tokens:' "$logs/llm.cpu.log" 2>/dev/null | cut -c1-80))"

if command -v nvcc >/dev/null && [ -d "$bin/matvec/ptx" ]; then
  if nvcc -O2 -Xcompiler -ffp-contract=off -o "$logs/matvec_bw" "$here/../gpu/matvec/matvec_bw.cu" -lcuda \
      >"$logs/nvcc.log" 2>&1; then
    timeout "$limit" "$logs/matvec_bw" "$bin/matvec/ptx" >"$logs/matvec_bw.log" 2>&1
    echo "matvec_bw status $?" >>"$logs/matvec_bw.log"
  else
    echo "matvec_bw: nvcc failed (see $logs/nvcc.log)"
  fi
  echo
  grep -E '^(device|correctness|copy|matvec|FAIL)' "$logs/matvec_bw.log"
fi
echo "Logs: $logs"
