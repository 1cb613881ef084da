#!/usr/bin/env bash
# Checks of make fuzz-diff's own machinery, run before the fuzzing: the
# comparison of outputs (run.sh's compare), canon_nan.mjs (NaN lanes of a
# SIMD result made 0, the module still valid), and the batch mode of both
# sides against one module run alone.  Prints "fuzz-diff selftest: ok" or
# what failed (exit status 1).
# usage: selftest.sh   environment as run.sh (TWASM_FUZZ_DIFF, NODE)
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tool=${TWASM_FUZZ_DIFF:-build/bin/twasm-fuzz-diff}
node=${NODE:-node}
for t in wasm-opt wasm-dis wasm-as wat2wasm "$node"; do
	command -v "$t" >/dev/null || { echo "fuzz-diff selftest: skipped: $t not installed"; exit 0; }
done
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "fuzz-diff selftest: $*"; fail=1; }

# run.sh's compare, on outputs written here
eval "$(sed -n '/^compare() {/,/^}/p' "$here/run.sh")"
export configs="O0g O2e"  # compare's
expect() {  # V8-LINES TW-LINES WHOLE WANT
	printf '%b' "$1" >"$tmp/c.v8"
	printf '%b' "$2" >"$tmp/c.tw"
	local got
	got=$(compare "$tmp/c" "$3")
	[ "$got" = "$4" ] || bad "compare '$1' with '$2': $got, not $4"
}
expect 'a\nb\n== end\n' '== O0g\na\nb\n== O2e\na\nb\n== end\n' '' agree
expect 'a\nb\n' '== O0g\na\nb\n== O2e\na\nb\n== end\n' '' 'incomplete v8'
expect 'a\nb\n== end\n' '== O0g\na\nb\n== O2e\na\n' '' 'incomplete tw'
expect 'a\nb\n' '== O0g\na\nb\n== O2e\na\nb\n' whole agree
expect 'a\nb\n' '== O0g\na\nb\n== O2e\na\n' whole differ
expect 'a\nb\n' '== O0g\na\nb\n== O2e\na\nb\nc\n' whole differ
expect 'a\nb\n' '== O0g\na\nb\n== O2e\na\nc\n' whole differ
expect 'a\nb\n' '== O0g\na\nb\n' whole differ
# a module V8 rejects (wasm-validate let it through): skipped only when every
# configuration of twasmc rejects it as well, and then with its one line
expect 'invalid\n' '== O0g\ncompile error type mismatch\n== O2e\ncompile error type mismatch\n' whole skip
expect 'invalid\n' '== O0g\ncompile error type mismatch\n== O2e\nresult\n' whole differ
expect 'invalid\n' '== O0g\ncompile error type mismatch\n' whole differ
expect 'invalid\n' '== O0g\ncompile error x\n== O2e\ncompile error x\nresult\n' whole differ
expect '' '== O0g\n== O2e\n' whole agree
expect 'a\n' '' whole differ

# canon_nan.mjs: f64x2.max of a NaN lane (V8 and x86 choose its bits
# differently) is wrapped, and stores zeros after it
cat >"$tmp/n.wat" <<'EOF'
(module
  (memory (export "memory") 1)
  (func (export "f")
    (v128.store (i32.const 0)
      (f64x2.max (v128.const i64x2 -1 0) (v128.const f64x2 1 2)))))
EOF
all="--enable-simd --enable-sign-ext --enable-mutable-globals --enable-nontrapping-float-to-int
  --enable-bulk-memory --enable-multivalue --enable-reference-types"
# shellcheck disable=SC2086
if wat2wasm "$tmp/n.wat" -o "$tmp/n0.wasm" && wasm-dis $all "$tmp/n0.wasm" -o "$tmp/in.wat" &&
	"$node" "$here/canon_nan.mjs" "$tmp/in.wat" "$tmp/out.wat" && wasm-as $all "$tmp/out.wat" -o "$tmp/n.wasm"; then
	grep -qF "call \$__canon_f64x2 (f64x2.max" "$tmp/out.wat" || bad "canon_nan.mjs did not wrap f64x2.max"
	TWASM_FUZZ_MEMDUMP="$tmp/mem" "$node" --no-warnings "$here/harness.mjs" "$tmp/n.wasm" >/dev/null
	[ "$(od -A n -t x1 -N 16 "$tmp/mem.1" | tr -d ' \n')" = 00000000000000000000000000000040 ] ||
		bad "canon_nan.mjs: memory after f: $(od -A n -t x1 -N 16 "$tmp/mem.1")"
else
	bad "canon_nan.mjs: the module did not come back"
fi

# batch mode: each module's lines as when run alone, then "== end"
if [ -x "$tool" ]; then
	cp "$tmp/n.wasm" "$tmp/b.wasm"
	printf '(module (func (export "g") (result i32) (i32.const 7)))' >"$tmp/g.wat"
	wat2wasm "$tmp/g.wat" -o "$tmp/g.wasm"
	"$node" --no-warnings "$here/harness.mjs" "$tmp/b.wasm" "$tmp/g.wasm"
	"$tool" "$tmp/b.wasm" "$tmp/g.wasm" O0g O2e
	for m in b g; do
		{ "$node" --no-warnings "$here/harness.mjs" "$tmp/$m.wasm"; echo "== end"; } | cmp -s - "$tmp/$m.v8" ||
			bad "harness.mjs: batch output of $m.wasm differs from its run alone"
		{ "$tool" "$tmp/$m.wasm" O0g O2e; echo "== end"; } | cmp -s - "$tmp/$m.tw" ||
			bad "twasm-fuzz-diff: batch output of $m.wasm differs from its run alone"
		[ "$(compare "$tmp/$m")" = agree ] || bad "$m.wasm: V8 and twasmc differ"
	done
	grep -qx 'result 7' "$tmp/g.tw" || bad "twasm-fuzz-diff: g.wasm: no 'result 7'"
	# each configuration loads its own object (dlopen under one name had
	# handed back the first one's: one module ran four times)
	loads=$(LD_DEBUG=files "$tool" "$tmp/g.wasm" O0g O2e 2>&1 >/dev/null | grep -c 'calling init: .*twasm-fd')
	[ "$loads" = 2 ] || bad "twasm-fuzz-diff: $loads objects loaded for two configurations"
else
	bad "$tool missing"
fi
[ $fail = 0 ] && echo "fuzz-diff selftest: ok"
exit $fail
