#!/bin/sh
# `cmake --install` into a throwaway prefix: the binaries come out stripped (no DWARF), their
# debug information under lib/debug/.build-id/ with the binary's build id, gdb finds it
# there, and the installed binaries run.
# Usage: install_stripped.sh BUILD_DIR
set -eu
build=$1
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
for name in tock tock-server; do
  binary="$prefix/bin/$name"
  if readelf -S "$binary" | grep -q '\.debug_info'; then
    echo "FAIL: $binary still carries .debug_info"; exit 1
  fi
  id=$(readelf -n "$binary" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
  debug="$prefix/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"
  if ! readelf -S "$debug" | grep -q '\.debug_info'; then
    echo "FAIL: no debug information at $debug"; exit 1
  fi
  if command -v gdb >/dev/null; then
    where=$(gdb -q -batch -ex "set debug-file-directory $prefix/lib/debug" -ex "file $binary" \
                -ex "info line main" 2>&1)
    case "$where" in
      *"cmd/$name/main.cc"*) ;;
      *) echo "FAIL: gdb does not find main's source line of $name: $where"; exit 1 ;;
    esac
  fi
  "$binary" --help >/dev/null
done
size=$(du -sk "$prefix/bin" | cut -f1)
echo "installed: bin/ $size KiB, stripped; debug information apart"
