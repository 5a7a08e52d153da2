#!/usr/bin/env bash
# A throwaway PostgreSQL 15 for local use (several tock-server hosts on one database):
#
#   ./scripts/postgres.sh start DIR   creates DIR, starts PostgreSQL in it on a free port of
#                                     127.0.0.1 and prints the URL of its database `tock`;
#   ./scripts/postgres.sh stop DIR    stops it and removes DIR.
#
# Then: tock-server --postgres-url "$(./scripts/postgres.sh url DIR)" --port 7233
#
# Tuned for speed, not durability (fsync off): for development and tests only. As root the
# server runs as the `postgres` OS user (PostgreSQL refuses root). Superuser `tock`, trusted
# from 127.0.0.1 without a password. Needs postgresql-15 (./scripts/setup.sh installs it).
set -euo pipefail

usage() { echo "usage: $0 start|stop|url DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd=$1
dir=$(realpath -m "$2")

bindir=$(pg_config --bindir 2>/dev/null || true)
[ -x "$bindir/initdb" ] || bindir=/usr/lib/postgresql/15/bin
if [ ! -x "$bindir/initdb" ]; then
  echo "postgres.sh: PostgreSQL 15 is not installed (no initdb); run ./scripts/setup.sh" >&2
  exit 1
fi

# Runs a PostgreSQL tool as the user owning the data (postgres when we are root), from DIR
# (its tools complain about a working directory they cannot read).
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- /bin/sh -c 'cd "$0" && exec "$@"' "$dir" "$@"
  else
    (cd "$dir" && "$@")
  fi
}

# A port that was free a moment ago (the kernel's choice), or a random high one without
# python3; a clash is retried below either way.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' \
    2>/dev/null || echo $((20000 + RANDOM % 40000))
}

case "$cmd" in
  start)
    if [ -e "$dir" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
      echo "postgres.sh: $dir exists and is not empty; give a new folder" >&2
      exit 2
    fi
    # The socket path DIR/.s.PGSQL.PORT must fit in 107 bytes.
    if [ ${#dir} -gt 80 ]; then
      echo "postgres.sh: $dir is too long for a socket path; use a shorter one (e.g. under /tmp)" >&2
      exit 2
    fi
    mkdir -p "$dir"
    if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir"; fi
    as_owner "$bindir/initdb" -D "$dir/data" -U tock -A trust -E UTF8 --no-locale -N >"$dir/initdb.log"
    started=
    for attempt in 1 2 3 4 5; do
      port=$(free_port)
      if as_owner "$bindir/pg_ctl" start -D "$dir/data" -l "$dir/postgres.log" -w -t 30 -o \
          "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir \
           -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
           -c max_connections=300" >/dev/null; then
        started=1
        break
      fi
      # Someone took the port between choosing and binding: try another one.
      grep -q "Address already in use" "$dir/postgres.log" || break
    done
    if [ -z "$started" ]; then
      echo "postgres.sh: PostgreSQL did not start; its log:" >&2
      tail -20 "$dir/postgres.log" >&2
      exit 1
    fi
    echo "$port" >"$dir/port"
    psql -q "postgresql://tock@127.0.0.1:$port/postgres?connect_timeout=10" -c 'CREATE DATABASE tock'
    echo "postgresql://tock@127.0.0.1:$port/tock"
    ;;
  url)
    [ -f "$dir/port" ] || { echo "postgres.sh: no server started in $dir" >&2; exit 1; }
    echo "postgresql://tock@127.0.0.1:$(cat "$dir/port")/tock"
    ;;
  stop)
    [ -d "$dir/data" ] || { echo "postgres.sh: no PostgreSQL data in $dir" >&2; exit 1; }
    if [ -f "$dir/data/postmaster.pid" ]; then
      as_owner "$bindir/pg_ctl" stop -D "$dir/data" -m fast -w -t 30 >/dev/null || {
        pid=$(head -1 "$dir/data/postmaster.pid")
        echo "postgres.sh: pg_ctl stop failed; killing postmaster $pid" >&2
        kill -9 "$pid" 2>/dev/null || true
      }
    fi
    rm -rf "$dir"
    echo "stopped; removed $dir"
    ;;
  *) usage ;;
esac
