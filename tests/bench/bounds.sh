#!/usr/bin/env bash
# Bounds-check modes on the CPU benchmark (issue 18): each program of
# tests/bench built once for wasm32-wasi, then by twasmc -O2 three ways,
# timed interleaved (CPU time: user + system of all threads, perf stat):
#   old guard   --skip-pass=bounds: guard pages alone, as before exact traps
#   default     guard pages plus the bounds pass (exact traps)
#   explicit    --bounds-checks=explicit: a compare before every access
# Each executable's output is checked against the native build's first.
# -t ir counts instructions instead (valgrind's cachegrind, no cache
# simulation: the same count every run, so one run each; about 30 times
# slower than running natively); a count is kept in WORKDIR with the
# executable's checksum and reused while the executable stays the same.
# -b BASE adds a fourth way, "before": the default mode built by another
# twasmc (BASE), to compare a change with the tree before it in one run.
#
# usage: tests/bench/bounds.sh [-n REPS] [-w WORKDIR] [-s median|min] [-t cpu|ir] [-b BASE] [PROGRAM...]
# environment: TWASMC (build/bin/twasmc), CLANG (clang-19), WASI_SYSROOT (/usr)
set -euo pipefail

bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
reps=5
work=build/bench-bounds
stat=median
clock=cpu
base=
usage="usage: $0 [-n REPS] [-w WORKDIR] [-s median|min] [-t cpu|ir] [-b BASE] [PROGRAM...]"
while getopts 'n:w:s:t:b:' opt; do
	case $opt in
	n) reps=$OPTARG ;;
	w) work=$OPTARG ;;
	s) stat=$OPTARG ;;
	t) clock=$OPTARG ;;
	b) base=$OPTARG ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
case $stat/$clock in median/cpu | min/cpu | median/ir | min/ir) ;; *) echo "$usage" >&2; exit 2 ;; esac
[ "$clock" = ir ] && reps=1
programs=("$@")
# shellcheck disable=SC2206
[ ${#programs[@]} -gt 0 ] || programs=(nbody mandel spectral matrix hashtab strsort bintrees vm
	interp kvstore dispatch recurse compress imgproc dsp)
TWASMC=${TWASMC:-build/bin/twasmc}
CLANG=${CLANG:-clang-19}
WASI_SYSROOT=${WASI_SYSROOT:-/usr}
if [ "$clock" = ir ]; then
	command -v valgrind >/dev/null || { echo "bounds.sh: valgrind is needed for -t ir" >&2; exit 2; }
else
	command -v perf >/dev/null || { echo "bounds.sh: perf (linux-perf) is needed for CPU time" >&2; exit 2; }
fi

ways=(old default explicit)
declare -A flags=([old]="--skip-pass=bounds" [default]="" [explicit]="--bounds-checks=explicit" [before]="")
declare -A compiler=([old]=$TWASMC [default]=$TWASMC [explicit]=$TWASMC [before]=$base)
[ -z "$base" ] || ways=(old before default explicit)

mkdir -p "$work"
for p in "${programs[@]}"; do
	d=$work/$p
	mkdir -p "$d"
	# what is newer than its inputs is kept from an earlier run
	if [ ! "$d/prog.wasm" -nt "$bench_dir/$p.c" ] || [ ! -s "$d/expected.out" ]; then
		"$CLANG" -O2 "$bench_dir/$p.c" -o "$d/native" -lm
		"$CLANG" --target=wasm32-wasi --sysroot="$WASI_SYSROOT" -O2 "$bench_dir/$p.c" -o "$d/prog.wasm" -lm
		"$d/native" >"$d/expected.out"
	fi
	for w in "${ways[@]}"; do
		if [ ! "$d/$w" -nt "$d/prog.wasm" ] || [ ! "$d/$w" -nt "${compiler[$w]}" ]; then
			# shellcheck disable=SC2086
			"${compiler[$w]}" -O2 ${flags[$w]} "$d/prog.wasm" -o "$d/$w"
		fi
		"$d/$w" >"$d/$w.out" || { echo "bounds.sh: $p ($w) failed" >&2; exit 1; }
		cmp -s "$d/expected.out" "$d/$w.out" || { echo "bounds.sh: $p ($w): output differs from native" >&2; exit 1; }
		: >"$d/time.$w"
	done
done

# interleaved: each repetition runs each program each way
for ((r = 0; r < reps; r++)); do
	for p in "${programs[@]}"; do
		for w in "${ways[@]}"; do
			if [ "$clock" = ir ]; then  # instructions, in millions
				sum=$(sha256sum <"$work/$p/$w" | cut -d' ' -f1)
				if [ "$(cut -d' ' -f1 "$work/$p/ir.$w" 2>/dev/null)" != "$sum" ]; then
					valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
						"$work/$p/$w" 2>"$work/cg.txt" >/dev/null
					awk -v s="$sum" '/I +refs:/ { gsub(",", "", $NF); printf "%s %.1f\n", s, $NF / 1e6 }' \
						"$work/cg.txt" >"$work/$p/ir.$w"
				fi
				cut -d' ' -f2 "$work/$p/ir.$w" >>"$work/$p/time.$w"
				continue
			fi
			perf stat -x, -e task-clock -o "$work/perf.txt" -- "$work/$p/$w" >/dev/null 2>&1
			awk -F, '$3 == "task-clock" { printf "%.4f\n", $1 / 1000 }' "$work/perf.txt" >>"$work/$p/time.$w"
		done
	done
done

summary() { sort -g "$1" | awk -v s="$stat" '{ v[NR] = $1 } END { print s == "min" ? v[1] : (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

if [ "$clock" = ir ]; then
	echo "Instructions executed (millions, cachegrind; ratios to old guard, lower is better)"
	unit=M fmt=%.0f
else
	echo "CPU time, $stat of $reps (seconds; ratios to old guard, lower is better)"
	unit=s fmt=%.3f
fi
echo
# the columns: each way's figure, then each way's ratio to old guard
cols=("${ways[@]:1}")
printf '| program | old guard %s |' "$unit"
for w in "${cols[@]}"; do printf ' %s %s |' "$w" "$unit"; done
for w in "${cols[@]}"; do printf ' %s / old |' "$w"; done
printf '\n|---|---:|'
for w in "${cols[@]}" "${cols[@]}"; do printf -- '---:|'; done
echo
for p in "${programs[@]}"; do
	printf '%s' "$p"
	for w in "${ways[@]}"; do printf ' %s' "$(summary "$work/$p/time.$w")"; done
	echo
done | awk -v f="$fmt" '{ row = "| " $1 " | " sprintf(f, $2) " |"; rat = ""
	for (k = 3; k <= NF; k++) { r = $k / $2; lg[k] += log(r); row = row " " sprintf(f, $k) " |"; rat = rat " " sprintf("%.3f", r) " |" }
	print row rat; n++; nf = NF }
	END { row = "| geomean | |"; rat = ""
	for (k = 3; k <= nf; k++) { g = sprintf("%.3f", exp(lg[k] / n)); row = row " |"; rat = rat " " (k == nf - 1 ? "**" g "**" : g) " |" }
	print row rat }'
