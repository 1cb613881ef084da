#!/bin/bash
# run.sh: installs twasmc into a temporary prefix (with DESTDIR), builds
# examples/embed against it with pkg-config alone, checks its output;
# checks that the .pc file and the installed twasmc link the same
# libraries and links a module with a GPU kernel (compressed PTX) with the
# .pc alone; compiles tests/install/api.c against the installed headers alone as C11
# and C++17 (-Werror -pedantic) and runs it on the shared library, which
# must export twasm_* symbols only; then uninstalls and checks that
# nothing is left but the folders that were there before.  Twice: with the
# default LIBDIR and with LIBDIR=PREFIX/lib64, where the installed twasmc
# must still find its runtime on its own.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/twasm-install.XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=/opt/twasm-test
passed=0

fail() { echo "install: FAIL ($1): $2"; exit 1; }

# one_install NAME LIBDIR_SUFFIX
one_install() {
  local name=$1 libsub=$2 dest=$work/dest-$1
  local inst=$dest$prefix libdir=$prefix/$libsub
  # A folder that was there before: uninstall must leave it.
  mkdir -p "$inst/share/man/man3"
  make -s -C "$root" install PREFIX=$prefix LIBDIR="$libdir" DESTDIR="$dest" >/dev/null
  for f in bin/twasmc $libsub/libtwasm-rt.a $libsub/libtwasm-rt.so include/twasm.h \
           include/twasm_wasi.h share/man/man1/twasmc.1 share/man/man3/twasm-rt.3 \
           $libsub/pkgconfig/twasm-rt.pc; do
    [ -e "$inst/$f" ] || fail "$name" "$f not installed"
  done
  grep -qx "libdir=\${prefix}/$libsub" "$inst/$libsub/pkgconfig/twasm-rt.pc" ||
    fail "$name" "twasm-rt.pc does not name libdir \${prefix}/$libsub"
  # the compiler/runtime contract is not part of the installed API
  [ ! -e "$inst/include/twasm_abi.h" ] || fail "$name" "twasm_abi.h installed"
  local strict="-Wall -Wextra -Werror -pedantic -I$inst/include"
  ${CC:-cc} -std=c11 $strict "$root/tests/install/api.c" -L"$inst/$libsub" -l:libtwasm-rt.so -o "$work/api_c-$name"
  ${CXX:-c++} -std=c++17 $strict -x c++ "$root/tests/install/api.c" -x none -L"$inst/$libsub" -l:libtwasm-rt.so \
    -o "$work/api_cxx-$name"
  local exe internal
  for exe in api_c api_cxx; do
    LD_LIBRARY_PATH="$inst/$libsub" "$work/$exe-$name" | grep -q '^api: .* ok' || fail "$name" "$exe"
  done
  internal=$(nm -D --defined-only "$inst/$libsub/libtwasm-rt.so" | awk '{print $3}' | grep -v '^twasm_' || true)
  [ -z "$internal" ] || fail "$name" "libtwasm-rt.so exports $(echo $internal | wc -w) internal symbols: $(echo $internal | cut -c1-300)"
  # The .pc file names the final prefix; point pkg-config at the staged copy.
  sed "s|^prefix=.*|prefix=$inst|" "$inst/$libsub/pkgconfig/twasm-rt.pc" > "$work/twasm-rt.pc"
  mkdir -p "$work/embed-$name"
  env -u TWASM_RT_LIB_DIR PKG_CONFIG_PATH="$work" \
    make -s -C "$root/examples/embed" run TWASMC="$inst/bin/twasmc" OUT="$work/embed-$name"
  # An executable, linked by the installed twasmc with the runtime it finds.
  printf '(module (func (export "_start")))' > "$work/m-$name.wat"
  env -u TWASM_RT_LIB_DIR "$inst/bin/twasmc" "$work/m-$name.wat" -o "$work/m-$name" ||
    fail "$name" "the installed twasmc cannot link an executable"
  "$work/m-$name" || fail "$name" "its executable does not run"
  # What a program needs besides libtwasm-rt (libzstd for the compressed
  # PTX, ...): the installed twasmc links with what twasm-rt.pc says.
  local pc_libs tw_libs
  pc_libs=$(PKG_CONFIG_PATH="$work" pkg-config --libs twasm-rt | sed 's/.*libtwasm-rt\.a//')
  tw_libs=$(env -u TWASM_RT_LIB_DIR "$inst/bin/twasmc" -v "$work/m-$name.wat" -o "$work/m-$name" 2>&1 |
            sed -n 's/.*run: cc .*libtwasm-rt\.a//p')
  [ -n "$tw_libs" ] && [ "$(echo $pc_libs)" = "$(echo $tw_libs)" ] ||
    fail "$name" "twasm-rt.pc links '$(echo $pc_libs)', twasmc '$(echo $tw_libs)'"
  # A module with a GPU kernel (its PTX compressed) linked with the .pc alone.
  printf '%s\n' '(module (memory 1) (func (export "k") (param i32) (local i32)' \
    '  (loop (i32.store (local.get 1) (local.get 0)) (local.set 1 (i32.add (local.get 1) (i32.const 4)))' \
    '        (br_if 0 (i32.lt_u (local.get 1) (i32.const 4000))))))' > "$work/k-$name.wat"
  "$inst/bin/twasmc" -c "$work/k-$name.wat" -o "$work/k-$name.o"
  nm "$work/k-$name.o" | grep -q ' U twasm_rt_offload$' || fail "$name" "the kernel module has no kernel"
  echo 'int main(void) { return 0; }' > "$work/k-$name.c"
  ${CC:-cc} "$work/k-$name.c" "$work/k-$name.o" $(PKG_CONFIG_PATH="$work" pkg-config --libs twasm-rt) \
    -o "$work/k-$name" || fail "$name" "a module with a kernel does not link with twasm-rt.pc's Libs"
  "$work/k-$name" || fail "$name" "the program with a kernel does not run"
  make -s -C "$root" uninstall PREFIX=$prefix LIBDIR="$libdir" DESTDIR="$dest" >/dev/null
  local left
  left=$(cd "$dest" && find . -mindepth 1 | sort | tr '\n' ' ')
  [ "$left" = "./opt ./opt/twasm-test ./opt/twasm-test/share ./opt/twasm-test/share/man ./opt/twasm-test/share/man/man3 " ] ||
    fail "$name" "uninstall left or removed the wrong things: $left"
  passed=$((passed + 1))
}

one_install default lib
one_install lib64 lib64
echo "install: $passed passed, 0 failed"
