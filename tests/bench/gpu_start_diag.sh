#!/usr/bin/env bash
# gpu_start_diag.sh DIR: what the start of the GPU costs the thread that
# runs the program, and what the start price buys (issue 20), in one
# device call of about 150 s.  DIR holds interfere (tests/bench/gpu_init/
# interfere.c), mm_f32.ptx (mm_exact_gen's), the bench programs llm, mm,
# mm_tf32 and the e2e programs mm_exact, quant, quant_tc, qlayer_i8
# (`make gpu-apps gpu-bench-apps`).  Writes summary.txt and logs under
# $OUT.  Figures, not tests.
set -u
D=${1:?usage: gpu_start_diag.sh DIR}
O=${OUT:-${TMPDIR:-/tmp}/twasm-start-diag}
mkdir -p "$O"
S=$O/summary.txt L=$(mktemp -d)
say() { echo "$*" | tee -a "$S"; }
{
  nvidia-smi -L; nproc; uname -r; cat /sys/kernel/mm/transparent_hugepage/enabled
  for c in 0 1 2 3 8 9; do echo "cpu$c: siblings $(cat /sys/devices/system/cpu/cpu$c/topology/thread_siblings_list 2>/dev/null), core $(cat /sys/devices/system/cpu/cpu$c/topology/core_id 2>/dev/null)"; done
  lscpu
} >"$O/machine.txt" 2>&1
head -n 12 "$O/machine.txt" | tee -a "$S"
sib=$(cut -d, -f2 /sys/devices/system/cpu/cpu2/topology/thread_siblings_list 2>/dev/null)

say "== 1. the program's thread beside the start's work (600x400x500 f32 product, ms) $(date -u +%T)"
for r in 1 2; do
  for m in none spin mmap cuinit jit child; do
    CUDA_CACHE_DISABLE=1 timeout 30 "$D/interfere" $m "$D/mm_f32.ptx" 2>&1 | tee -a "$S"
  done
  INTERFERE_NICE=1 CUDA_CACHE_DISABLE=1 timeout 30 "$D/interfere" jit "$D/mm_f32.ptx" 2>&1 | tee -a "$S"
  INTERFERE_CPUS=2,11 CUDA_CACHE_DISABLE=1 timeout 30 "$D/interfere" jit "$D/mm_f32.ptx" 2>&1 | tee -a "$S"
  [ -n "$sib" ] && [ "$sib" != 2 ] && { echo "(helper on cpu2's sibling, cpu$sib)"; INTERFERE_CPUS=2,$sib timeout 30 "$D/interfere" spin; } 2>&1 | tee -a "$S"
done

say "== 2. llm 128 tokens in auto at start prices (ms) 0, 250, 500, 1000 $(date -u +%T)"
TWASM_DEVICE=cpu timeout 60 "$D/llm" 64 >"$L/cpu" 2>&1
say "cpu 64: $(grep 'tokens/s' "$L/cpu" | tail -n 1)"
ids=$(grep '^tokens:' "$L/cpu" | cut -d' ' -f2-65)
TWASM_DEVICE=auto TWASM_GPU_START_MS=0 timeout 60 "$D/llm" 16 >/dev/null 2>&1
for r in 1 2; do
  for p in 0 250 500 1000; do
    t0=$(date +%s%N)
    TWASM_DEVICE=auto TWASM_GPU_START_MS=$p timeout 60 "$D/llm" 128 >"$L/run" 2>&1
    t1=$(date +%s%N)
    same=same; [ "$(grep '^tokens:' "$L/run" | cut -d' ' -f2-65)" = "$ids" ] || same="IDS DIFFER"
    say "round $r, price $p: $(grep 'tokens/s' "$L/run" | tail -n 1) [$same] process $(((t1 - t0) / 1000000)) ms"
  done
done

say "== 3. mm_tf32 2048 1 and mm 2048 1, cpu and auto interleaved $(date -u +%T)"
for r in 1 2 3; do
  for p in mm_tf32 mm; do
    for m in cpu auto; do
      t0=$(date +%s%N)
      out=$( { time TWASM_DEVICE=$m timeout 60 "$D/$p" 2048 1; } 2>&1 | tr '\n' ' ')
      t1=$(date +%s%N)
      say "round $r $p $m: $(((t1 - t0) / 1000000)) ms: $out"
    done
  done
done
TWASM_DEVICE=auto TWASM_TRACE=1 TWASM_TRACE_TIME=1 TWASM_GPU_PROFILE=1 timeout 60 "$D/mm_tf32" 2048 1 >"$O/mm_tf32_trace.txt" 2>&1
TWASM_DEVICE=cpu TWASM_TRACE=1 TWASM_TRACE_TIME=1 timeout 60 "$D/mm_tf32" 2048 1 >>"$O/mm_tf32_trace.txt" 2>&1
tail -n 5 "$O/mm_tf32_trace.txt" | tee -a "$S"

say "== 4. programs that reach the price: cpu, auto at 1000 (default), 250, 0 (wall ms) $(date -u +%T)"
for r in 1 2 3; do
  for p in mm_exact quant quant_tc qlayer_i8; do
    line="round $r $p:"
    for m in cpu 1000 250 0; do
      t0=$(date +%s%N)
      if [ $m = cpu ]; then TWASM_DEVICE=cpu timeout 30 "$D/$p" >"$L/o.$m" 2>&1
      else TWASM_DEVICE=auto TWASM_GPU_START_MS=$m timeout 30 "$D/$p" >"$L/o.$m" 2>&1; fi
      t1=$(date +%s%N)
      cmp -s "$L/o.cpu" "$L/o.$m" || line="$line (OUTPUT DIFFERS)"
      line="$line $m $(((t1 - t0) / 1000000))"
    done
    say "$line"
  done
done
for p in mm_exact quant_tc qlayer_i8; do
  TWASM_DEVICE=auto TWASM_GPU_START_MS=250 TWASM_TRACE=1 TWASM_TRACE_TIME=1 timeout 30 "$D/$p" 2>&1 | grep -E 'gpu:|start' | head -n 20 >>"$O/traces_250.txt"
done
say "== done $(date -u +%T)"
rm -rf "$L"
