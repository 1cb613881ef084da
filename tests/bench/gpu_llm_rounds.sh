#!/usr/bin/env bash
# gpu_llm_rounds.sh LLM_BIN ROUNDS LOG_DIR [LLM_BEFORE]: why rounds of the
# LLM-style program differ (issue 20).  Each round runs, interleaved: a
# cpu run (64 tokens) and an auto run of LLM_BIN (128 tokens), and of
# LLM_BEFORE when given, each with its tokens' milliseconds (`llm N full
# times`), TWASM_GPU_PROFILE=1 and bash's user and system time; then one
# summary line per run: tokens/s over the last 64 (cpu: last 32), the
# ratio to the round's cpu run, the launch path's host time (the
# profile's "launch as a whole", and its waits), the rest (the run's
# time less the launches': the CPU's own work), and the slowest tokens.
# Figures, not tests.
set -u
llm=${1:?usage: gpu_llm_rounds.sh LLM_BIN ROUNDS LOG_DIR [LLM_BEFORE]}
rounds=${2:-3}
logs=${3:?usage: gpu_llm_rounds.sh LLM_BIN ROUNDS LOG_DIR [LLM_BEFORE]}
before=${4:-}
mkdir -p "$logs"
TIMEFORMAT='user %U sys %S wall %R'

# one NAME MODE BIN TOKENS: a run, its log in $logs/NAME
one() {
  local name=$1 mode=$2 bin=$3 n=$4
  { time env TWASM_DEVICE="$mode" TWASM_GPU_PROFILE=1 timeout 120 "$bin" "$n" full times \
      >"$logs/$name.out" 2>"$logs/$name.err"; } 2>"$logs/$name.time"
}

# summary NAME CPU_RATE: one line from a run's logs.
summary() {
  local f=$logs/$1 cpu=${2:-}
  local rate total launch sync n
  rate=$(grep -o -E '[0-9.]+ over the last [0-9]+' "$f.out" | cut -d' ' -f1)
  total=$(grep -o -E 'tokens in [0-9.]+ s' "$f.out" | grep -o -E '[0-9.]+')
  launch=$(grep 'launch as a whole' "$f.err" | grep -o -E '[0-9.]+ us in +[0-9]+' | head -n 1)
  sync=$(grep 'synchronise' "$f.err" | grep -o -E '[0-9.]+ us each' | head -n 1)
  n=$(grep -c . "$f.out")
  awk -v name="$1" -v rate="${rate:-0}" -v cpu="$cpu" -v total="${total:-0}" -v launch="${launch:-0 us in 0}" \
      -v sync="${sync:--}" -v t="$(cat "$f.time")" -v ms="$(grep '^ms:' "$f.out" | cut -c5-)" 'BEGIN {
    split(launch, l, " "); k = split(ms, m, " "); h = int(k / 2)
    late = 0; lo = 1e9; hi = 0
    for (i = h + 1; i <= k; i++) { late += m[i]; if (m[i] < lo) lo = m[i]; if (m[i] > hi) hi = m[i] }
    ratio = "-"
    if (cpu > 0) ratio = sprintf("%.1fx", rate / cpu)
    fmt = "%s: %.2f tokens/s last half (%s cpu); whole %.3f s, launches %.1f ms in %d (%s wait); "
    fmt = fmt "CPU rest %.1f ms; last half token ms mean %.2f min %.2f max %.2f; %s\n"
    printf fmt, name, rate, ratio, total, l[1] / 1e3, l[4], sync, total * 1e3 - l[1] / 1e3, \
      (k > h ? late / (k - h) : 0), lo, hi, t
  }'
}

for r in $(seq "$rounds"); do
  one "r$r.cpu" cpu "$llm" 64
  cpu=$(grep -o -E '[0-9.]+ over the last [0-9]+' "$logs/r$r.cpu.out" | cut -d' ' -f1)
  summary "r$r.cpu"
  one "r$r.auto" auto "$llm" 128
  summary "r$r.auto" "$cpu"
  if [ -n "$before" ]; then
    one "r$r.before" auto "$before" 128
    summary "r$r.before" "$cpu"
  fi
  for m in auto before; do
    [ -f "$logs/r$r.$m.out" ] && ! cmp -s <(grep '^tokens:' "$logs/r$r.cpu.out" | cut -d' ' -f2-65) \
      <(grep '^tokens:' "$logs/r$r.$m.out" | cut -d' ' -f2-65) && echo "r$r.$m: TOKEN IDS DIFFER from cpu"
  done
done
