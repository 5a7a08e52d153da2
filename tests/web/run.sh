#!/usr/bin/env bash
# Runs the console's browser tests (node's test runner, playwright-core driving Debian's
# chromium). Needs node 20, the npm packages of package-lock.json (scripts/setup.sh installs
# them), chromium (/usr/bin/chromium, or TOCK_CHROMIUM) and TOCK_SERVER_BIN. Screenshots go
# to TOCK_WEB_ARTIFACTS (default ./artifacts). Extra arguments go to node.
set -euo pipefail
cd "$(dirname "$0")"
fail() { echo "tests/web: $*" >&2; exit 1; }
command -v node >/dev/null 2>&1 || fail "node is not installed (Debian: apt-get install nodejs npm)"
for pkg in playwright-core axe-core @temporalio/client; do
  [ -f "node_modules/$pkg/package.json" ] ||
    fail "the npm packages are missing ($pkg): run scripts/setup.sh (or npm ci in $PWD)"
done
chromium="${TOCK_CHROMIUM:-/usr/bin/chromium}"
[ -x "$chromium" ] || fail "chromium is not installed at $chromium (Debian: apt-get install chromium; scripts/setup.sh does)"
[ -n "${TOCK_SERVER_BIN:-}" ] || fail "TOCK_SERVER_BIN is not set (the absolute path of tock-server)"
exec node --test --test-concurrency=1 "$@" ./*.test.mjs
