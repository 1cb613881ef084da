#!/bin/bash
# run.sh: builds each test program natively and to wasm (wasi-libc),
# compiles the wasm with twasmc, runs both and compares their stdout and
# exit status with NAME.expected / NAME.status; then checks that escape.c
# cannot leave its preopened directory.  NAME.args: one argument a line;
# NAME.stdin: standard input; NAME.variants: one wasm build a line, each
# the clang flags added to the wasm build (e.g. -O3 -msimd128; default:
# one build with none), optionally followed by '| wasm-opt FLAGS' (the
# build passed through binaryen's optimiser; skipped, saying so, without it).  TWASMC overrides the compiler.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
twasmc=${TWASMC:-$root/build/bin/twasmc}
native_cc=(clang-19 -O2)
wasm_cc=(clang-19 --target=wasm32-wasi --sysroot=/usr -O2)
work=$(mktemp -d /tmp/twasm-programs.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0

fail() { echo "FAIL $1: $2"; failures=$((failures + 1)); }

# run NAME EXE: runs EXE in a fresh directory; stdout to $work/NAME.EXE.out.
run() {
  local name=$1 exe=$2 dir=$work/run.$1.$(basename "$2")
  local args=() input=/dev/null
  [ -f "$here/$name.args" ] && mapfile -t args < "$here/$name.args"
  [ -f "$here/$name.stdin" ] && input=$here/$name.stdin
  mkdir -p "$dir"
  (cd "$dir" && TEST_VAR="value with spaces" "$exe" "${args[@]}" < "$input" > "$dir.out")
  echo $? > "$dir.status"
}

check() {
  local name=$1 kind=$2 dir=$work/run.$1.$1.$3
  local want_status=0
  [ -f "$here/$name.status" ] && want_status=$(cat "$here/$name.status")
  diff -u "$here/$name.expected" "$dir.out" > "$dir.diff" || { fail "$name ($kind)" "stdout differs"; cat "$dir.diff"; }
  [ "$(cat "$dir.status")" = "$want_status" ] || fail "$name ($kind)" "exit status $(cat "$dir.status"), want $want_status"
}

for src in "$here"/*.c; do
  name=$(basename "$src" .c)
  [ "$name" = escape ] && continue
  # Native programs see the whole environment; compiled ones only what
  # --env names (args.c prints TEST_VAR, given by the host at run time).
  tflags=()
  [ "$name" = files ] && tflags=(--dir .)
  [ "$name" = args ] && tflags=(--env TEST_VAR)
  "${native_cc[@]}" "$src" -o "$work/$name.native" -lm || { fail "$name" "native build"; continue; }
  run "$name" "$work/$name.native"
  check "$name" native native
  variants=("")
  [ -f "$here/$name.variants" ] && mapfile -t variants < "$here/$name.variants"
  for v in "${!variants[@]}"; do
    # "CLANG FLAGS | wasm-opt FLAGS": the wasm build, then binaryen's optimiser
    read -ra flags <<< "${variants[$v]%%|*}"
    opt=()
    [[ "${variants[$v]}" == *"|"* ]] && read -ra opt <<< "${variants[$v]#*|}"
    kind="aot${flags[*]:+ ${flags[*]}}${opt[*]:+ | ${opt[*]}}"
    if [ ${#opt[@]} -gt 0 ] && ! command -v "${opt[0]}" > /dev/null; then
      echo "skip $name ($kind): ${opt[0]} is not installed (binaryen)"
      continue
    fi
    "${wasm_cc[@]}" "${flags[@]}" "$src" -o "$work/$name.$v.wasm" -lm || { fail "$name" "wasm build ($kind)"; continue; }
    if [ ${#opt[@]} -gt 0 ]; then
      "${opt[@]}" "$work/$name.$v.wasm" -o "$work/$name.$v.wasm" || { fail "$name" "$kind"; continue; }
    fi
    "$twasmc" "${tflags[@]}" "$work/$name.$v.wasm" -o "$work/$name.$v" || { fail "$name" "twasmc ($kind)"; continue; }
    run "$name" "$work/$name.$v"
    check "$name" "$kind" "$v"
  done
done

# The escape test: a sandbox beside a file the program must not reach.
box=$work/escape/box
mkdir -p "$box/sub"
echo "outside, untouched" > "$work/escape/outside.txt"
echo "inside" > "$box/sub/target.txt"
ln -s ../outside.txt "$box/outlink"
ln -s .. "$box/dirlink"
ln -s target.txt "$box/sub/inlink"
if "${wasm_cc[@]}" "$here/escape.c" -o "$work/escape.wasm" &&
   "$twasmc" --dir "$box::." "$work/escape.wasm" -o "$work/escape.aot"; then
  (cd "$work" && "$work/escape.aot" > "$work/escape.out")
  diff -u "$here/escape.expected" "$work/escape.out" || fail escape "stdout differs"
  [ "$(cat "$box/sub/inside.txt" 2>/dev/null)" = "written inside" ] || fail escape "inside.txt not in the sandbox"
  [ "$(cat "$work/escape/outside.txt")" = "outside, untouched" ] || fail escape "outside.txt changed"
  leaked=$(cd "$work/escape" && find . -path ./box -prune -o -newer outside.txt -print | grep -v '^\.$')
  [ -z "$leaked" ] || fail escape "files appeared outside: $leaked"
  [ ! -e "$work/inside.txt" ] && [ ! -e "$work/sub" ] || fail escape "wrote into the working directory"
else
  fail escape "build"
fi

# The same module compiled four times gives the same executable.  A
# compiler that keeps values by pointer can decide by memory reuse: before
# bnd_insert.c's fix (29 Nov 2026) compress.wasm came out two ways, about
# half the runs each, so four builds caught it almost always.
if "${wasm_cc[@]}" "$root/tests/bench/compress.c" -o "$work/same.wasm"; then
  for i in 1 2 3 4; do "$twasmc" "$work/same.wasm" -o "$work/same.$i" || fail same "twasmc, build $i"; done
  for i in 2 3 4; do cmp -s "$work/same.1" "$work/same.$i" || fail same "build $i differs from build 1"; done
else
  fail same "wasm build of tests/bench/compress.c"
fi

[ $failures -eq 0 ] && echo "programs: all passed" || echo "programs: $failures failure(s)"
[ $failures -eq 0 ]
