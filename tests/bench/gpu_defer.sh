#!/usr/bin/env bash
# gpu_defer.sh [ROUNDS] [PARTS]: one device call (about 250 s on the H200)
# for issue 20's launches not waited for (TWASM_GPU_DEFER, runtime/
# rt_defer.c) and the start's count of repeated products
# (TWASM_GPU_START_COUNT), run from a directory holding bin/ and bench/
# (build/gpu/{bin,bench}, `make gpu-apps gpu-bench-apps`) and tests/.
# PARTS (default "e2e gpu ab whole bench", in that order):
#   e2e    GPU_TEST_TIMEOUT=60 tests/gpu/e2e.sh (cpu, gpu, auto bit for bit)
#   gpu    TWASM_DEVICE=gpu llm 16 (every nest launched, the CPU's nests
#          between them) and auto llm 128 with and without deferral: token
#          ids against the cpu run's
#   ab     gpu_llm_ab.sh LLM_AB_SET=defer, ROUNDS rounds (default 3), the
#          first two variants profiled
#   whole  traced auto runs: when the start begins and is ready, launches
#          not waited for and the waits at faults
#   bench  batch16 auto against cpu (5 interleaved runs, auto_cpu.sh), at
#          the start's count and with TWASM_GPU_START_COUNT=model
# E2E_LIMIT: seconds for the e2e part (default 110).
# Writes summary.txt and logs under $OUT.  Figures, not a test.
set -u
rounds=${1:-3}
parts=${2:-e2e gpu ab whole bench}
O=${OUT:-${TMPDIR:-/tmp}/twasm-defer}
L=$(mktemp -d)
mkdir -p "$O"
S=$O/summary.txt
say() { echo "$*" | tee -a "$S"; }
has() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
{ nvidia-smi; nproc; } >"$O/machine.txt" 2>&1
t0=$(date +%s)
ids() { grep '^tokens:' "$1" | cut -d' ' -f2-$(($2 + 1)); }
if has e2e; then
  say "== e2e $(date -u +%T)"
  GPU_TEST_TIMEOUT=60 timeout "${E2E_LIMIT:-110}" bash tests/gpu/e2e.sh bin "$L/e2e" >"$O/e2e.txt" 2>&1
  say "e2e rc=$? $(tail -n 2 "$O/e2e.txt" | tr '\n' ' ')"
  grep -E '^FAIL' "$O/e2e.txt" | tee -a "$S"
fi
if has gpu; then
  say "== llm ids $(date -u +%T)"
  TWASM_DEVICE=cpu timeout 30 bench/llm 16 >"$L/cpu16" 2>&1
  TWASM_DEVICE=gpu TWASM_GPU_PROFILE=1 timeout 60 bench/llm 16 >"$L/gpu16" 2>&1
  say "gpu 16: $( [ "$(ids "$L/cpu16" 16)" = "$(ids "$L/gpu16" 16)" ] && echo same || echo 'IDS DIFFER') $(grep 'tokens/s' "$L/gpu16" | tail -n 1)"
  grep -E 'profile: (.*launches|launches not|wait for them)' "$L/gpu16" | tee -a "$S"
fi
if has ab; then
  say "== llm A/B, $rounds rounds $(date -u +%T)"
  LLM_AB_SET=defer LLM_AB_PROFILE_FROM=0 LLM_AB_PROFILE_COUNT=2 timeout 120 \
    bash tests/bench/gpu_llm_ab.sh bench "$rounds" "$L/ab" 2>&1 | tee -a "$S"
fi
if has whole; then
  say "== llm, traced (auto) $(date -u +%T)"
  for v in "at once|TWASM_GPU_START_MS=0" "at once, not waited for|TWASM_GPU_START_MS=0 TWASM_GPU_DEFER=1" "default|X=1" \
    "default, start by the model|TWASM_GPU_START_COUNT=model"; do
    say "-- ${v%%|*}"
    env TWASM_DEVICE=auto TWASM_TRACE=1 TWASM_TRACE_TIME=1 ${v#*|} timeout 60 bench/llm 128 >"$L/out" 2>"$L/trace"
    grep -E 'tokens/s' "$L/out" | tail -n 1 | tee -a "$S"
    grep -E 'gpu: (starting|driver ready)' "$L/trace" | head -n 2 | tee -a "$S"
    grep -m 1 -E 'offload .*gpu: ' "$L/trace" | tee -a "$S"
    echo "launches $(grep -c 'offload .*gpu: ' "$L/trace"), not waited for $(grep -c 'not waited for' "$L/trace")" | tee -a "$S"
  done
fi
if has bench; then
  say "== batch16 auto against cpu $(date -u +%T)"
  mkdir -p "$L/bauto" "$L/bargs"
  cp bench/batch16 "$L/bauto/"
  echo "65536 3" >"$L/bargs/batch16.args"
  AUTO_CPU_COMPARE='check .*|checksum [0-9a-f ]+' timeout 50 bash tests/bench/auto_cpu.sh "$L/bauto" 5 "$L/bargs" \
    >"$O/auto_bench.md" 2>&1
  say "rc=$?"; cat "$O/auto_bench.md" >>"$S"
  say "-- TWASM_GPU_START_COUNT=model (the start's count before)"
  TWASM_GPU_START_COUNT=model AUTO_CPU_COMPARE='check .*|checksum [0-9a-f ]+' timeout 50 \
    bash tests/bench/auto_cpu.sh "$L/bauto" 5 "$L/bargs" >"$O/auto_bench_model.md" 2>&1
  say "rc=$?"; cat "$O/auto_bench_model.md" >>"$S"
  TWASM_DEVICE=auto TWASM_TRACE=1 TWASM_TRACE_TIME=1 timeout 20 "$L/bauto/batch16" 65536 3 2>&1 |
    grep -E 'gpu: |offload .*(gpu:|cost model)' | head -n 12 >>"$S"
fi
say "== done $(date -u +%T), $(($(date +%s) - t0)) s"
rm -rf "$L"
