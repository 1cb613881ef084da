#!/usr/bin/env bash
# Real programs nobody here wrote (issue 22): SQLite's speedtest1, the Lua
# 5.4 interpreter and the mujs JavaScript engine running the scripts of
# tests/bench/real/, each built
# natively against glibc and against musl (by the same clang-19 -O2) and by
# twasmc -O2 from a wasm32-wasi build (and with -b also by twasmc -O2
# --skip-pass=bounds, not exact, only to measure what the bounds checks
# cost); outputs compared with native's; prints a markdown table of CPU
# times (best of REPS, interleaved, on one CPU through taskset when there
# is one) or instruction counts (valgrind --tool=cachegrind).  A bench:
# nothing in make check calls it.
#
# usage: tests/bench/real.sh [-n REPS] [-w WORKDIR] [-s SRCDIR] [-t cpu|instr] [-b] [-p] [PROGRAM...]
#   PROGRAM: sqlite, lua, mujs (default all three).
#   -s: a folder holding the Debian source packages (sqlite3_*.orig.tar.xz,
#   lua5.4_*.orig.tar.gz, mujs_*.orig.tar.xz) or their unpacked trees;
#   without it, or when it lacks one, `apt-get source` fetches them into
#   WORKDIR/src (deb-src lines needed); a program whose sources cannot be had is skipped with a
#   message.  Default WORKDIR build/real.
#   -t instr runs smaller sizes (valgrind is ~50x slower).
#   -p: time the builds an earlier run left under WORKDIR (copied to a
#   machine without the compilers or the sources); a WORKDIR/PROGRAM/before
#   executable (another twasmc's build, made by hand) is timed as a column.
# The sources are not part of the repository; how they are configured:
#   SQLite: the amalgamation made by its own configure && make sqlite3.c
#   (tclsh), -DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION
#   -DSQLITE_OS_OTHER=1 -DSQLITE_TEMP_STORE=3 with real/sqlite_vfs.c (the
#   unix VFS does not build for wasm32-wasi), database ":memory:",
#   --verify (its result hash is part of the output compared).
#   Lua: every file of src/ but luac.c, -DLUA_COMPAT_5_3 -include
#   real/lua_bench.h (errors abort instead of longjmp, which Wasm 2.0
#   lacks); scripts read from standard input (lua - N < script.lua).
#   mujs: one.c and main.c, -include real/mujs_bench.h (setjmp returns 0,
#   longjmp aborts, for the same reason); real/bench.js on standard input.
# environment: TWASMC (build/bin/twasmc), CLANG (clang-19), WASI_SYSROOT
# (/usr), MUSL_DIR (/usr/lib/x86_64-linux-musl), MUSL_INCLUDE
# (/usr/include/x86_64-linux-musl).
set -euo pipefail

bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
real_dir=$bench_dir/real
reps=3
work=build/real
srcdir=
clock=cpu
nobounds=0
prebuilt=0
usage="usage: $0 [-n REPS] [-w WORKDIR] [-s SRCDIR] [-t cpu|instr] [-b] [-p] [PROGRAM...]"
while getopts 'n:w:s:t:bp' opt; do
	case $opt in
	p) prebuilt=1 ;;
	n) reps=$OPTARG ;;
	w) work=$OPTARG ;;
	s) srcdir=$(cd "$OPTARG" && pwd) ;;
	t) clock=$OPTARG ;;
	b) nobounds=1 ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
case $clock in cpu | instr) ;; *) echo "$usage" >&2; exit 2 ;; esac
programs=("$@")
[ ${#programs[@]} -gt 0 ] || programs=(sqlite lua mujs)

TWASMC=$(realpath -m "${TWASMC:-build/bin/twasmc}")
CLANG=${CLANG:-clang-19}
WASI_SYSROOT=${WASI_SYSROOT:-/usr}
MUSL_DIR=${MUSL_DIR:-/usr/lib/x86_64-linux-musl}
MUSL_INCLUDE=${MUSL_INCLUDE:-/usr/include/x86_64-linux-musl}
mkdir -p "$work"
work=$(cd "$work" && pwd)
ways=(native musl twasmc)
[ "$nobounds" = 1 ] && ways+=(nobounds)
[ "$prebuilt" = 1 ] && ways+=(before)

# source_tree PATTERN_TAR FILE PACKAGE: prints the root of an unpacked tree
# holding FILE (e.g. test/speedtest1.c): from SRCDIR (unpacked, or its
# tarball unpacked into WORKDIR/src), else from apt-get source.
source_tree() {
	local tarpat=$1 file=$2 pkg=$3 d t
	mkdir -p "$work/src"
	for d in ${srcdir:+"$srcdir"/*/} "$work"/src/*/; do
		[ -f "$d$file" ] && { echo "${d%/}"; return 0; }
	done
	if [ -n "$srcdir" ]; then
		for t in "$srcdir"/$tarpat; do
			[ -f "$t" ] || continue
			tar -xf "$t" -C "$work/src" || continue
			for d in "$work"/src/*/; do
				[ -f "$d$file" ] && { echo "${d%/}"; return 0; }
			done
		done
	fi
	(cd "$work/src" && apt-get source "$pkg") >&2 || return 1
	for d in "$work"/src/*/; do
		[ -f "$d$file" ] && { echo "${d%/}"; return 0; }
	done
	return 1
}

# cc_ways OUTDIR FLAGS... -- SOURCES... -- WASMFLAGS...: native, musl and
# wasm builds of the same sources with the same flags, then twasmc.
cc_ways() {
	local out=$1 flags=() srcs=() wflags=()
	shift
	while [ "$1" != -- ]; do flags+=("$1"); shift; done
	shift
	while [ "$1" != -- ]; do srcs+=("$1"); shift; done
	shift
	wflags=("$@")
	"$CLANG" -O2 "${flags[@]}" "${srcs[@]}" -o "$out/native" -lm
	"$CLANG" -O2 -static -nostdinc -isystem "$MUSL_INCLUDE" -isystem "$("$CLANG" -print-resource-dir)/include" \
		"${flags[@]}" -nostdlib "$MUSL_DIR/crt1.o" "$MUSL_DIR/crti.o" "${srcs[@]}" -L"$MUSL_DIR" -lm -lc \
		"$("$CLANG" -print-libgcc-file-name)" "$MUSL_DIR/crtn.o" -o "$out/musl"
	"$CLANG" --target=wasm32-wasi --sysroot="$WASI_SYSROOT" -O2 "${flags[@]}" "${wflags[@]}" "${srcs[@]}" \
		-o "$out/prog.wasm" -lm
	"$TWASMC" -O2 "$out/prog.wasm" -o "$out/twasmc"
	if [ "$nobounds" = 1 ]; then
		"$TWASMC" -O2 --skip-pass=bounds "$out/prog.wasm" -o "$out/nobounds"
	fi
}

build_sqlite() {
	local tree out=$work/sqlite
	tree=$(source_tree 'sqlite3_*.orig.tar.*' test/speedtest1.c sqlite3) || return 1
	mkdir -p "$out/amal"
	if [ ! -f "$out/amal/sqlite3.c" ]; then
		(cd "$out/amal" && "$tree/configure" --disable-tcl --disable-readline >configure.log 2>&1 &&
			make sqlite3.c >make.log 2>&1) || { echo "sqlite: amalgamation failed (tclsh?), see $out/amal" >&2; return 1; }
	fi
	[ -x "$out/twasmc" ] && { [ "$nobounds" = 0 ] || [ -x "$out/nobounds" ]; } && return 0
	cc_ways "$out" -DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_OS_OTHER=1 \
		-DSQLITE_TEMP_STORE=3 -I"$out/amal" \
		-- "$tree/test/speedtest1.c" "$out/amal/sqlite3.c" "$real_dir/sqlite_vfs.c" --
}

build_lua() {
	local tree out=$work/lua srcs f
	tree=$(source_tree 'lua5.4_*.orig.tar.*' src/lvm.c lua5.4) || return 1
	mkdir -p "$out"
	[ -x "$out/twasmc" ] && { [ "$nobounds" = 0 ] || [ -x "$out/nobounds" ]; } && return 0
	srcs=()
	for f in "$tree"/src/*.c; do
		[ "${f##*/}" = luac.c ] || srcs+=("$f")
	done
	cc_ways "$out" -DLUA_COMPAT_5_3 -include "$real_dir/lua_bench.h" -- "${srcs[@]}" -- \
		-I"$real_dir/wasi-include" -D_WASI_EMULATED_SIGNAL -D_WASI_EMULATED_PROCESS_CLOCKS \
		-lwasi-emulated-signal -lwasi-emulated-process-clocks
}

build_mujs() {
	local tree out=$work/mujs
	tree=$(source_tree 'mujs_*.orig.tar.*' one.c mujs) || return 1
	mkdir -p "$out"
	[ -x "$out/twasmc" ] && { [ "$nobounds" = 0 ] || [ -x "$out/nobounds" ]; } && return 0
	cc_ways "$out" -include "$real_dir/mujs_bench.h" -I"$tree" -- "$tree/one.c" "$tree/main.c" -- \
		-I"$real_dir/wasi-include"
}

# rows: NAME PROGRAM ARGS-FOR-CPU ARGS-FOR-INSTR [STDIN]
rows=()
add_rows() {
	case $1 in
	sqlite) rows+=("speedtest1|sqlite|--verify --size 60 :memory:|--verify --size 10 :memory:|") ;;
	lua)
		rows+=("lua fib|lua|- 32|- 30|fib.lua")
		rows+=("lua strings|lua|- 300000|- 200000|strings.lua")
		rows+=("lua loops|lua|- 150|- 100|loops.lua")
		rows+=("lua trees|lua|- 14|- 12|trees.lua")
		;;
	mujs) rows+=("mujs bench.js|mujs|||bench.js") ;;
	esac
}

# measure DIR WAY ARGS STDIN: prints seconds (user + system) or G instructions
pin=()
command -v taskset >/dev/null && taskset -c 1 true 2>/dev/null && pin=(taskset -c 1)
measure() {
	local dir=$1 way=$2 args=$3 in=${4:-/dev/null} t
	# shellcheck disable=SC2086
	if [ "$clock" = instr ]; then
		valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
			"$dir/$way" $args <"$in" >/dev/null 2>"$dir/cg.err" || true
		awk '/== I *refs:/ { gsub(",", "", $4); printf "%.3f\n", $4 / 1e9 }' "$dir/cg.err"
		return
	fi
	# shellcheck disable=SC2086
	t=$( { TIMEFORMAT='%U %S'; time "${pin[@]}" "$dir/$way" $args <"$in" >/dev/null 2>&1 || true; } 2>&1)
	awk -v t="$t" 'BEGIN { split(t, f, " "); printf "%.3f\n", f[1] + f[2] }'
}

# normalise: speedtest1 prints each test's time; drop those
normalise() { sed 's/ *[0-9.]*s$//'; }

# run_out DIR WAY ARGS STDIN: the output, normalised, then the exit status
# (mujs exits 1 after running standard input without error)
run_out() {
	local st=0
	# shellcheck disable=SC2086
	"$1/$2" $3 <"$4" >"$1/out.$2" 2>&1 || st=$?
	normalise <"$1/out.$2"
	echo "exit $st"
}

for p in "${programs[@]}"; do
	case $p in sqlite | lua | mujs) ;; *) echo "$0: unknown program $p (sqlite, lua, mujs)" >&2; exit 2 ;; esac
	if [ "$prebuilt" = 1 ]; then
		[ -x "$work/$p/twasmc" ] || { echo "$p: skipped: no build under $work/$p"; continue; }
	elif ! "build_$p"; then
		echo "$p: skipped: sources or build not available (see above)"
		continue
	fi
	add_rows "$p"
done
[ ${#rows[@]} -gt 0 ] || exit 0

declare -A best
bad=0
for row in "${rows[@]}"; do
	IFS='|' read -r name prog cargs iargs script <<<"$row"
	dir=$work/$prog args=$cargs in=/dev/null
	[ "$clock" = instr ] && args=$iargs
	[ -n "$script" ] && in=$real_dir/$script
	run_out "$dir" native "$args" "$in" >"$dir/expected.out"
	for way in "${ways[@]:1}"; do
		[ -x "$dir/$way" ] || continue
		if ! run_out "$dir" "$way" "$args" "$in" | cmp -s - "$dir/expected.out"; then
			echo "$name: $way output differs from native's" >&2
			bad=1
		fi
	done
	n=$reps
	[ "$clock" = instr ] && n=1
	for ((i = 0; i < n; i++)); do
		for way in "${ways[@]}"; do
			[ -x "$dir/$way" ] || continue
			v=$(measure "$dir" "$way" "$args" "$in") || { echo "$name: $way failed" >&2; v=; }
			k="$name|$way"
			if [ -n "$v" ] && { [ -z "${best[$k]:-}" ] || awk -v a="$v" -v b="${best[$k]}" 'BEGIN { exit !(a < b) }'; }; then
				best[$k]=$v
			fi
		done
	done
done

unit="CPU s, best of $reps"
[ "$clock" = instr ] && unit="G instructions"
header="| program ($unit) |"
sep="|---|"
for way in "${ways[@]}"; do header+=" $way |"; sep+="---:|"; done
header+=" twasmc / native | twasmc / musl |"
sep+="---:|---:|"
[ "$prebuilt" = 1 ] && header+=" twasmc / before |" sep+="---:|"
[ "$nobounds" = 1 ] && header+=" nobounds / native |" sep+="---:|"
echo "$header"
echo "$sep"
for row in "${rows[@]}"; do
	IFS='|' read -r name prog cargs iargs script <<<"$row"
	line="| $name |"
	for way in "${ways[@]}"; do line+=" ${best[$name|$way]:-} |"; done
	for pair in twasmc/native twasmc/musl twasmc/before nobounds/native; do
		[ "$pair" = nobounds/native ] && [ "$nobounds" = 0 ] && continue
		[ "$pair" = twasmc/before ] && [ "$prebuilt" = 0 ] && continue
		a=${best[$name|${pair%/*}]:-} b=${best[$name|${pair#*/}]:-}
		if [ -n "$a" ] && [ -n "$b" ]; then
			line+=" $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }') |"
		else
			line+=" |"
		fi
	done
	echo "$line"
done
exit $bad
