#!/usr/bin/env bash
# simd_count.sh: instructions executed (cachegrind, whole program) by each
# benchmark program built natively, as plain Wasm and as -msimd128 Wasm
# through twasmc -O2, and the SIMD / plain ratio; the count is the same on
# every run, unlike times on a shared machine.  Outputs are compared with
# the native one.
# usage: tests/bench/simd_count.sh [-w WORKDIR] PROGRAM...   (TWASMC, CLANG)
set -euo pipefail
bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=build/simd-count
[ "${1:-}" = -w ] && { work=$2; shift 2; }
twasmc=${TWASMC:-build/bin/twasmc}
clang=${CLANG:-clang-19}
command -v valgrind > /dev/null || { echo "simd_count: skipped: valgrind is not installed"; exit 0; }
count() { valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$1" 2>&1 > "$2" |
	tr -d , | awk '/I *refs/ { print $NF }'; }
echo "| program | native | plain | SIMD | SIMD / plain |"
echo "|---|---:|---:|---:|---:|"
for p in "$@"; do
	d=$work/$p
	mkdir -p "$d"
	"$clang" -O2 "$bench_dir/$p.c" -o "$d/native" -lm
	"$clang" --target=wasm32-wasi --sysroot=/usr -O2 "$bench_dir/$p.c" -o "$d/plain.wasm" -lm
	"$clang" --target=wasm32-wasi --sysroot=/usr -O2 -msimd128 "$bench_dir/$p.c" -o "$d/simd.wasm" -lm
	"$twasmc" -O2 "$d/plain.wasm" -o "$d/plain"
	"$twasmc" -O2 "$d/simd.wasm" -o "$d/simd"
	n=$(count "$d/native" "$d/native.out") pl=$(count "$d/plain" "$d/plain.out") si=$(count "$d/simd" "$d/simd.out")
	same=""
	cmp -s "$d/native.out" "$d/plain.out" && cmp -s "$d/native.out" "$d/simd.out" || same=" (output differs)"
	awk -v p="$p" -v n="$n" -v pl="$pl" -v si="$si" -v s="$same" \
		'BEGIN { printf "| %s | %.3f G | %.3f G | %.3f G | %.3f%s |\n", p, n / 1e9, pl / 1e9, si / 1e9, si / pl, s }'
done
