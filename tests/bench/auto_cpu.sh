#!/usr/bin/env bash
# auto_cpu.sh BIN_DIR [RUNS] [SRC_DIR]: issue 20's bar for programs that
# launch: `auto` may not be more than 5 % (or 5 ms, for short programs)
# slower than TWASM_DEVICE=cpu.  Runs every executable NAME of BIN_DIR
# (`make gpu-apps`: build/gpu/bin) under TWASM_DEVICE=cpu and auto, RUNS
# times each (default 5), interleaved in alternating order, with the arguments of
# SRC_DIR/NAME.args (default tests/gpu/e2e), and prints a markdown table
# of median and fastest wall times (ms, `date` around each process),
# auto/cpu of each and a verdict on the fastest (the host's noise only
# ever adds time to a run: the fastest of interleaved runs is the closest
# to the program's own cost; the median is printed beside it); the outputs of the two modes must be the same bytes (with
# AUTO_CPU_COMPARE=REGEX set, only the parts of lines matching it: the
# bench programs print their own timings, so there
# 'tokens:.*|check .*|checksum [0-9a-f ]+').  Exit
# status 1 when an output differs (not when a time misses: noise).
set -u
bin=${1:?usage: auto_cpu.sh BIN_DIR [RUNS] [SRC_DIR]}
runs=${2:-5}
src=${3:-$(cd "$(dirname "$0")/../gpu/e2e" && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0 over=0 n=0

# once MODE NAME PROG ARGS...: wall us appended to $tmp/NAME.MODE, stdout
# and status into $tmp/NAME.MODE.out (the last run's).
once() {
  local mode=$1 name=$2 prog=$3 t0 t1 st
  shift 3
  t0=$(date +%s%N)
  env -u TWASM_TRACE TWASM_DEVICE="$mode" "$prog" "$@" >"$tmp/$name.$mode.out" 2>/dev/null
  st=$?
  t1=$(date +%s%N)
  echo "status $st" >>"$tmp/$name.$mode.out"
  echo $(((t1 - t0) / 1000)) >>"$tmp/$name.$mode"
}

median() { sort -n "$1" | awk '{ v[NR] = $1 } END { printf "%.1f", v[int((NR + 1) / 2)] / 1000 }'; }
fastest() { sort -n "$1" | awk 'NR == 1 { printf "%.1f", $1 / 1000 }'; }
ratio() { awk -v a="$1" -v c="$2" 'BEGIN { printf "%.3f", (c > 0 ? a / c : 0) }'; }

echo "| program | cpu ms (median) | auto ms (median) | auto / cpu (median) | cpu ms (fastest) | auto ms (fastest) | auto / cpu (fastest) | verdict |"
echo "|---|---:|---:|---:|---:|---:|---:|---|"
for prog in "$bin"/*; do
  [ -f "$prog" ] && [ -x "$prog" ] || continue
  name=$(basename "$prog")
  case $name in *.*) continue ;; esac
  args=()
  [ -f "$src/$name.args" ] && read -r -a args <"$src/$name.args"
  for ((i = 0; i < runs; i++)); do
    # cpu first in even runs, auto first in odd ones: a fixed order would
    # give one mode the machine's state after the other every time.
    if ((i % 2 == 0)); then
      once cpu "$name" "$prog" "${args[@]}"
      once auto "$name" "$prog" "${args[@]}"
    else
      once auto "$name" "$prog" "${args[@]}"
      once cpu "$name" "$prog" "${args[@]}"
    fi
  done
  c=$(median "$tmp/$name.cpu") a=$(median "$tmp/$name.auto")
  cf=$(fastest "$tmp/$name.cpu") af=$(fastest "$tmp/$name.auto")
  verdict=$(awk -v a="$af" -v c="$cf" 'BEGIN { print (a <= c * 1.05 || a - c <= 5) ? "ok" : "over" }')
  if [ -n "${AUTO_CPU_COMPARE:-}" ]; then
    for m in cpu auto; do
      grep -oE "$AUTO_CPU_COMPARE|^status .*" "$tmp/$name.$m.out" >"$tmp/$name.$m.cmp"
    done
  else
    for m in cpu auto; do cp "$tmp/$name.$m.out" "$tmp/$name.$m.cmp"; done
  fi
  if ! cmp -s "$tmp/$name.cpu.cmp" "$tmp/$name.auto.cmp"; then
    verdict="FAIL: output differs"
    failed=1
  fi
  [ "$verdict" = over ] && over=$((over + 1))
  n=$((n + 1))
  echo "| $name | $c | $a | $(ratio "$a" "$c") | $cf | $af | $(ratio "$af" "$cf") | $verdict |"
done
echo
echo "auto_cpu: $n programs, $over over the bar (5 % or 5 ms, fastest of $runs interleaved runs each; medians beside)"
exit "$failed"
