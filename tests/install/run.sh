#!/bin/bash
# run.sh: installs twasmc into a temporary prefix (with DESTDIR), builds
# examples/embed against it with pkg-config alone, checks its output;
# compiles tests/install/api.c against the installed headers alone as C11
# and C++17 (-Werror -pedantic) and runs it on the shared library, which
# must export twasm_* symbols only; then uninstalls and checks that nothing
# is left.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/twasm-install.XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=/opt/twasm-test
make -s -C "$root" install PREFIX=$prefix DESTDIR="$work/dest" >/dev/null
inst=$work/dest$prefix
# The .pc file names the final prefix; point pkg-config at the staged copy.
sed "s|^prefix=.*|prefix=$inst|" "$inst/lib/pkgconfig/twasm-rt.pc" > "$work/twasm-rt.pc"
for f in bin/twasmc lib/libtwasm-rt.a lib/libtwasm-rt.so include/twasm.h \
         include/twasm_wasi.h share/man/man1/twasmc.1 share/man/man3/twasm-rt.3; do
  [ -e "$inst/$f" ] || { echo "install: FAIL: $f not installed"; exit 1; }
done
# the compiler/runtime contract is not part of the installed API
[ ! -e "$inst/include/twasm_abi.h" ] || { echo "install: FAIL: twasm_abi.h installed"; exit 1; }
strict="-Wall -Wextra -Werror -pedantic -I$inst/include"
${CC:-cc} -std=c11 $strict "$root/tests/install/api.c" -L"$inst/lib" -l:libtwasm-rt.so -o "$work/api_c"
${CXX:-c++} -std=c++17 $strict -x c++ "$root/tests/install/api.c" -x none -L"$inst/lib" -l:libtwasm-rt.so \
  -o "$work/api_cxx"
for exe in api_c api_cxx; do
  LD_LIBRARY_PATH="$inst/lib" "$work/$exe" | grep -q '^api: .* ok' || { echo "install: FAIL: $exe"; exit 1; }
done
internal=$(nm -D --defined-only "$inst/lib/libtwasm-rt.so" | awk '{print $3}' | grep -v '^twasm_' || true)
[ -z "$internal" ] || { echo "install: FAIL: libtwasm-rt.so exports $(echo $internal | wc -w) internal symbols:" \
  $internal | cut -c1-300; exit 1; }
mkdir -p "$work/embed"
env -u TWASM_RT_LIB_DIR PKG_CONFIG_PATH="$work" \
  make -s -C "$root/examples/embed" run TWASMC="$inst/bin/twasmc" OUT="$work/embed"
make -s -C "$root" uninstall PREFIX=$prefix DESTDIR="$work/dest" >/dev/null
left=$(find "$work/dest" -type f | wc -l)
[ "$left" = 0 ] || { echo "install: FAIL: $left files left after uninstall"; exit 1; }
echo "install: 1 passed, 0 failed"
