#!/bin/bash
# run.sh: installs twasmc into a temporary prefix (with DESTDIR), builds
# examples/embed against it with pkg-config alone, checks its output, then
# uninstalls and checks that nothing is left but the folders that were
# there before.  Twice: with the default LIBDIR and with LIBDIR=PREFIX/lib64,
# where the installed twasmc must still find its runtime on its own.
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
  for f in bin/twasmc $libsub/libtwasm-rt.a $libsub/libtwasm-rt.so include/twasm.h include/twasm_abi.h \
           include/twasm_wasi.h share/man/man1/twasmc.1 share/man/man3/twasm-rt.3 \
           $libsub/pkgconfig/twasm-rt.pc; do
    [ -e "$inst/$f" ] || fail "$name" "$f not installed"
  done
  grep -qx "libdir=\${prefix}/$libsub" "$inst/$libsub/pkgconfig/twasm-rt.pc" ||
    fail "$name" "twasm-rt.pc does not name libdir \${prefix}/$libsub"
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
