#!/usr/bin/env bash
# start_exit.sh PROG [RUNS]: a process that exits while the GPU starts in
# the background (runtime/rt_start.c).  PROG is build/gpu/start/midstart
# (`make gpu-start-apps`); under TWASM_DEVICE=auto TWASM_GPU_START_MS=0 its
# first map begins the start, and its arguments (REPS maps of 16 M floats)
# set how far into the start it exits.  For each REPS, RUNS times (default
# 5) each way: the runtime's own exit (_exit while the helper thread is
# inside the driver) and TWASM_TEST_START_EXIT=exit (the plain exit, the
# driver's teardown beside that thread).  Every run must print the cpu
# run's stdout with status 0 within 60 s; prints one line per REPS and way
# (median wall ms, how many runs left mid-start, how many saw the driver
# ready) and exits 1 on any failure.
set -u
prog=${1:?usage: start_exit.sh PROG [RUNS]}
runs=${2:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
for reps in 1 4 16 64 256; do
  TWASM_DEVICE=cpu "$prog" 16777216 "$reps" >"$tmp/want"
  for way in leave exit; do
    : >"$tmp/ms"
    mid=0 ready=0
    for ((i = 0; i < runs; i++)); do
      env=(TWASM_DEVICE=auto TWASM_GPU_START_MS=0 TWASM_TRACE=1)
      [ "$way" = exit ] && env+=(TWASM_TEST_START_EXIT=exit)
      t0=$(date +%s%N)
      env "${env[@]}" timeout 60 "$prog" 16777216 "$reps" >"$tmp/out" 2>"$tmp/err"
      st=$?
      t1=$(date +%s%N)
      echo $(((t1 - t0) / 1000000)) >>"$tmp/ms"
      grep -q 'not waited for' "$tmp/err" && mid=$((mid + 1))
      grep -q 'driver ready' "$tmp/err" && ready=$((ready + 1))
      if [ "$st" != 0 ] || ! cmp -s "$tmp/out" "$tmp/want"; then
        echo "FAIL reps=$reps $way run $i: status $st, stdout $(cmp -s "$tmp/out" "$tmp/want" && echo same || echo differs)"
        tail -n 3 "$tmp/err"
        failed=1
      fi
    done
    ms=$(sort -n "$tmp/ms" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    echo "reps=$reps $way: median $ms ms, $mid of $runs left mid-start, $ready of $runs saw the driver ready"
  done
done
exit "$failed"
