#!/usr/bin/env bash
# Trap offsets (issue 18): every out-of-bounds assert_trap of
# tests/spec/traps/*.wast becomes an executable whose _start calls the
# export with the assertion's arguments; at -O0..-O3 in the default mode
# it must exit 134 and name the same file offset as explicit checks at
# -O0 do, and the byte there must be a memory instruction's opcode.
# usage: offsets.sh [FILE.wast...]   environment: TWASMC (build/bin/twasmc)
set -uo pipefail

twasmc=${TWASMC:-build/bin/twasmc}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -gt 0 ] || set -- "$here"/*.wast
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
cases=0 fail=0

# offset OUT: the hex offset of "trap: out of bounds memory access in ... (x.wasm:0xOFF)"
offset() { sed -n 's/.*trap: out of bounds memory access in .*\.wasm:\(0x[0-9a-f]*\)).*/\1/p' "$1" | head -1; }

# is_access WASM OFF: the byte at OFF starts a load, a store, a SIMD memory
# instruction (0xfd, then its opcode) or memory.copy/fill (0xfc)
is_access() {
	local b
	b=$(od -A n -t x1 -j $(($2)) -N 2 "$1" | tr -d ' \n')
	case $b in
	2[89a-f]?? | 3[0-9a-e]??) return 0 ;;
	fd0[0-9ab] | fd5[4-9a-d]) return 0 ;;
	fc08 | fc0a | fc0b) return 0 ;;
	esac
	return 1
}

for wast in "$@"; do
	stem=$(basename "$wast" .wast)
	# the module: from "(module" to the ")" at the start of a line
	awk '/^\(module/ { on = 1; next } on && /^\)/ { exit } on' "$wast" >"$tmp/body"
	k=0
	while read -r name args; do
		k=$((k + 1)) cases=$((cases + 1))
		# the export's results, each dropped by _start
		results=$(grep -F "(func (export \"$name\")" "$tmp/body" | grep -o '(result [^)]*)' | sed 's/(result//; s/)//' | wc -w)
		drops=
		for ((r = 0; r < results; r++)); do drops+=" (drop)"; done
		w=$tmp/$stem-$k
		{
			echo "(module"
			sed "s/(func (export \"$name\")/(func \$case (export \"$name\")/" "$tmp/body"
			# shellcheck disable=SC2016
			printf '  (func (export "_start") (call $case %s)%s))\n' "$args" "$drops"
		} >"$w.wat"
		if ! wat2wasm --debug-names "$w.wat" -o "$w.wasm" 2>"$w.err"; then
			echo "offsets: $stem $name: wat2wasm: $(head -1 "$w.err")"
			fail=1
			continue
		fi
		want=
		for mode in "-O0 --bounds-checks=explicit" -O0 -O1 -O2 -O3; do
			# shellcheck disable=SC2086
			if ! "$twasmc" $mode "$w.wasm" -o "$w.exe" 2>"$w.err"; then
				echo "offsets: $stem $name ($mode): $(head -1 "$w.err")"
				fail=1
				continue
			fi
			"$w.exe" >"$w.out" 2>&1
			st=$? got=$(offset "$w.out")
			if [ -z "$want" ]; then
				want=$got
				if [ -z "$want" ] || ! is_access "$w.wasm" "$want"; then
					echo "offsets: $stem $name ($mode): offset '${want}' is no memory instruction: $(head -1 "$w.out")"
					fail=1
				fi
			fi
			if [ $st != 134 ] || [ "$got" != "$want" ]; then
				echo "offsets: $stem $name ($mode): status $st, offset '$got', want 134 and $want"
				fail=1
			fi
		done
	done < <(sed -n 's/^(assert_trap (invoke "\([^"]*\)"\(.*\)) "out of bounds memory access")$/\1 \2/p' "$wast")
done
echo "offsets: $cases cases at -O0..-O3, $([ $fail = 0 ] && echo "all at the faulting access" || echo FAILED)"
exit $fail
