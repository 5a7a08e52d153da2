#!/usr/bin/env bash
# Builds and runs the benchmarks; figures go in docs/performance.md.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh --target tock tock-server min_describe namespace_bench workflow_bench history_bench idle_memory_bench repl_bench completion_bench archival_bench execution_store_bench search_attribute_bench batch_bench schedule_bench replication_bench timer_bench security_bench
./build/bench/namespace_bench ./build/cmd/tock-server/tock-server ./build/cmd/tock/tock \
  ./build/bench/min_describe "${1:-41}"
./build/bench/workflow_bench ./build/cmd/tock-server/tock-server 2000
# Issue 35: eager activities against the same worker's activities through the queue.
./build/bench/workflow_bench ./build/cmd/tock-server/tock-server 2000 8 --eager
# Issue 37: workers of a current deployment version (runs pinned) against unversioned ones.
./build/bench/workflow_bench ./build/cmd/tock-server/tock-server 2000 8 --versioned
./build/bench/history_bench ./build/cmd/tock-server/tock-server
./build/bench/idle_memory_bench ./build/cmd/tock-server/tock-server 10000
./build/bench/repl_bench ./build/cmd/tock-server/tock-server ./build/cmd/tock/tock
./build/bench/completion_bench ./build/cmd/tock-server/tock-server ./build/cmd/tock/tock
./build/bench/archival_bench 100 300 9
# Issue 12: a list by a custom keyword among 100,000 closed runs against the raw indexed query;
# a batch terminate of 10,000 running workflows against 8 direct callers.
./build/bench/search_attribute_bench ./build/cmd/tock-server/tock-server 100000 100 300
./build/bench/batch_bench ./build/cmd/tock-server/tock-server 10000
# 200 schedules firing every second for 60 s: every action started once, p99 lateness.
./build/bench/schedule_bench ./build/cmd/tock-server/tock-server 200 60
# Issue 13: two clusters; throughput with replication / without, lag p99, catch-up events/s.
./build/bench/replication_bench ./build/cmd/tock-server/tock-server 1000 3 2000
# Issue 14: 100,000 timers created over HTTP and fired to a local receiver, against a plain
# libcurl multi loop posting the same callbacks to it: rates, lateness p50/p99.
./build/bench/timer_bench ./build/cmd/tock-server/tock-server 100000
# Issue 35: a workflow of 2,000 sequential activities against one of 100, with a real
# TypeScript SDK worker: per-step time with sticky execution and with the worker's cache off.
(cd tests/sdk && TOCK_SERVER_BIN="$PWD/../../build/cmd/tock-server/tock-server" \
  node long_workflow_bench.mjs 2000 100 300)
# Issue 35: the write-ahead log's pages per commit, by table and index.
./bench/wal_breakdown.sh 200
# Issue 15: DescribeNamespace with 16 callers over mTLS with a JWT / mTLS / plaintext without
# authorization (three servers, certificates and keys made with openssl): ratio >= 0.6x.
./build/bench/security_bench ./build/cmd/tock-server/tock-server 3 7
# The PostgreSQL ExecutionStore against raw commits of the same throwaway server (fsync off).
pgdir="/tmp/tock-bench-pg-$$"  # not under mktemp -d: the postgres user must reach it
./scripts/postgres.sh start "$pgdir" >/dev/null
trap './scripts/postgres.sh stop "$pgdir" >/dev/null' EXIT
./build/bench/execution_store_bench "$(./scripts/postgres.sh url "$pgdir")" 5 16
# The workflow benchmark four ways (issue 11): SQLite against its raw commit loop; one host and
# three hosts sharing the shards on that PostgreSQL, against a raw loop of one-row commits
# over 16 connections on the same server; medians of 3 rounds taken in turn.
./build/bench/workflow_bench ./build/cmd/tock-server/tock-server 2000 8 \
  --postgres "$(./scripts/postgres.sh url "$pgdir")" --hosts 3 --rounds 3
# Issue 36: the web console in chromium: a 20,000-event history's first rows and scrolling,
# the list of 100,000 runs scrolled end to end (the npm packages of tests/web).
TOCK_SERVER_BIN="$PWD/build/cmd/tock-server/tock-server" node bench/console_bench.mjs 100000
