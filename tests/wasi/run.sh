#!/usr/bin/env bash
# run.sh: runs the WASI preview-1 test suite (WebAssembly/wasi-testsuite)
# through twasmc, following the suite's doc/specification.md.
#
# usage: tests/wasi/run.sh SUITE_DIR [NAME...]
#   SUITE_DIR  the suite's checkout (its tests/*/testsuite/*/ hold the
#              prebuilt NAME.wasm and NAME.json files)
#   NAME       run only tests whose LANG/NAME contains one of these
# environment:
#   TWASMC      the compiler (default build/bin/twasmc)
#   WASI_JSON   the spec reader (default build/tests/wasi/wasi_json)
#   WASI_FLAGS  twasmc options for every test (default -O0: the suite tests
#               the runtime; the spec suite tests optimised code)
#   WASI_OUT    where executables are kept between runs (default
#               build/wasi-testsuite); one is rebuilt when its module,
#               twasmc or the runtime library is newer
#   WASI_JOBS   parallel compiles (default 2)
#   WASI_TIMEOUT  seconds per test (default 60)
# Each test runs in a fresh copy of its "root" directory (preopened as
# "/"), with "*.cleanup" leftovers removed from the copy, with only the
# spec's environment (env -i plus TWASM_INHERIT_ENV=1: TWASM_* variables
# never reach the guest) and stdin from /dev/null; its exit status, and
# its stdout and stderr where the spec gives them, must match (as in the
# suite's own runner: some tests print diagnostics the spec leaves out).
set -u

suite=${1:?usage: run.sh SUITE_DIR [NAME...]}
shift
filters=("$@")
twasmc=${TWASMC:-build/bin/twasmc}
json=${WASI_JSON:-build/tests/wasi/wasi_json}
flags=${WASI_FLAGS:--O0}
out=${WASI_OUT:-build/wasi-testsuite}
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2
jobs=${WASI_JOBS:-2}
limit=${WASI_TIMEOUT:-60}
rtlib=$(dirname "$twasmc")/../lib/libtwasm-rt.a

for tool in "$twasmc" "$json"; do
  [ -x "$tool" ] || { echo "wasi-testsuite: error: $tool not built" >&2; exit 2; }
done
[ -d "$suite/tests" ] || { echo "wasi-testsuite: error: $suite has no tests/ folder" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/twasm-wasi.XXXXXX") || exit 2
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# LANG/NAME for every test module: tests/LANG/testsuite/TARGET/NAME.wasm.
list_tests() {
  find "$suite/tests" -path '*/testsuite/*' -name '*.wasm' -type f | sort | while read -r wasm; do
    rel=${wasm#"$suite"/tests/}
    lang=${rel%%/*}
    name=$(basename "$wasm" .wasm)
    keep=${#filters[@]}
    for f in "${filters[@]}"; do [[ "$lang/$name" == *"$f"* ]] && keep=0; done
    [ "$keep" = 0 ] && printf '%s\t%s\t%s\n' "$lang" "$name" "$wasm"
  done
}

# Compiles one module unless its executable is up to date; a failure
# leaves NAME.compile-error (twasmc's message) instead.
compile_one() {
  local lang=$1 name=$2 wasm=$3 exe=$out/$1/$2
  mkdir -p "$out/$lang"
  if [ -x "$exe" ] && [ "$exe" -nt "$wasm" ] && [ "$exe" -nt "$twasmc" ] &&
     { [ ! -e "$rtlib" ] || [ "$exe" -nt "$rtlib" ]; } && [ ! -e "$exe.compile-error" ]; then
    return 0
  fi
  rm -f "$exe" "$exe.compile-error"
  # shellcheck disable=SC2086
  "$twasmc" $flags "$wasm" -o "$exe" 2>"$exe.log" || mv "$exe.log" "$exe.compile-error"
  rm -f "$exe.log"
}
export -f compile_one
export out twasmc rtlib flags

tests=$(list_tests)
[ -n "$tests" ] || { echo "wasi-testsuite: error: no tests found in $suite (or none match)" >&2; exit 2; }
printf '%s\n' "$tests" | tr '\t' '\n' | xargs -d '\n' -n 3 -P "$jobs" bash -c 'compile_one "$@"' _

declare -A passed total
npass=0 nfail=0 nskip=0

fail() {
  echo "wasi-testsuite: FAIL $1: $2"
  [ -s "${3:-/dev/null}" ] && head -n 8 "$3" | sed 's/^/    /'
  nfail=$((nfail + 1))
}

# Runs one test; its verdict goes to fail() or npass / nskip.
run_one() {
  local lang=$1 name=$2 wasm=$3 exe=$out/$1/$2 dir=$tmp/case
  local spec=${wasm%.wasm}.json here
  here=$(dirname "$wasm")
  chmod -R u+w "$dir" 2>/dev/null
  rm -rf "$dir" && mkdir -p "$dir/expected"
  [ -f "$spec" ] || spec=-
  if ! "$json" "$spec" "$dir/expected" 2>"$dir/json.err"; then
    fail "$lang/$name" "cannot read its spec" "$dir/json.err"
    return
  fi
  if [ -f "$dir/expected/skip" ]; then
    echo "wasi-testsuite: skipped $lang/$name: $(cat "$dir/expected/skip")"
    nskip=$((nskip + 1))
    return
  fi
  if [ -f "$exe.compile-error" ]; then
    fail "$lang/$name" "twasmc failed" "$exe.compile-error"
    return
  fi
  local -a args=() env=() dirs=() preopens=()
  mapfile -d '' args <"$dir/expected/args"
  mapfile -d '' env <"$dir/expected/env"
  mapfile -d '' dirs <"$dir/expected/dirs"
  # Fresh copies of the directories the test may change, without the
  # "*.cleanup" leftovers of earlier runs.
  if [ -f "$dir/expected/root" ]; then
    cp -R "$here/$(cat "$dir/expected/root")" "$dir/root" || { fail "$lang/$name" "cannot copy its root"; return; }
    preopens+=("$dir/root::/")
  fi
  for d in "${dirs[@]}"; do
    cp -R "$here/$d" "$dir/$d" || { fail "$lang/$name" "cannot copy $d"; return; }
    preopens+=("$dir/$d::$d")
  done
  chmod -R u+w "$dir"
  find "$dir" -name '*.cleanup' -exec rm -rf {} +
  local dirlist
  dirlist=$(IFS=';'; printf '%s' "${preopens[*]}")
  (cd "$dir" && env -i TWASM_INHERIT_ENV=1 TWASM_DIRS="$dirlist" "${env[@]}" \
     timeout "$limit" "$exe" "${args[@]}" </dev/null >"$dir/stdout" 2>"$dir/stderr")
  local status=$? want
  want=$(cat "$dir/expected/exit_code")
  if [ "$status" != "$want" ]; then
    fail "$lang/$name" "exit status $status, expected $want" "$dir/stderr"
  elif [ -f "$dir/expected/stdout" ] && ! cmp -s "$dir/stdout" "$dir/expected/stdout"; then
    fail "$lang/$name" "stdout differs (expected, then got):" "$dir/expected/stdout"
    head -n 8 "$dir/stdout" | sed 's/^/    | /'
  elif [ -f "$dir/expected/stderr" ] && ! cmp -s "$dir/stderr" "$dir/expected/stderr"; then
    fail "$lang/$name" "stderr differs" "$dir/stderr"
  else
    npass=$((npass + 1))
    passed[$lang]=$((${passed[$lang]:-0} + 1))
  fi
}

while IFS=$'\t' read -r lang name wasm; do
  total[$lang]=$((${total[$lang]:-0} + 1))
  run_one "$lang" "$name" "$wasm"
done <<<"$tests"

per_lang=""
for lang in $(printf '%s\n' "${!total[@]}" | sort); do
  per_lang+="${per_lang:+, }$lang ${passed[$lang]:-0}/${total[$lang]}"
done
echo "wasi-testsuite: $((npass + nfail + nskip)) tests: $npass passed, $nfail failed, $nskip skipped ($per_lang)"
[ "$nfail" = 0 ]
