#!/usr/bin/env bash
# CPU benchmark: each program built natively, by twasmc (from a plain and
# from a -msimd128 wasm build), by wasm2c + clang and run by node, timed
# interleaved; prints markdown tables of figures only.
#
# usage: tests/bench/cpu.sh [-n REPS] [-w WORKDIR] [PROGRAM...]
# environment: TWASMC (build/bin/twasmc), CLANG (clang-19), NODE (node),
# WASM2C (wasm2c), WASM2C_RT (/usr/share/wabt/wasm2c), WASI_SYSROOT (/usr);
# TWASMC_BEFORE: a second twasmc (with its own ../lib), timed in the same
# run as an extra column "before", for before/after comparisons.
set -euo pipefail

bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
reps=5
work=build/bench
while getopts 'n:w:' opt; do
	case $opt in
	n) reps=$OPTARG ;;
	w) work=$OPTARG ;;
	*) echo "usage: $0 [-n REPS] [-w WORKDIR] [PROGRAM...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
programs=("$@")
[ ${#programs[@]} -gt 0 ] || programs=(nbody mandel spectral matrix hashtab strsort bintrees vm)

TWASMC=${TWASMC:-build/bin/twasmc}
CLANG=${CLANG:-clang-19}
NODE=${NODE:-node}
WASM2C=${WASM2C:-wasm2c}
WASM2C_RT=${WASM2C_RT:-/usr/share/wabt/wasm2c}
WASI_SYSROOT=${WASI_SYSROOT:-/usr}
ways=(native twasmc simd wasm2c node)
ratio_ways=(twasmc simd wasm2c node)
if [ -n "${TWASMC_BEFORE:-}" ]; then
	ways+=(before)
	ratio_ways=(before "${ratio_ways[@]}")
fi

mkdir -p "$work"
# Helpers write their results into files under $work; bash keeps no state
# between steps except the list of ways that built for each program.
declare -A built

# seconds COMMAND...: runs COMMAND with output discarded, prints wall seconds.
seconds() {
	local start=$EPOCHREALTIME
	"$@" >/dev/null 2>&1 || return 1
	awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f\n", b - a }'
}

# run_way PROGRAM WAY: runs one built form of PROGRAM (output to stdout).
run_way() {
	local dir=$work/$1
	case $2 in
	native) "$dir/native" ;;
	twasmc) "$dir/twasmc" ;;
	simd) "$dir/simd" ;;
	before) "$dir/before" ;;
	wasm2c) "$dir/wasm2c" ;;
	node) "$NODE" --no-warnings "$bench_dir/bench_node.mjs" "$dir/prog.wasm" ;;
	esac
}

# build_wasm2c WASM DIR OUT: wasm2c translation plus one clang -O2 build.
build_wasm2c() {
	"$WASM2C" -n prog "$1" -o "$2/prog.c" &&
		"$CLANG" -O2 -w -I"$2" -I"$WASM2C_RT" "$bench_dir/wasm2c_main.c" "$2/prog.c" \
			"$WASM2C_RT/wasm-rt-impl.c" -o "$3" -lm
}

# build PROGRAM: all four forms; compile times into $dir/compile.<way>.
build() {
	local p=$1 dir=$work/$1 src=$bench_dir/$1.c
	mkdir -p "$dir/w2c"
	"$CLANG" -O2 "$src" -o "$dir/native" -lm
	"$CLANG" --target=wasm32-wasi --sysroot="$WASI_SYSROOT" -O2 "$src" -o "$dir/prog.wasm" -lm
	run_way "$p" native >"$dir/expected.out"
	built[$p]=native
	if seconds "$TWASMC" -O2 "$dir/prog.wasm" -o "$dir/twasmc" >"$dir/compile.twasmc"; then
		built[$p]+=" twasmc"
	fi
	# the same source as SIMD Wasm: clang vectorises for wasm's 128-bit SIMD
	if "$CLANG" --target=wasm32-wasi --sysroot="$WASI_SYSROOT" -O2 -msimd128 "$src" -o "$dir/prog-simd.wasm" -lm &&
		"$TWASMC" -O2 "$dir/prog-simd.wasm" -o "$dir/simd"; then
		built[$p]+=" simd"
	fi
	if seconds build_wasm2c "$dir/prog.wasm" "$dir/w2c" "$dir/wasm2c" >"$dir/compile.wasm2c"; then
		built[$p]+=" wasm2c"
	fi
	if [ -n "${TWASMC_BEFORE:-}" ] && "$TWASMC_BEFORE" -O2 "$dir/prog.wasm" -o "$dir/before"; then
		built[$p]+=" before"
	fi
	built[$p]+=" node"
	# A form whose output differs from native is reported n/a, not timed.
	local way ok=native
	for way in ${built[$p]}; do
		[ "$way" = native ] && continue
		if run_way "$p" "$way" 2>/dev/null | cmp -s - "$dir/expected.out"; then
			ok+=" $way"
		else
			echo "note: $p via $way: output differs from native" >&2
		fi
	done
	built[$p]=$ok
	rm -f "$dir"/time.*
}

# median FILE: median of the numbers in FILE, one a line.
median() {
	sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

has_way() {
	[[ " ${built[$1]} " == *" $2 "* ]]
}

bytes() {
	stat -c %s "$1"
}

# text_bytes EXE: size of the code and read-only data (debug info and
# symbols left out, so builds with and without -g compare).
text_bytes() {
	size "$1" | awk 'NR == 2 { print $1 }'
}

echo "building ${programs[*]} ..." >&2
for p in "${programs[@]}"; do
	build "$p"
done

echo "timing: $reps interleaved repetitions ..." >&2
for ((r = 1; r <= reps; r++)); do
	for p in "${programs[@]}"; do
		for way in "${ways[@]}"; do
			has_way "$p" "$way" || continue
			seconds run_way "$p" "$way" >>"$work/$p/time.$way"
		done
	done
done

echo "## Run time (median of $reps, seconds native; others as ratio to native)"
echo
header="| program | native s" rule="|---|---:"
for way in "${ratio_ways[@]}"; do
	case $way in
	before) header+=" | twasmc before" ;;
	simd) header+=" | twasmc -msimd128" ;;
	*) header+=" | $way" ;;
	esac
	rule+="|---:"
done
echo "$header |"
echo "$rule|"
declare -A log_sum count
for p in "${programs[@]}"; do
	native=$(median "$work/$p/time.native")
	row="| $p | $(printf '%.3f' "$native")"
	for way in "${ratio_ways[@]}"; do
		if has_way "$p" "$way"; then
			ratio=$(awk -v t="$(median "$work/$p/time.$way")" -v n="$native" 'BEGIN { printf "%.2f", t / n }')
			row+=" | $ratio"
			log_sum[$way]=$(awk -v s="${log_sum[$way]:-0}" -v x="$ratio" 'BEGIN { print s + log(x) }')
			count[$way]=$((${count[$way]:-0} + 1))
		else
			row+=" | n/a"
		fi
	done
	echo "$row |"
done
row="| geomean | "
for way in "${ratio_ways[@]}"; do
	row+=" | $(awk -v s="${log_sum[$way]:-0}" -v c="${count[$way]:-0}" 'BEGIN { if (c) printf "%.2f", exp(s / c); else print "n/a" }')"
done
echo "$row |"

echo
echo "## SIMD: twasmc of the -msimd128 build against the plain build (median of $reps; below 1: SIMD faster)"
echo
echo "| program | twasmc s | twasmc -msimd128 s | SIMD / plain |"
echo "|---|---:|---:|---:|"
for p in "${programs[@]}"; do
	if has_way "$p" twasmc && has_way "$p" simd; then
		plain=$(median "$work/$p/time.twasmc") vec=$(median "$work/$p/time.simd")
		echo "| $p | $(printf '%.3f' "$plain") | $(printf '%.3f' "$vec") | $(awk -v a="$vec" -v b="$plain" 'BEGIN { printf "%.2f", a / b }') |"
	else
		echo "| $p | n/a | n/a | n/a |"
	fi
done

echo
echo "## Compile time (s, wasm -> executable, one run) and output size (bytes; executables: text)"
echo
echo "| program | wasm | twasmc s | wasm2c+clang s | native exe | twasmc exe | wasm2c exe |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for p in "${programs[@]}"; do
	dir=$work/$p
	tw_s=n/a tw_b=n/a w2_s=n/a w2_b=n/a
	if has_way "$p" twasmc; then tw_s=$(cat "$dir/compile.twasmc") tw_b=$(text_bytes "$dir/twasmc"); fi
	if has_way "$p" wasm2c; then w2_s=$(cat "$dir/compile.wasm2c") w2_b=$(text_bytes "$dir/wasm2c"); fi
	echo "| $p | $(bytes "$dir/prog.wasm") | $tw_s | $w2_s | $(text_bytes "$dir/native") | $tw_b | $w2_b |"
done

# A large module: generated handlers, compiled once each way.
echo
echo "## Compile time of a large module (s)"
echo
dir=$work/large
mkdir -p "$dir/w2c"
rm -f "$dir/twasmc" "$dir/wasm2c"
python3 "$bench_dir/gen_large.py" >"$dir/large.c"
"$CLANG" --target=wasm32-wasi --sysroot="$WASI_SYSROOT" -O2 "$dir/large.c" -o "$dir/prog.wasm"
"$CLANG" -O2 "$dir/large.c" -o "$dir/native"
"$dir/native" >"$dir/expected.out"
tw_s=$(seconds "$TWASMC" -O2 "$dir/prog.wasm" -o "$dir/twasmc") || tw_s=failed
w2_s=$(seconds build_wasm2c "$dir/prog.wasm" "$dir/w2c" "$dir/wasm2c") || w2_s=failed
for way in twasmc wasm2c; do
	if [ -x "$dir/$way" ] && ! "$dir/$way" | cmp -s - "$dir/expected.out"; then
		echo "note: large via $way: output differs from native" >&2
	fi
done
echo "| module | wasm bytes | functions | twasmc s | wasm2c+clang s |"
echo "|---|---:|---:|---:|---:|"
echo "| large.c (gen_large.py) | $(bytes "$dir/prog.wasm") | $(grep -c '^static uint32_t handler_' "$dir/large.c") | $tw_s | $w2_s |"
