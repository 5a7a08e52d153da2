#!/usr/bin/env bash
# Configures and builds Tock into ./build (incremental: ccache and the persistent build
# directory make rebuilds fast; the Temporal API protos are fetched and compiled once).
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR="$PWD"
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build build --parallel "$(nproc)" "$@"
