#!/usr/bin/env bash
# CPU benchmark: each program built natively against glibc and against musl,
# by twasmc (from a plain and from a -msimd128 wasm build), by wasm2c + clang
# and run by node, timed interleaved; prints markdown tables of figures only.
#
# usage: tests/bench/cpu.sh [-n REPS] [-w WORKDIR] [-s median|min] [-t wall|cpu|instr] [-p] [PROGRAM...]
#   -s: the statistic over the repetitions (default median); -t: wall-clock
#   time (default), CPU time (user + system of all threads, perf stat) or
#   instructions (G, valgrind --tool=cachegrind: repeatable under load; only
#   native, musl, twasmc and before, the others not being worth valgrind's
#   time).
# -p: time the builds an earlier run left under WORKDIR (copied to a
# machine without the compilers: clang, twasmc, wasm2c), no large module;
# with -t cpu and no perf there, user + system time from bash's time.
# environment: TWASMC (build/bin/twasmc), CLANG (clang-19), NODE (node),
# WASM2C (wasm2c), WASM2C_RT (/usr/share/wabt/wasm2c), WASI_SYSROOT (/usr),
# MUSL_DIR (/usr/lib/x86_64-linux-musl), MUSL_INCLUDE
# (/usr/include/x86_64-linux-musl), MUSL_CC (unset: clang-19 against musl;
# e.g. musl-gcc to build the musl column with that instead);
# LARGE=0: no compile-time row for the large generated module;
# TWASMC_BEFORE: a second twasmc (with its own ../lib), timed in the same
# run as an extra column "before", for before/after comparisons.
set -euo pipefail

bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
reps=5
work=build/bench
stat=median
clock=wall
prebuilt=0
usage="usage: $0 [-n REPS] [-w WORKDIR] [-s median|min] [-t wall|cpu|instr] [-p] [PROGRAM...]"
while getopts 'n:w:s:t:p' opt; do
	case $opt in
	p) prebuilt=1 ;;
	n) reps=$OPTARG ;;
	w) work=$OPTARG ;;
	s) stat=$OPTARG ;;
	t) clock=$OPTARG ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
case $stat/$clock in
median/wall | median/cpu | min/wall | min/cpu | median/instr | min/instr) ;;
*) echo "$usage" >&2; exit 2 ;;
esac
programs=("$@")
# The first eight are small kernels; then larger programs of the
# character of interpreters, databases and compressors; then two whose
# loops vectorise (bytes and floats), for the -msimd128 column.
kernels=" nbody mandel spectral matrix hashtab strsort bintrees vm "
larger=" interp kvstore dispatch recurse compress json "
vector=" imgproc dsp "
# shellcheck disable=SC2206
[ ${#programs[@]} -gt 0 ] || programs=($kernels $larger $vector)

TWASMC=${TWASMC:-build/bin/twasmc}
CLANG=${CLANG:-clang-19}
NODE=${NODE:-node}
WASM2C=${WASM2C:-wasm2c}
WASM2C_RT=${WASM2C_RT:-/usr/share/wabt/wasm2c}
WASI_SYSROOT=${WASI_SYSROOT:-/usr}
MUSL_DIR=${MUSL_DIR:-/usr/lib/x86_64-linux-musl}
MUSL_INCLUDE=${MUSL_INCLUDE:-/usr/include/x86_64-linux-musl}
ways=(native musl twasmc simd wasm2c node)
ratio_ways=(musl twasmc simd wasm2c node)
[ "$clock" = instr ] && ways=(native musl twasmc) ratio_ways=(musl twasmc)
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

# measure COMMAND...: seconds of COMMAND as chosen by -t (wall or CPU).
measure() {
	if [ "$clock" = wall ]; then
		seconds "$@"
		return
	fi
	if [ "$clock" = instr ]; then
		valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
			awk '/I *refs/ { gsub(",", "", $4); printf "%.3f\n", $4 / 1e9; found = 1 } END { exit !found }'
		return
	fi
	if ! command -v perf >/dev/null; then
		# no perf (the device machine): user + system time of the child
		local TIMEFORMAT='%U %S' t
		t=$( { time "$@" >/dev/null 2>&1; } 2>&1) || return 1
		awk -v t="$t" 'BEGIN { split(t, f, " "); printf "%.3f\n", f[1] + f[2] }'
		return
	fi
	local out=$work/perf-stat.txt
	perf stat -x, -e task-clock -o "$out" -- "$@" >/dev/null 2>&1 || return 1
	awk -F, '$3 == "task-clock" { printf "%.3f\n", $1 / 1000 }' "$out"
}

# way_cmd PROGRAM WAY: sets cmd to the command running one built form of
# PROGRAM (a plain command, so that perf stat can run it too).
way_cmd() {
	local dir=$work/$1
	case $2 in
	node) cmd=("$NODE" --no-warnings --stack-size=4000 "$bench_dir/bench_node.mjs" "$dir/prog.wasm") ;;
	*) cmd=("$dir/$2") ;;
	esac
}

# run_way PROGRAM WAY: runs one built form of PROGRAM (output to stdout).
run_way() {
	local cmd
	way_cmd "$1" "$2"
	"${cmd[@]}"
}

# build_wasm2c WASM DIR OUT: wasm2c translation plus one clang -O2 build.
build_wasm2c() {
	"$WASM2C" -n prog "$1" -o "$2/prog.c" &&
		"$CLANG" -O2 -w -I"$2" -I"$WASM2C_RT" "$bench_dir/wasm2c_main.c" "$2/prog.c" \
			"$WASM2C_RT/wasm-rt-impl.c" -o "$3" -lm
}

# build_musl SRC OUT: a static native build against musl instead of glibc,
# by the same clang as the glibc build (so only the C library differs),
# or by $MUSL_CC when set.
build_musl() {
	if [ -n "${MUSL_CC:-}" ]; then
		"$MUSL_CC" -O2 -static "$1" -o "$2" -lm
		return
	fi
	[ -f "$MUSL_DIR/libc.a" ] || return 1
	"$CLANG" -O2 -static -nostdinc -isystem "$MUSL_INCLUDE" -isystem "$("$CLANG" -print-resource-dir)/include" \
		-nostdlib "$MUSL_DIR/crt1.o" "$MUSL_DIR/crti.o" "$1" -L"$MUSL_DIR" -lm -lc \
		"$("$CLANG" -print-libgcc-file-name)" "$MUSL_DIR/crtn.o" -o "$2"
}

# keep_agreeing PROGRAM WAY...: built[PROGRAM] becomes native and the
# ways whose output equals native's; a form whose output differs is
# reported n/a, not timed.  Two tries: node crashes now and then (a
# segfault inside V8).
keep_agreeing() {
	local p=$1 dir=$work/$1 way ok=native
	shift
	for way in "$@"; do
		[ "$way" = native ] && continue
		if run_way "$p" "$way" 2>"$dir/$way.err" | cmp -s - "$dir/expected.out" ||
			run_way "$p" "$way" 2>"$dir/$way.err" | cmp -s - "$dir/expected.out"; then
			ok+=" $way"
		else
			echo "note: $p via $way: output differs from native (stderr in $dir/$way.err)" >&2
		fi
	done
	built[$p]=$ok
	rm -f "$dir"/time.*
}

# build PROGRAM: all forms; compile times into $dir/compile.<way>.
build() {
	local p=$1 dir=$work/$1 src=$bench_dir/$1.c
	mkdir -p "$dir/w2c"
	"$CLANG" -O2 "$src" -o "$dir/native" -lm
	"$CLANG" --target=wasm32-wasi --sysroot="$WASI_SYSROOT" -O2 "$src" -o "$dir/prog.wasm" -lm
	run_way "$p" native >"$dir/expected.out"
	built[$p]=native
	if build_musl "$src" "$dir/musl" 2>/dev/null; then
		built[$p]+=" musl"
	fi
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
	keep_agreeing "$p" ${built[$p]}
}

# summary FILE: median (or with -s min, the least) of the numbers in FILE,
# one a line.
summary() {
	if [ "$stat" = min ]; then
		sort -g "$1" | head -n 1
		return
	fi
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

# adopt PROGRAM: with -p, the forms an earlier run built under WORKDIR
# (copied to a machine without the compilers), each checked again against
# native's output there.
adopt() {
	local p=$1 dir=$work/$1 way present=()
	[ -x "$dir/native" ] && [ -f "$dir/expected.out" ] || { echo "note: $p: no native build in $dir" >&2; return 1; }
	run_way "$p" native | cmp -s - "$dir/expected.out" || { echo "note: $p: native output differs here" >&2; return 1; }
	for way in musl twasmc simd wasm2c before node; do
		if [ "$way" = node ]; then
			command -v "$NODE" >/dev/null && [ -f "$dir/prog.wasm" ] || continue
		else
			[ -x "$dir/$way" ] || continue
		fi
		present+=("$way")
	done
	keep_agreeing "$p" "${present[@]}"
}

if [ "$prebuilt" = 1 ]; then
	# another twasmc's builds, where the earlier run made them (TWASMC_BEFORE)
	if [ -z "${TWASMC_BEFORE:-}" ] && compgen -G "$work/*/before" >/dev/null; then
		ways+=(before)
		ratio_ways=(before "${ratio_ways[@]}")
	fi
	echo "adopting the builds under $work ..." >&2
	for p in "${programs[@]}"; do
		adopt "$p" || built[$p]=""
	done
else
	echo "building ${programs[*]} ..." >&2
	for p in "${programs[@]}"; do
		build "$p"
	done
fi

echo "timing: $reps interleaved repetitions ..." >&2
for ((r = 1; r <= reps; r++)); do
	for p in "${programs[@]}"; do
		for way in "${ways[@]}"; do
			has_way "$p" "$way" || continue
			way_cmd "$p" "$way"
			# A crashed run (node, see above) leaves no figure.
			measure "${cmd[@]}" >>"$work/$p/time.$way" || true
		done
	done
done

# ratio A B: A / B to two places.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'
}

# The ratio columns are to native glibc; "twasmc/musl" divides by the musl
# build instead, which leaves the C libraries' speed out of the comparison
# (wasi-libc is musl's code).
[ "$stat" = min ] && what="best" || what="median"
if [ "$clock" = instr ]; then
	echo "## Instructions ($what of $reps, cachegrind; G native glibc, others as ratio to it)"
else
	echo "## Run time ($what of $reps, $clock clock; seconds native glibc, others as ratio to it)"
fi
echo
columns=()
for way in "${ratio_ways[@]}"; do
	columns+=("$way")
	[ "$way" = twasmc ] && columns+=(twasmc/musl)
done
unit=s
[ "$clock" = instr ] && unit=G
header="| program | native $unit" rule="|---|---:"
for col in "${columns[@]}"; do
	case $col in
	before) header+=" | twasmc before" ;;
	musl) header+=" | native musl" ;;
	simd) header+=" | twasmc -msimd128" ;;
	*) header+=" | $col" ;;
	esac
	rule+="|---:"
done
echo "$header |"
echo "$rule|"
# group PROGRAM: which geomean row a program also counts in.
group() {
	if [[ $kernels == *" $1 "* ]]; then echo kernels; elif [[ $larger == *" $1 "* ]]; then echo larger
	elif [[ $vector == *" $1 "* ]]; then echo vector; else echo other; fi
}
declare -A log_sum count
for p in "${programs[@]}"; do
	g=$(group "$p")
	native=$(summary "$work/$p/time.native")
	row="| $p | $(printf '%.3f' "$native")"
	for col in "${columns[@]}"; do
		way=${col%/musl} base=$native
		if [ "$col" = twasmc/musl ]; then
			has_way "$p" musl && base=$(summary "$work/$p/time.musl") || way=none
		fi
		if has_way "$p" "$way"; then
			r=$(ratio "$(summary "$work/$p/time.$way")" "$base")
			row+=" | $r"
			for key in "$col" "$g:$col"; do
				log_sum[$key]=$(awk -v s="${log_sum[$key]:-0}" -v x="$r" 'BEGIN { print s + log(x) }')
				count[$key]=$((${count[$key]:-0} + 1))
			done
		else
			row+=" | n/a"
		fi
	done
	echo "$row |"
done
# geomean rows: one per group present (kernels: the first eight programs;
# larger: the interpreter, store, compressor and the like; vector: the
# vectorisable imgproc and dsp), then all.
for g in kernels larger vector other ""; do
	[ -n "$g" ] && [ "${count[$g:${columns[0]}]:-0}" = 0 ] && continue
	row="| geomean${g:+ ($g)} | "
	for col in "${columns[@]}"; do
		key=${g:+$g:}$col
		row+=" | $(awk -v s="${log_sum[$key]:-0}" -v c="${count[$key]:-0}" 'BEGIN { if (c) printf "%.2f", exp(s / c); else print "n/a" }')"
	done
	echo "$row |"
done

echo
# Instruction counts: only the table above (the SIMD and compile-time
# tables need the ways -t instr leaves out).
[ "$clock" = instr ] && exit 0
echo "## SIMD: twasmc of the -msimd128 build against the plain build ($what of $reps; below 1: SIMD faster)"
echo
echo "| program | twasmc s | twasmc -msimd128 s | SIMD / plain |"
echo "|---|---:|---:|---:|"
for p in "${programs[@]}"; do
	if has_way "$p" twasmc && has_way "$p" simd; then
		plain=$(summary "$work/$p/time.twasmc") vec=$(summary "$work/$p/time.simd")
		echo "| $p | $(printf '%.3f' "$plain") | $(printf '%.3f' "$vec") | $(ratio "$vec" "$plain") |"
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

# A large module: generated handlers, compiled once each way (LARGE=0 skips it).
[ "${LARGE:-1}" = 0 ] || [ "$prebuilt" = 1 ] && exit 0
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
