#!/usr/bin/env bash
# Runs the SDK tests with node's built-in test runner, one file at a time. Needs node 20.3
# or later (what @temporalio 1.24 requires), the npm packages of package-lock.json (`npm ci` here; scripts/setup.sh runs it),
# TOCK_SERVER_BIN (absolute path of the tock-server to test) and, for cli-workflow.test.mjs,
# TOCK_CLI_BIN (the tock CLI). Extra arguments go to node (e.g. --test-name-pattern=retention).
# TOCK_SDK_FILES (space-separated) names the test files to run; by default every *.test.mjs
# but chaos.test.mjs, which has its own ctest entry (sdk_chaos).
set -euo pipefail
cd "$(dirname "$0")"

fail() {
  echo "tests/sdk: $*" >&2
  exit 1
}

command -v node >/dev/null 2>&1 || fail "node is not installed (Debian: apt-get install nodejs npm)"
node_at_least() { # MAJOR MINOR
  node -e 'const [a, b] = process.versions.node.split(".").map(Number);
           process.exit(a > +process.argv[1] || (a === +process.argv[1] && b >= +process.argv[2]) ? 0 : 1)' "$1" "$2"
}
node_at_least 20 3 || fail "node $(node --version) is too old: @temporalio 1.24 needs 20.3 or later"

for pkg in @temporalio/client @temporalio/worker; do
  [ -f "node_modules/$pkg/package.json" ] ||
    fail "the npm packages are missing ($pkg): run \`npm ci --no-audit --no-fund\` in $PWD (or scripts/setup.sh)"
done
# node_modules from another lockfile would test another SDK: every pinned version must be
# the one installed.
node -e '
  const { dependencies } = require("./package.json");
  const wrong = Object.entries(dependencies).filter(([name, want]) => {
    try { return require(`./node_modules/${name}/package.json`).version !== want; }
    catch { return true; }
  });
  if (wrong.length) {
    console.error(`tests/sdk: installed packages differ from package.json (${wrong.map(([n, v]) => `${n}@${v}`).join(", ")}): run \`npm ci --no-audit --no-fund\` in ${process.cwd()}`);
    process.exit(1);
  }'

[ -n "${TOCK_SERVER_BIN:-}" ] || fail "TOCK_SERVER_BIN is not set (the absolute path of tock-server)"
[ -x "$TOCK_SERVER_BIN" ] || fail "TOCK_SERVER_BIN=$TOCK_SERVER_BIN is not an executable (build the tock-server target)"

if [ -n "${TOCK_SDK_FILES:-}" ]; then
  read -r -a files <<<"$TOCK_SDK_FILES"
  for f in "${files[@]}"; do [ -f "$f" ] || fail "TOCK_SDK_FILES names $f, which is not here"; done
else
  files=()
  for f in ./*.test.mjs; do [ "$f" = ./chaos.test.mjs ] || files+=("$f"); done
fi
if node_at_least 20 10; then
  exec node --test --test-concurrency=1 "$@" "${files[@]}"
fi
# Before 20.10 there is no --test-concurrency: one runner per file.
status=0
for f in "${files[@]}"; do
  node --test "$@" "$f" || status=1
done
exit $status
