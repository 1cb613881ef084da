#!/usr/bin/env bash
# run.sh: runs the prebuilt GPU test programs found in $1 (builds nothing),
# each as it is and once under TWASM_DEVICE=cpu (which must say "skipped"),
# with logs in $2.  A program's verdict is its last line: "passed",
# "skipped: <reason>", or anything else (or a non-zero status) for a failure.
# Exits 1 when any run failed.
set -u
bin=${1:?usage: run.sh BIN_DIR LOG_DIR}
logs=${2:?usage: run.sh BIN_DIR LOG_DIR}
limit=${GPU_TEST_TIMEOUT:-300}
mkdir -p "$logs"
failed=0

# verdict NAME EXPECT LOG STATUS: EXPECT is "any" or "skipped".
verdict() {
  local name=$1 expect=$2 log=$3 status=$4 last
  last=$(tail -n 1 "$log")
  if [ "$status" -ne 0 ]; then
    echo "FAIL $name (status $status, log $log)"
  elif [[ $last == skipped:* ]]; then
    echo "SKIP $name: ${last#skipped: }"
    return 0
  elif [ "$expect" = any ] && [ "$last" = passed ]; then
    echo "PASS $name"
    return 0
  else
    echo "FAIL $name (last line: $last, log $log)"
  fi
  failed=1
}

{
  command -v nvidia-smi >/dev/null && nvidia-smi
  uname -a
} >"$logs/machine.log" 2>&1

found=0
for prog in "$bin"/*; do
  if [ ! -f "$prog" ] || [ ! -x "$prog" ]; then continue; fi
  found=1
  name=$(basename "$prog")
  timeout "$limit" "$prog" >"$logs/$name.log" 2>&1
  verdict "$name" any "$logs/$name.log" $?
  TWASM_DEVICE=cpu timeout "$limit" "$prog" >"$logs/$name.cpu.log" 2>&1
  verdict "$name (TWASM_DEVICE=cpu)" skipped "$logs/$name.cpu.log" $?
done
if [ "$found" = 0 ]; then
  echo "FAIL no executable programs in $bin"
  exit 1
fi
exit "$failed"
