#!/usr/bin/env bash
# run.sh: proves that the Makefile's per-folder include lists keep the
# layering one-way.  Arguments: one NAME|DIR|FLAGS per folder (the
# Makefile's LAYERS and INC_NAME), lowest first; runtime|runtime| comes
# first of all (it sees include/ alone, so no compiler folder).  For every folder: each of its own
# headers compiles alone with its flags (so the probe itself works), and no
# header of a folder after it can be included at all (a back-edge is a
# compile error).  Sources may
# not reach around the lists with a path in an include ("../x.h", "off/x.h").
# Environment: CC (default cc), LLVM_INC.
set -u
cc=${CC:-cc}
fail=0 good=0 bad=0
declare -A dir_of flags_of
names=()
for spec in "$@"; do
  IFS='|' read -r name dir flags <<<"$spec"
  names+=("$name")
  dir_of[$name]=$dir
  flags_of[$name]=$flags
done

# probe FLAGS HEADER: compiles `#include "HEADER"` alone; prints the errors.
probe() {
  echo "#include \"$2\"" | $cc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Iinclude ${LLVM_INC:-} $1 \
    -fsyntax-only -x c - 2>&1
}

# Folders are given lowest first: each may see only folders before it.
for i in "${!names[@]}"; do
  name=${names[$i]}
  flags=${flags_of[$name]}
  dir=${dir_of[$name]}
  for h in "$dir"/*.h; do
    [ -e "$h" ] || continue
    if out=$(probe "-I$dir $flags" "$(basename "$h")"); then
      good=$((good + 1))
    else
      echo "layering: FAIL $h does not compile alone in $name: $out" | head -n 3
      fail=1
    fi
  done
  for other in "${names[@]:$((i + 1))}"; do
    odir=${dir_of[$other]}
    [ "$odir" = "$dir" ] && continue
    for h in "$odir"/*.h; do
      [ -e "$h" ] || continue
      out=$(probe "$flags" "$(basename "$h")")
      if [ $? -eq 0 ]; then
        echo "layering: FAIL $name ($dir) can include $h of $other, a folder above it"
        fail=1
      elif ! grep -q -i -e "no such file" -e "file not found" <<<"$out"; then
        echo "layering: FAIL $name including $h failed for another reason: $out" | head -n 3
        fail=1
      else
        bad=$((bad + 1))
      fi
    done
  done
done

files=()
for name in "${names[@]}"; do files+=("${dir_of[$name]}"/*.[ch]); done
if grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*/' "${files[@]}"; then
  echo "layering: FAIL an include names a path (above): it would bypass the folder lists"
  fail=1
fi
[ $fail = 0 ] && echo "layering: passed ($good headers compile in their folder, $bad back-edges refused)"
exit $fail
