#!/usr/bin/env bash
# start.sh BIN_DIR [RUNS]: what a program that never launches pays for the
# GPU being there (issue 20).  For each NAME in BIN_DIR with NAME.no-offload
# beside it (`make gpu-start-apps`: tests/bench/start/startup.c and
# examples/hello.c, whose loops are too small to launch), runs the
# --no-offload build and the offloading one under TWASM_DEVICE=auto, cpu
# and gpu, RUNS times each (default 20), interleaved, with the arguments
# "hello world", and prints a markdown table of median wall times (ms,
# date around each process) and auto's overhead over --no-offload.  Every
# run's stdout must equal the --no-offload build's: a difference is a FAIL
# line and exit status 1.
set -u
bin=${1:?usage: start.sh BIN_DIR [RUNS]}
runs=${2:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
modes=(no-offload auto cpu gpu)

# once TAG PROG: one run's wall ms appended to $tmp/TAG; stdout compared.
once() {
  local tag=$1 prog=$2 t0 t1
  shift 2
  t0=$(date +%s%N)
  env "$@" "$prog" hello world >"$tmp/out" 2>/dev/null
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000)) >>"$tmp/$tag"
  if ! cmp -s "$tmp/out" "$tmp/want"; then
    echo "FAIL $tag: stdout differs from the --no-offload build's"
    failed=1
  fi
}

# median FILE: the median of its numbers (microseconds), in ms.
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { printf "%.2f", v[int((NR + 1) / 2)] / 1000 }'; }

rows=()
for off in "$bin"/*.no-offload; do
  [ -x "$off" ] || continue
  name=$(basename "$off" .no-offload)
  prog=$bin/$name
  "$off" hello world >"$tmp/want" 2>/dev/null
  for ((i = 0; i < runs; i++)); do
    once "$name.no-offload" "$off" TWASM_DEVICE=auto
    for mode in auto cpu gpu; do once "$name.$mode" "$prog" TWASM_DEVICE=$mode; done
  done
  base=$(median "$tmp/$name.no-offload")
  row="| $name |"
  for mode in "${modes[@]}"; do row+=" $(median "$tmp/$name.$mode") |"; done
  auto=$(median "$tmp/$name.auto")
  row+=" $(awk -v a="$auto" -v b="$base" 'BEGIN { printf "%+.2f ms (%+.1f %%)", a - b, (b > 0 ? 100 * (a - b) / b : 0) }') |"
  rows+=("$row")
done
echo "| program | --no-offload | auto | cpu | gpu | auto - --no-offload |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "Median wall time of $runs runs each (ms), interleaved; TWASM_DEVICE=gpu starts the driver at instantiation."
exit "$failed"
