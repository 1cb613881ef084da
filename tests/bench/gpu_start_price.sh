#!/usr/bin/env bash
# gpu_start_price.sh DIR: the start price for repeated nests (issue 20,
# rt_start.c: 250 ms of would-be GPU work once one nest has run 64 times
# on the CPU, else 1000) against the single price of before
# (TWASM_GPU_START_REPEAT_MS=1000), in one device call of about 200 s.
# DIR holds interfere (tests/bench/gpu_init/interfere.c), mm_f32.ptx,
# auto_cpu.sh and start.sh (tests/bench), bin/ (`make gpu-apps`), bench/
# (llm batch16 jacobi map launch launch.no-offload from `make
# gpu-bench-apps`), bargs/NAME.args, start/ (`make gpu-start-apps`).
# Writes summary.txt and logs under $OUT.  Figures, not tests.
set -u
D=${1:?usage: gpu_start_price.sh DIR}
O=${OUT:-${TMPDIR:-/tmp}/twasm-start-price}
mkdir -p "$O"
S=$O/summary.txt L=$(mktemp -d)
say() { echo "$*" | tee -a "$S"; }
old="TWASM_GPU_START_REPEAT_MS=1000"

say "== 1. what a started driver costs at the exit (child processes) $(date -u +%T)"
timeout 40 "$D/interfere" exit "$D/mm_f32.ptx" 2>&1 | tee -a "$S"

say "== 2. llm 128 tokens in auto: new default, one price (1000), driver at once $(date -u +%T)"
TWASM_DEVICE=cpu timeout 60 "$D/bench/llm" 64 >"$L/cpu" 2>&1
say "cpu 64: $(grep 'tokens/s' "$L/cpu" | tail -n 1)"
ids=$(grep '^tokens:' "$L/cpu" | cut -d' ' -f2-65)
TWASM_DEVICE=auto TWASM_GPU_START_MS=0 timeout 60 "$D/bench/llm" 64 >/dev/null 2>&1
for r in 1 2 3; do
  for v in "default|X=1" "one price 1000|$old" "driver at once|TWASM_GPU_START_MS=0"; do
    t0=$(date +%s%N)
    env TWASM_DEVICE=auto ${v#*|} timeout 60 "$D/bench/llm" 128 >"$L/run" 2>&1
    t1=$(date +%s%N)
    same=same; [ "$(grep '^tokens:' "$L/run" | cut -d' ' -f2-65)" = "$ids" ] || same="IDS DIFFER"
    say "round $r, ${v%%|*}: $(grep 'tokens/s' "$L/run" | tail -n 1) [$same] process $(((t1 - t0) / 1000000)) ms"
  done
done
TWASM_DEVICE=auto TWASM_TRACE=1 TWASM_TRACE_TIME=1 timeout 60 "$D/bench/llm" 128 2>&1 | grep -E 'gpu: (starting|driver ready)|tokens/s' | tee -a "$S"

say "== 3. programs near the price: cpu, new default, one price 1000 (wall ms) $(date -u +%T)"
for r in 1 2 3; do
  for p in mm_exact quant quant_tc qlayer_i8 jacobi polybench; do
    line="round $r $p:"
    for m in cpu new old; do
      t0=$(date +%s%N)
      case $m in
        cpu) TWASM_DEVICE=cpu timeout 30 "$D/bin/$p" >"$L/o.$m" 2>&1 ;;
        new) TWASM_DEVICE=auto timeout 30 "$D/bin/$p" >"$L/o.$m" 2>&1 ;;
        old) env TWASM_DEVICE=auto $old timeout 30 "$D/bin/$p" >"$L/o.$m" 2>&1 ;;
      esac
      t1=$(date +%s%N)
      cmp -s "$L/o.cpu" "$L/o.$m" || line="$line (OUTPUT DIFFERS)"
      line="$line $m $(((t1 - t0) / 1000000))"
    done
    say "$line"
  done
done
for p in qlayer_i8 quant_tc jacobi; do
  echo "-- $p" >>"$O/traces.txt"
  TWASM_DEVICE=auto TWASM_TRACE=1 TWASM_TRACE_TIME=1 timeout 30 "$D/bin/$p" 2>&1 | grep -E 'gpu: |launch ' | head -n 12 >>"$O/traces.txt"
done

say "== 4. auto against cpu, e2e programs (3 runs) $(date -u +%T)"
mkdir -p "$L/noargs"
timeout 110 bash "$D/auto_cpu.sh" "$D/bin" 3 "$L/noargs" >"$O/auto_e2e.md" 2>&1
say "auto_cpu e2e rc=$?"; grep -E 'over|differ|FAIL' "$O/auto_e2e.md" | tee -a "$S"

say "== 5. auto against cpu, bench programs (3 runs) $(date -u +%T)"
mkdir -p "$L/bauto"; for p in llm batch16 jacobi map launch; do cp "$D/bench/$p" "$L/bauto/"; done
AUTO_CPU_COMPARE='tokens:.*|check .*|checksum [0-9a-f ]+' timeout 70 bash "$D/auto_cpu.sh" "$L/bauto" 3 "$D/bargs" >"$O/auto_bench.md" 2>&1
say "auto_cpu bench rc=$?"; cat "$O/auto_bench.md" >>"$S"

say "== 6. start-up (5 runs) and tiny loop $(date -u +%T)"
timeout 30 bash "$D/start.sh" "$D/start" 5 2>&1 | tee -a "$S"
for i in 1 2 3; do for m in cpu auto; do echo "$m $(TWASM_DEVICE=$m timeout 30 "$D/bench/launch" 32 1000000 2>&1 | grep 'per call')"; done
  echo "no-offload $(timeout 30 "$D/bench/launch.no-offload" 32 1000000 2>&1 | grep 'per call')"; done | tee -a "$S"
say "== done $(date -u +%T)"
rm -rf "$L"
