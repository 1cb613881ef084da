#!/usr/bin/env bash
# integration.sh CARRY_DIR: the device run made after merging (issue 20's
# figures in one call, about 200 s on the H200).  CARRY_DIR holds copies
# of tests/gpu/{e2e.sh,e2e}, tests/bench/{gpu_llm.sh,auto_cpu.sh,start.sh,
# gpu}, tests/gpu/matvec, build/gpu/{bin,bench,start} (make gpu-apps
# gpu-bench-apps gpu-start-apps; bench/launch.no-offload by twasmc
# --no-offload), bauto/ (the bench programs) and bargs/NAME.args.  Writes
# summary.txt and one file per part under $OUT.  Figures, not a test.
set -u
D=${1:?usage: integration.sh CARRY_DIR}; O=${OUT:?}; L=/tmp/L; mkdir -p "$L"
S=$O/summary.txt
say() { echo "$*" | tee -a $S; }
{ nvidia-smi; nproc; } >$O/machine.txt 2>&1
t0=$(date +%s)
say "== e2e $(date -u +%T)"
GPU_TEST_TIMEOUT=60 timeout 300 bash $D/tests/gpu/e2e.sh $D/build/gpu/bin $L/e2e >$O/e2e.txt 2>&1; say "e2e rc=$? $(tail -n 2 $O/e2e.txt | tr '\n' ' ')"
grep -E '^FAIL' $O/e2e.txt | tee -a $S
say "== llm 128 tokens cpu/gpu/auto + matvec $(date -u +%T)"
LLM_TOKENS=128 GPU_BENCH_TIMEOUT=120 timeout 150 bash $D/tests/bench/gpu_llm.sh $D/build/gpu/bench $L/llm >$O/llm.md 2>&1; say "gpu_llm rc=$?"; cat $O/llm.md >>$S
say "== llm auto START_MS=0, 128 tokens $(date -u +%T)"
TWASM_DEVICE=auto TWASM_GPU_START_MS=0 timeout 60 $D/build/gpu/bench/llm 128 2>&1 | tail -4 | tee -a $S
say "== auto vs cpu, e2e programs (3 runs) $(date -u +%T)"
timeout 90 bash $D/tests/bench/auto_cpu.sh $D/build/gpu/bin 3 $D/tests/gpu/e2e >$O/auto_e2e.md 2>&1; say "auto_cpu e2e rc=$?"; grep -E 'over|FAIL|differ' $O/auto_e2e.md | head -20 | tee -a $S
say "== auto vs cpu, bench programs (3 runs) $(date -u +%T)"
AUTO_CPU_COMPARE='tokens:.*|check .*|checksum [0-9a-f ]+' timeout 120 bash $D/tests/bench/auto_cpu.sh $D/bauto 3 $D/bargs >$O/auto_bench.md 2>&1; say "auto_cpu bench rc=$?"; cat $O/auto_bench.md >>$S
say "== start-up (10 runs) $(date -u +%T)"
timeout 45 bash $D/tests/bench/start.sh $D/build/gpu/start 10 >$O/start.md 2>&1; say "start rc=$?"; cat $O/start.md >>$S
say "== tiny loop $(date -u +%T)"
for i in 1 2 3; do for m in cpu auto; do echo "$m $(TWASM_DEVICE=$m timeout 30 $D/build/gpu/bench/launch 32 1000000 2>&1 | grep 'per call')"; done; echo "no-offload $(timeout 30 $D/build/gpu/bench/launch.no-offload 32 1000000 2>&1 | grep 'per call')"; done | tee -a $S
say "== done $(date -u +%T), $(( $(date +%s) - t0 )) s"
