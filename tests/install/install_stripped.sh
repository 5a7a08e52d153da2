#!/bin/sh
# `cmake --install` into a throwaway prefix: the binaries come out stripped (no DWARF), their
# debug information under lib/debug/.build-id/ with the binary's build id, gdb finds it
# there, the installed binaries run, and the installed `tock server start-dev` runs the
# installed tock-server (and names what it looked for when it is missing).
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
# `tock server start-dev` runs the tock-server installed beside tock (PATH has none).
log="$prefix/start-dev.log"
PATH=/usr/bin:/bin "$prefix/bin/tock" server start-dev --port 0 >"$log" 2>&1 &
dev=$!
i=0
until grep -q 'listening on' "$log"; do
  i=$((i + 1))
  if [ "$i" -gt 200 ] || ! kill -0 "$dev" 2>/dev/null; then
    echo "FAIL: installed tock server start-dev did not start:"; cat "$log"; exit 1
  fi
  sleep 0.1
done
kill -TERM "$dev"
if ! wait "$dev"; then echo "FAIL: start-dev did not stop cleanly:"; cat "$log"; exit 1; fi
grep -q 'Shutting down' "$log" || { echo "FAIL: no 'Shutting down':"; cat "$log"; exit 1; }
# Without it: a clear error naming where it was looked for, exit 3 (not found).
mv "$prefix/bin/tock-server" "$prefix/tock-server.away"
set +e
err=$(PATH=/usr/bin:/bin "$prefix/bin/tock" server start-dev --port 0 2>&1)
code=$?
set -e
mv "$prefix/tock-server.away" "$prefix/bin/tock-server"
case "$err" in
  *"$prefix/bin/tock-server"*"PATH"*) ;;
  *) echo "FAIL: start-dev without tock-server said: $err"; exit 1 ;;
esac
[ "$code" -eq 3 ] || { echo "FAIL: start-dev without tock-server exited $code, not 3"; exit 1; }
size=$(du -sk "$prefix/bin" | cut -f1)
echo "installed: bin/ $size KiB, stripped; debug information apart"
