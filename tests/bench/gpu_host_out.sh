#!/usr/bin/env bash
# gpu_host_out.sh [ROUNDS] [PARTS]: one device call (about 250 s on the
# H200) for issue 20's matrix-vector outputs written into host memory
# (TWASM_ENTRY_HOST_OUT, docs/PERFORMANCE.md "Outputs into host memory"),
# run from the repository root with build/gpu/{bin,bench} carried (`make
# gpu-apps gpu-bench-apps`).  PARTS (default "e2e ab bench whole mv", run
# in that order):
#   e2e    GPU_TEST_TIMEOUT=60 tests/gpu/e2e.sh (cpu, gpu, auto bit for bit)
#   mv     the matrix-vector harness (nvcc there), bit for bit and timed
#   ab     gpu_llm_ab.sh LLM_AB_SET=host_out, ROUNDS rounds (default 3),
#          the first two variants profiled
#   whole  where the first tokens' time goes: a traced auto run's start,
#          first launch and token times (TWASM_TRACE_TIME)
#   bench  auto against cpu on the bench programs issue 20's last run put
#          over the 5 % bar (batch16, map, mm_i8, mm_ijk), unpinned and
#          pinned to cores 2 and 3 (taskset), 5 interleaved runs each
# Writes summary.txt and logs under $OUT.  Figures, not a test.
set -u
rounds=${1:-3}
parts=${2:-e2e ab bench whole mv}
O=${OUT:-${TMPDIR:-/tmp}/twasm-host-out}
L=$(mktemp -d)
mkdir -p "$O"
S=$O/summary.txt
say() { echo "$*" | tee -a "$S"; }
has() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
{ nvidia-smi; nproc; } >"$O/machine.txt" 2>&1
t0=$(date +%s)
if has e2e; then
  say "== e2e $(date -u +%T)"
  GPU_TEST_TIMEOUT=60 timeout 100 bash tests/gpu/e2e.sh build/gpu/bin "$L/e2e" >"$O/e2e.txt" 2>&1
  say "e2e rc=$? $(tail -n 2 "$O/e2e.txt" | tr '\n' ' ')"
  grep -E '^FAIL' "$O/e2e.txt" | tee -a "$S"
fi
if has ab; then
  say "== llm A/B, $rounds rounds $(date -u +%T)"
  LLM_AB_SET=host_out LLM_AB_PROFILE_FROM=0 LLM_AB_PROFILE_COUNT=2 timeout 90 \
    bash tests/bench/gpu_llm_ab.sh build/gpu/bench "$rounds" "$L/ab" 2>&1 | tee -a "$S"
fi
if has whole; then
  say "== llm, the first tokens (auto, traced) $(date -u +%T)"
  for v in "at once|TWASM_GPU_START_MS=0" "default|X=1"; do
    say "-- ${v%%|*}"
    env TWASM_DEVICE=auto TWASM_TRACE=1 TWASM_TRACE_TIME=1 ${v#*|} timeout 60 build/gpu/bench/llm 128 >"$L/out" 2>"$L/trace"
    grep -E 'tokens/s|first' "$L/out" | tail -n 3 | tee -a "$S"
    grep -E 'gpu: (starting|driver ready|copies of)|replayed as a graph' "$L/trace" | head -n 4 | tee -a "$S"
    grep -m 3 -E 'offload .*gpu: ' "$L/trace" | tee -a "$S"
    echo "launches $(grep -c 'offload .*gpu: ' "$L/trace")" | tee -a "$S"
  done
fi
if has bench; then
  say "== auto against cpu, bench programs $(date -u +%T)"
  mkdir -p "$L/bauto" "$L/bargs"
  for p in batch16 map mm_i8 mm_ijk; do cp "build/gpu/bench/$p" "$L/bauto/"; done
  echo "65536 3" >"$L/bargs/batch16.args"
  echo "512 5" >"$L/bargs/map.args"
  echo "1024 1" >"$L/bargs/mm_i8.args"
  echo "512" >"$L/bargs/mm_ijk.args"
  cmpre='tokens:.*|check .*|checksum [0-9a-f ]+'
  say "-- unpinned"
  AUTO_CPU_COMPARE=$cmpre timeout 60 bash tests/bench/auto_cpu.sh "$L/bauto" 5 "$L/bargs" >"$O/auto_bench.md" 2>&1
  say "rc=$?"; cat "$O/auto_bench.md" >>"$S"
  say "-- pinned to cores 2,3"
  AUTO_CPU_COMPARE=$cmpre timeout 60 taskset -c 2,3 bash tests/bench/auto_cpu.sh "$L/bauto" 5 "$L/bargs" \
    >"$O/auto_bench_pinned.md" 2>&1
  say "rc=$?"; cat "$O/auto_bench_pinned.md" >>"$S"
  for p in map mm_i8 mm_ijk batch16; do
    echo "-- $p" >>"$O/bench_traces.txt"
    read -r -a a <"$L/bargs/$p.args"
    TWASM_DEVICE=auto TWASM_TRACE=1 TWASM_TRACE_TIME=1 timeout 20 "$L/bauto/$p" "${a[@]}" 2>&1 |
      grep -E 'gpu: |offload .*(gpu:|cost model)|GB/s|TFLOP|us' | head -n 20 >>"$O/bench_traces.txt"
  done
fi
if has mv; then
  say "== matvec harness $(date -u +%T)"
  if nvcc -O2 -Xcompiler -ffp-contract=off -o "$L/matvec_bw" tests/gpu/matvec/matvec_bw.cu -lcuda >"$O/nvcc.log" 2>&1; then
    timeout 40 "$L/matvec_bw" build/gpu/bench/matvec/ptx >"$O/matvec_bw.log" 2>&1
    say "matvec_bw rc=$?"
    grep -E '^(device|correctness|copy|matvec|FAIL)' "$O/matvec_bw.log" | head -n 30 | tee -a "$S"
  else
    say "matvec_bw: nvcc failed (nvcc.log)"
  fi
fi
say "== done $(date -u +%T), $(($(date +%s) - t0)) s"
rm -rf "$L"
