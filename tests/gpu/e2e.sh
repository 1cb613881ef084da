#!/usr/bin/env bash
# e2e.sh: runs the prebuilt end-to-end GPU test programs found in $1
# (`make gpu-apps` builds them into build/gpu/bin; this builds nothing),
# logs in $2.  Each program NAME comes from tests/gpu/e2e/NAME.c, which may
# declare `/* expect-gpu-launches: N */` (default 0) and
# `/* expect-status: S */` (default 0) and `/* expect-packed: P */` (at
# least P launches of the sm_90a packed tensor-core product where the
# sm_90a kernels loaded) and `/* expect-unwaited: U */` (at least U
# launches "not waited for" in the host-memory run); NAME.args holds
# its arguments and NAME.expected its stdout, when they exist.
#   cpu half: TWASM_DEVICE=cpu; exit status S; stdout equal to NAME.expected.
#   gpu half: TWASM_DEVICE=gpu TWASM_TRACE=1, then TWASM_DEVICE=auto, then
#     gpu with linear memory in host memory (TWASM_GPU_MEMORY=host
#     TWASM_TRACE=1: pinned where the device cannot read pageable memory,
#     as auto's late start has it, so launches run on its device copy and
#     products go unwaited where the code waits, runtime/rt_defer.c):
#     stdout byte for byte, exit status and trap line (first "trap:" line
#     of stderr) equal to the cpu run's, and at least N trace lines
#     "twasm: offload KERNEL (KIND): gpu" (launches) under both gpu runs.
#   Without a usable GPU (no nvidia-smi, or the trace says
#   "twasm: gpu unavailable") the gpu half is "SKIP NAME: no GPU".
# One verdict line per half, then the counts; exits 1 on any failure.
set -u
bin=${1:?usage: e2e.sh BIN_DIR LOG_DIR}
logs=${2:?usage: e2e.sh BIN_DIR LOG_DIR}
src=$(cd "$(dirname "$0")/e2e" && pwd)
limit=${GPU_TEST_TIMEOUT:-300}
mkdir -p "$logs"
pass=0 fail=0 skip=0

ok() { echo "PASS $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
skipped() { echo "SKIP $1"; skip=$((skip + 1)); }

# field NAME KEY DEFAULT: the value of a `/* KEY: VALUE */` line of NAME.c.
field() {
  local v
  v=$(sed -n "s|.*/\* $2: \([^*]*[^ *]\) *\*/.*|\1|p" "$src/$1.c" 2>/dev/null | head -n 1)
  echo "${v:-$3}"
}

# trap_line ERRFILE: the runtime's trap message, trace lines left out.
trap_line() { grep -v '^twasm: ' "$1" | grep -m 1 'trap:' || true; }

# run MODE NAME PROG ARGS...: stdout, stderr and status into $logs/NAME.MODE.*
run() {
  local mode=$1 name=$2 prog=$3
  shift 3
  local env=(TWASM_DEVICE="$mode")
  [ "$mode" = gpu ] && env+=(TWASM_TRACE=1)
  [ "$mode" = host ] && env=(TWASM_DEVICE=gpu TWASM_GPU_MEMORY=host TWASM_TRACE=1)
  env "${env[@]}" timeout "$limit" "$prog" "$@" >"$logs/$name.$mode.out" 2>"$logs/$name.$mode.err"
  echo $? >"$logs/$name.$mode.status"
}

# same NAME MODE: the MODE run gave the cpu run's stdout, status and trap line.
same() {
  local name=$1 mode=$2 l=$logs/$1
  if ! cmp -s "$l.cpu.out" "$l.$mode.out"; then
    echo "stdout differs from the cpu run's (diff $l.cpu.out $l.$mode.out)"
  elif [ "$(cat "$l.cpu.status")" != "$(cat "$l.$mode.status")" ]; then
    echo "exit status $(cat "$l.$mode.status"), the cpu run's $(cat "$l.cpu.status")"
  elif [ "$(trap_line "$l.cpu.err")" != "$(trap_line "$l.$mode.err")" ]; then
    echo "trap line '$(trap_line "$l.$mode.err")', the cpu run's '$(trap_line "$l.cpu.err")'"
  fi
}

{
  command -v nvidia-smi >/dev/null && nvidia-smi
  uname -a
} >"$logs/machine.log" 2>&1
have_gpu=0
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 && have_gpu=1

found=0
for prog in "$bin"/*; do
  if [ ! -f "$prog" ] || [ ! -x "$prog" ]; then continue; fi
  found=1
  name=$(basename "$prog")
  args=()
  [ -f "$src/$name.args" ] && read -r -a args <"$src/$name.args"
  want_launches=$(field "$name" expect-gpu-launches 0)
  want_packed=$(field "$name" expect-packed 0)
  want_status=$(field "$name" expect-status 0)
  want_unwaited=$(field "$name" expect-unwaited 0)
  l=$logs/$name

  run cpu "$name" "$prog" "${args[@]}"
  status=$(cat "$l.cpu.status")
  if [ "$status" != "$want_status" ]; then
    bad "$name (cpu): exit status $status, expected $want_status (log $l.cpu.err)"
  elif [ -f "$src/$name.expected" ] && ! cmp -s "$src/$name.expected" "$l.cpu.out"; then
    bad "$name (cpu): stdout differs from $name.expected (diff $src/$name.expected $l.cpu.out)"
  elif grep -q '^twasm: offload .*: gpu' "$l.cpu.err"; then
    bad "$name (cpu): a nest launched under TWASM_DEVICE=cpu"
  else
    ok "$name (cpu)"
  fi

  if [ "$have_gpu" = 0 ]; then
    skipped "$name: no GPU"
    continue
  fi
  run gpu "$name" "$prog" "${args[@]}"
  if grep -q '^twasm: gpu unavailable' "$l.gpu.err"; then
    skipped "$name: no GPU ($(grep -m 1 '^twasm: gpu unavailable' "$l.gpu.err"))"
    continue
  fi
  launches=$(grep -c -E '^twasm: offload [^ ]+( \([a-z]+\))?: gpu' "$l.gpu.err")
  packed=$(grep -c -E '^twasm: offload [^ ]+ \(matmul\): gpu: sm_90a packed' "$l.gpu.err")
  hopper=$(grep -c 'loaded for sm_90a' "$l.gpu.err")
  why=$(same "$name" gpu)
  if [ -n "$why" ]; then
    bad "$name (gpu): $why"
  elif grep -q '^twasm: gpu disabled' "$l.gpu.err"; then
    bad "$name (gpu): $(grep -m 1 '^twasm: gpu disabled' "$l.gpu.err")"
  elif [ "$launches" -lt "$want_launches" ]; then
    bad "$name (gpu): $launches launches, expected at least $want_launches (log $l.gpu.err)"
  elif [ "$hopper" -gt 0 ] && [ "$packed" -lt "$want_packed" ]; then
    bad "$name (gpu): $packed packed tensor-core products, expected at least $want_packed (log $l.gpu.err)"
  else
    ok "$name (gpu: $launches launches${hopper:+, $packed packed})"
  fi
  run auto "$name" "$prog" "${args[@]}"
  why=$(same "$name" auto)
  if [ -n "$why" ]; then bad "$name (auto): $why"; else ok "$name (auto)"; fi
  run host "$name" "$prog" "${args[@]}"
  why=$(same "$name" host)
  launches=$(grep -c -E '^twasm: offload [^ ]+( \([a-z]+\))?: gpu' "$l.host.err")
  unwaited=$(grep -c '^twasm: offload .*, not waited for$' "$l.host.err")
  if [ -n "$why" ]; then
    bad "$name (gpu, host memory): $why"
  elif grep -q '^twasm: gpu disabled' "$l.host.err"; then
    bad "$name (gpu, host memory): $(grep -m 1 '^twasm: gpu disabled' "$l.host.err")"
  elif [ "$launches" -lt "$want_launches" ]; then
    bad "$name (gpu, host memory): $launches launches, expected at least $want_launches (log $l.host.err)"
  elif [ "$unwaited" -lt "$want_unwaited" ]; then
    bad "$name (gpu, host memory): $unwaited launches not waited for, expected at least $want_unwaited (log $l.host.err)"
  else
    ok "$name (gpu, host memory: $launches launches, $unwaited not waited for)"
  fi
done
if [ "$found" = 0 ]; then
  echo "FAIL no executable programs in $bin"
  exit 1
fi
echo "e2e: $pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
