#!/usr/bin/env bash
# Differential fuzzing: random valid Wasm 2.0 modules from binaryen
# (wasm-opt -ttf over random bytes), every export run in node's V8
# (harness.mjs) and in twasmc (twasm-fuzz-diff: -O0 and -O2, guard and
# explicit bounds checks), outputs compared line by line (NaN as NaN).
#
# usage: run.sh N [JOBS]   environment: FUZZ_DIR (build/fuzz-diff),
# FUZZ_SIMD=1 (SIMD in the modules), FUZZ_DENAN=0 (NaNs kept), FUZZ_BATCH
# (modules a process runs, default 20), FUZZ_BYTES (random input per
# module, default 3000), FUZZ_CONFIGS ("O0g O0e O2g O2e"),
# TWASM_FUZZ_DIFF, NODE, TWASM_FUZZ_MEMDUMP=P (both sides write memory
# after the call of export i to P.i; for reducing a difference).  Every module comes from /dev/urandom:
# runs at different times never repeat one another's modules.
# Prints "fuzz-diff: N agreed, M differ"; each differing module is kept as
# FUZZ_DIR/differ/NAME/NAME.wasm with both outputs beside it (until the
# next run in FUZZ_DIR).  Exit status 1 when any differ.
set -uo pipefail

n=${1:?usage: run.sh N [JOBS]}
jobs=${2:-2}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=${FUZZ_DIR:-build/fuzz-diff}
tool=${TWASM_FUZZ_DIFF:-build/bin/twasm-fuzz-diff}
node=${NODE:-node}
bytes=${FUZZ_BYTES:-3000}
configs=${FUZZ_CONFIGS:-O0g O0e O2g O2e}
features="--enable-sign-ext --enable-mutable-globals --enable-nontrapping-float-to-int
  --enable-bulk-memory --enable-multivalue"
[ "${FUZZ_SIMD:-0}" = 1 ] && features+=" --enable-simd"
# NaN bits of arithmetic results are the engine's choice (the spec allows
# any arithmetic NaN): binaryen's --denan makes each such result 0, so that
# a NaN stored to memory does not make the memory hashes differ.  Results
# and logged values print NaN as "nan" anyway.
# binaryen 108's --denan leaves SIMD alone: canon_nan.mjs does the same
# for f32x4/f64x2 results (SIMD modules, through wasm-dis and wasm-as).
denan=--denan canon=
[ "${FUZZ_SIMD:-0}" = 1 ] && canon=1
[ "${FUZZ_DENAN:-1}" = 0 ] && denan='' canon=''
# binaryen 108 fuzzes reference types of its own draft (non-nullable
# references, funcref as a subtype of externref): most such modules are no
# valid Wasm 2.0.  Every fourth module has them, and only those wabt's
# wasm-validate accepts (Wasm 2.0) are run.

for t in wasm-opt wasm-validate wasm-dis wasm-as "$node"; do
	command -v "$t" >/dev/null || { echo "fuzz-diff: skipped: $t not installed"; exit 0; }
done
[ -x "$tool" ] || { echo "fuzz-diff: $tool missing (make $tool)" >&2; exit 2; }
# a run counts and keeps only its own modules (names repeat across runs)
rm -rf "$dir/work" "$dir/differ"
mkdir -p "$dir/work" "$dir/differ"

# A batch of modules: generate each, run the valid ones in one node and
# one twasm-fuzz-diff process (each starts once: most of a module's cost
# otherwise), compare each configuration with V8.  A module whose batch
# output is incomplete (a crash or the batch's time limit) runs alone.
gen() {
	local i=$1 w="$dir/work/$1" f=$features
	[ $((10#${i#m} % 4)) = 0 ] && f+=" --enable-reference-types"
	head -c "$bytes" /dev/urandom >"$w.dat"
	# shellcheck disable=SC2086
	wasm-opt "$w.dat" -ttf $f $denan -o "$w.wasm" 2>/dev/null && wasm-validate "$w.wasm" 2>/dev/null
}
# compare W [whole]: "agree" when each configuration's lines in W.tw ("== C"
# on) are W.v8's, else "differ"; "incomplete v8|tw" when a batch output
# lacks its final "== end" (unless whole: outputs of a module run alone);
# "skip" when V8 rejects the module as invalid (wasm-validate accepted it:
# seen with a typed select of funcref set to an externref local) and every
# configuration of twasmc rejects it at compile time too.
compare() {
	awk -v configs="$configs" -v whole="${2:-}" '
		BEGIN { ok = 1; rejected = 1; split(configs, w, " "); for (i in w) want[w[i]] = 1 }
		FILENAME == ARGV[1] { v8[++n] = $0; next }
		!started { started = 1; if (n && v8[n] == "== end") { n--; v8end = 1 } }
		/^== / {
			if (on) { ok = ok && k == n; rejected = rejected && k == 1 }
			on = 0; k = 0
			if ($0 == "== end") { twend = 1; next }
			c = substr($0, 4); on = c in want; seen[c] = 1; next
		}
		on { k++; ok = ok && k <= n && v8[k] == $0; rejected = rejected && k == 1 && $0 ~ /^compile error / }
		END {
			if (!started && n && v8[n] == "== end") v8end = 1
			if (on) { ok = ok && k == n; rejected = rejected && k == 1 }
			m = (v8end || whole ? "" : " v8") (twend || whole ? "" : " tw")
			if (m != "") { print "incomplete" m; exit }
			for (c in want) ok = ok && (c in seen)
			if (n == 1 && v8[1] == "invalid") {
				for (c in want) rejected = rejected && (c in seen)
				print rejected ? "skip" : "differ"
				exit
			}
			print ok ? "agree" : "differ"
		}' "$1.v8" "$1.tw" 2>/dev/null || echo differ
}
# canon_nan: the batch's modules (mods) with NaN lanes of f32x4/f64x2
# results made 0; one that does not come back valid is skipped.
canon_nan() {
	local w pairs=() kept=() all="$features --enable-reference-types"
	for w in "${mods[@]}"; do
		# shellcheck disable=SC2086
		wasm-dis $all "$w" -o "${w%.wasm}.in.wat" 2>/dev/null && pairs+=("${w%.wasm}.in.wat" "${w%.wasm}.wat")
	done
	[ ${#pairs[@]} -gt 0 ] && "$node" "$here/canon_nan.mjs" "${pairs[@]}"
	for w in "${mods[@]}"; do
		# shellcheck disable=SC2086
		if wasm-as $all "${w%.wasm}.wat" -o "$w" 2>/dev/null && wasm-validate "$w" 2>/dev/null; then
			kept+=("$w")
		else
			echo skip >"${w%.wasm}.status"
		fi
		rm -f "${w%.wasm}.in.wat" "${w%.wasm}.wat"
	done
	mods=("${kept[@]}")
}
batch() {
	local i w mods=() verdict
	for i; do
		if gen "$i"; then mods+=("$dir/work/$i.wasm"); else echo skip >"$dir/work/$i.status"; fi
	done
	[ ${#mods[@]} -gt 0 ] && [ -n "$canon" ] && canon_nan
	local k=${#mods[@]}
	if [ "$k" -gt 1 ]; then  # one module alone runs below
		timeout $((30 + 5 * k)) "$node" --no-warnings "$here/harness.mjs" "${mods[@]}" >/dev/null 2>&1
		# shellcheck disable=SC2086
		timeout $((60 + 10 * k)) "$tool" "${mods[@]}" $configs >/dev/null 2>&1
	fi
	for w in "${mods[@]}"; do
		w=${w%.wasm} i=${w##*/}
		touch "$w.v8" "$w.tw"
		verdict=$(compare "$w")
		if [ "${verdict%% *}" = incomplete ]; then
			[[ $verdict == *v8* ]] && timeout 60 "$node" --no-warnings "$here/harness.mjs" "$w.wasm" >"$w.v8" 2>&1
			# shellcheck disable=SC2086
			[[ $verdict == *tw* ]] && timeout 300 "$tool" "$w.wasm" $configs >"$w.tw" 2>&1
			verdict=$(compare "$w" whole)
		fi
		if [ "$verdict" = differ ]; then
			sed -i '$ { /^== end$/d }' "$w.v8" "$w.tw"
			mkdir -p "$dir/differ/$i"
			mv "$w.wasm" "$w.v8" "$w.tw" "$dir/differ/$i/"
		fi
		echo "$verdict" >"$w.status"
	done
	for i; do rm -f "$dir/work/$i".{dat,wasm,v8,tw}; done
}
export -f gen compare canon_nan batch
export dir bytes features denan canon configs node tool here

start=$(date +%s)
seq -f "m%06g" 1 "$n" | xargs -P "$jobs" -n "${FUZZ_BATCH:-20}" bash -c 'batch "$@"' batch
agreed=$(cat "$dir"/work/*.status 2>/dev/null | grep -c '^agree$')
differ=$(cat "$dir"/work/*.status 2>/dev/null | grep -c '^differ$')
skipped=$(cat "$dir"/work/*.status 2>/dev/null | grep -c '^skip$')
echo "fuzz-diff: $agreed agreed, $differ differ ($skipped skipped: no valid Wasm 2.0 module; $(($(date +%s) - start)) s; configurations: $configs)"
[ "$differ" -eq 0 ]
