#!/usr/bin/env bash
# Installs everything Tock needs to build and test, idempotently, on a fresh Debian 12
# machine: Debian packages (as root, or through sudo) and the npm packages of the test
# projects. Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

# What each Debian package is for is listed in README.md ("Dependencies").
packages=(
  build-essential cmake ninja-build ccache pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libcli11-dev nlohmann-json3-dev libyaml-cpp-dev
  libsqlite3-dev libcurl4-openssl-dev libssl-dev openssl libfarmhash-dev libjwt-dev
  libgoogle-perftools-dev
  postgresql-15 libpq-dev
  libgtest-dev libgmock-dev libedit-dev tmux
  libspdlog-dev prometheus-cpp-dev libcpp-httplib-dev prometheus
  mandoc bash-completion zsh fish
  sqlite3 python3 curl
  libsimdjson-dev chromium
)

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ! command -v node >/dev/null 2>&1; then missing+=(nodejs); fi
if ! command -v npm >/dev/null 2>&1; then missing+=(npm); fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# npm projects with committed lockfiles: install exactly what the lockfile says, once per
# lockfile content.
for dir in tests/sdk tests/s3 tests/web; do
  [ -f "$dir/package-lock.json" ] || continue
  stamp="$dir/node_modules/.tock-lock-hash"
  want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "setup: npm install in $dir (versions and integrity from its lockfile)"
    # Not `npm ci`: npm 11 records only this platform's optional packages (@swc/core's
    # native builds) in the lockfile and `npm ci` then calls it out of sync. `npm install
    # --no-save` installs the locked versions, checks their integrity, and leaves the
    # lockfile untouched.
    (cd "$dir" && npm install --no-save --no-audit --no-fund --loglevel=error)
    echo "$want" > "$stamp"
  fi
done
echo "setup: ok"
