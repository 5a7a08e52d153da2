#!/usr/bin/env bash
# Runs the SDK tests with node's test runner. Needs the npm packages of package-lock.json
# (scripts/setup.sh installs them) and TOCK_SERVER_BIN, the tock-server to test.
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -d node_modules/@temporalio/worker ]; then
  echo "tests/sdk: npm packages are missing; run scripts/setup.sh (or npm ci in tests/sdk)" >&2
  exit 1
fi
exec node --test --test-concurrency=1 ./*.test.mjs
