#!/usr/bin/env bash
# Issue 14's timer_bench, RUNS times in a row (default 5), and how often each target was met:
# one run is one try of each phase on a machine whose pace moves, so the targets are judged
# by how reliably they hold. Usage: bench/timer_bench_runs.sh [RUNS=5] [TIMERS=100000]
# Each run's whole output is kept in a temporary directory, named at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-5}"
timers="${2:-100000}"
./scripts/build.sh --target tock-server timer_bench
out="$(mktemp -d /tmp/tock-timer-bench-runs.XXXXXX)"
for i in $(seq 1 "$runs"); do
  ./build/bench/timer_bench ./build/cmd/tock-server/tock-server "$timers" >"$out/run-$i.txt" 2>&1 || true
  echo "run $i: $(grep -h '^  targets' "$out/run-$i.txt" || echo 'no verdict line: see '"$out/run-$i.txt")"
done
count() { cat "$out"/run-*.txt | grep -c "^verdicts:.*$1" || true; }
echo "over $runs runs (outputs in $out):"
echo "  burst >= 0.7x of the rounds beside it: met in $(count 'burst=met')"
echo "  spread at 0.7x kept up with p99 <= 100 ms: met in $(count 'spread=met'), missed in $(count 'spread=missed'), no verdict (the machine slowed down) in $(count 'spread=none')"
echo "  no timer fired early: in $(count 'early=0 ')"
echo "  burst >= 0.7x of the best round of the whole run (the stricter reading): met in $(count 'strict_burst=met')"
