#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (unit, conformance, integration,
# CLI black-box, and the official TypeScript SDK against tock-server) through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
ctest --test-dir build --output-on-failure --parallel "$(nproc)" --timeout 600 "$@"
