#!/usr/bin/env bash
# Installs what is missing, builds, and starts the dev server (embedded SQLite, in memory
# unless --db-file is given) on 127.0.0.1:7233. Extra arguments go to `tock server start-dev`.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
exec ./build/cmd/tock/tock server start-dev "$@"
