#!/usr/bin/env bash
# gpu_llm_ab.sh BIN_DIR [ROUNDS] [LOG_DIR]: the LLM-style program
# (BIN_DIR/llm, `make gpu-bench-apps`) in auto mode, 128 tokens, under
# several settings of the start and launch path, ROUNDS interleaved rounds (default
# 3) after one warm-up run (the driver's JIT cache), each line the
# program's own rates and whether its token ids equal a cpu run's (64
# tokens); then one run of each with TWASM_GPU_PROFILE=1 (host time per
# launch, by phase).  Figures, not tests: a failed run shows as its
# output.  LLM_BEFORE=PATH adds, in every round, that binary (an older
# build of the program and runtime) with the driver at once.
# LLM_AB_PROFILE_FROM / LLM_AB_PROFILE_COUNT: which variants the profiled
# runs take (default: all but the first).  LLM_AB_ARGS: more arguments
# after `128` (`full phases`: each run's second half by kind of step, the
# CPU work between launches by loop, printed under its line).  Issue 20; docs/PERFORMANCE.md,
# "The launch path measured", "Copies by kernel", "Launches as graphs",
# "Outputs into host memory".
set -u
bin=${1:?usage: gpu_llm_ab.sh BIN_DIR [ROUNDS] [LOG_DIR]}
rounds=${2:-3}
logs=${3:-${TMPDIR:-/tmp}/twasm-gpu-llm-ab}
mkdir -p "$logs"
llm=$bin/llm
# LLM_AB_SET=launch: the launch path's variants (graphs, how a launch
# is waited for) instead of the start's.
# LLM_AB_SET=host_out: the products writing their outputs into the host
# pages (the default) against the copy back (TWASM_GPU_HOST_OUT=0).
if [ "${LLM_AB_SET:-start}" = host_out ]; then
  variants=(
    "at once, outputs copied back (TWASM_GPU_HOST_OUT=0)|TWASM_GPU_START_MS=0 TWASM_GPU_HOST_OUT=0"
    "at once, outputs into host memory|TWASM_GPU_START_MS=0"
    "default, outputs copied back|TWASM_GPU_HOST_OUT=0"
    "default, outputs into host memory|X=1"
  )
elif [ "${LLM_AB_SET:-start}" = defer ]; then
  # LLM_AB_SET=defer: launches not waited for (TWASM_GPU_DEFER) at
  # both starts.
  variants=(
    "at once|TWASM_GPU_START_MS=0"
    "at once, not waited for (TWASM_GPU_DEFER=1)|TWASM_GPU_START_MS=0 TWASM_GPU_DEFER=1"
    "default|X=1"
    "default, not waited for|TWASM_GPU_DEFER=1"
  )
elif [ "${LLM_AB_SET:-start}" = phases ]; then
  # LLM_AB_SET=phases (with LLM_AB_ARGS="full phases"): the start's two
  # settings and huge pages collapsed at growth (TWASM_HUGE_COLLAPSE=1),
  # to see whether the CPU work's spread between runs follows the pages.
  variants=(
    "default|X=1"
    "at once|TWASM_GPU_START_MS=0"
    "at once, huge pages collapsed|TWASM_GPU_START_MS=0 TWASM_HUGE_COLLAPSE=1"
  )
elif [ "${LLM_AB_SET:-start}" = launch ]; then
  variants=(
    "at once, direct launches|TWASM_GPU_START_MS=0 TWASM_GPU_GRAPH=0"
    "at once, graphs|TWASM_GPU_START_MS=0"
    "at once, graphs, sync by query|TWASM_GPU_START_MS=0 TWASM_GPU_SYNC=query"
    "at once, graphs, sync by ctx (the old default)|TWASM_GPU_START_MS=0 TWASM_GPU_SYNC=ctx"
    "default|X=1"
    "default, sync by ctx|TWASM_GPU_SYNC=ctx"
    "at once, graphs updated by shape (TWASM_GPU_GRAPH_UPDATE=1)|TWASM_GPU_START_MS=0 TWASM_GPU_GRAPH_UPDATE=1"
    "default, graphs updated by shape|TWASM_GPU_GRAPH_UPDATE=1"
  )
else
  variants=(
    "default|X=1"
    "driver at once|TWASM_GPU_START_MS=0"
    "repeated after 12 runs|TWASM_GPU_START_REPEATS=12"
    "repeated after 12 runs, price 100 ms|TWASM_GPU_START_REPEATS=12 TWASM_GPU_START_REPEAT_MS=100"
  )
fi
read -r -a cpu_args <<<"${LLM_AB_ARGS:-}"
TWASM_DEVICE=cpu timeout 120 "$llm" 64 "${cpu_args[@]}" >"$logs/cpu" 2>&1
grep "^phases" "$logs/cpu"
echo "cpu, 64 tokens: $(tail -n 1 "$logs/cpu")"
ids=$(grep '^tokens:' "$logs/cpu" | cut -d' ' -f2-65)

# one NAME ENV...: a 128-token auto run, its rates and whether its ids match.
one() {
  local name=$1 same=same
  shift
  local args=()
  [ -z "${LLM:-}" ] && read -r -a args <<<"${LLM_AB_ARGS:-}"
  env TWASM_DEVICE=auto "$@" timeout 120 "${LLM:-$llm}" 128 "${args[@]}" >"$logs/run" 2>&1
  [ "$(grep '^tokens:' "$logs/run" | cut -d' ' -f2-65)" = "$ids" ] || same="IDS DIFFER"
  echo "$name: $(grep 'tokens/s' "$logs/run" | tail -n 1) [$same]"
  grep '^phases' "$logs/run" | sed 's/^/    /'
  grep 'profile:' "$logs/run" | sed 's/^twasm: profile: /    /'
}
one "warm-up" TWASM_GPU_START_MS=0 >/dev/null
for r in $(seq "$rounds"); do
  for v in "${variants[@]}"; do
    read -r -a env <<<"${v#*|}"
    one "round $r, ${v%%|*}" "${env[@]}"
  done
  [ -n "${LLM_BEFORE:-}" ] && LLM=$LLM_BEFORE one "round $r, before ($LLM_BEFORE), driver at once" TWASM_GPU_START_MS=0
done
for v in "${variants[@]:${LLM_AB_PROFILE_FROM:-1}:${LLM_AB_PROFILE_COUNT:-99}}"; do
  read -r -a env <<<"${v#*|}"
  one "profiled, ${v%%|*}" "${env[@]}" TWASM_GPU_PROFILE=1
done
