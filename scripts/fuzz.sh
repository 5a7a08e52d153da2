#!/usr/bin/env bash
# Fuzzes the libFuzzer targets of tests/fuzz, each for SECONDS (default 60), from its seed
# corpus in tests/fuzz/corpus/<target>/.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default: every target)
#
# Builds them in build-fuzz with clang (-DTOCK_FUZZ=ON: libFuzzer, ASan and UBSan). New
# inputs libFuzzer finds go to build-fuzz/fuzz-corpus/<target>/ (the seed corpus in the
# repository is only read). Fails on any crash, timeout, out-of-memory or sanitizer report;
# the reproducer is kept in build-fuzz/fuzz-findings/<target>/ (run the target binary on it:
# build-fuzz/tests/fuzz/fuzz_<target> FILE).
#
# Bounds, so that a run cannot wedge the machine: inputs of at most the target's -max_len
# (tests/fuzz/CMakeLists.txt), 10 s per input, 2 GiB of memory, one job, at nice 10.
# Environment: CXX (default clang++-14, else clang++), FUZZ_JOBS (build jobs, default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

seconds=60
if [[ $# -gt 0 && $1 =~ ^[0-9]+$ ]]; then
  seconds=$1
  shift
fi

cxx=${CXX:-}
if [[ -z $cxx ]]; then
  if command -v clang++-14 >/dev/null; then cxx=clang++-14; else cxx=clang++; fi
fi
command -v "$cxx" >/dev/null || { echo "fuzz.sh: $cxx not found (Debian: apt-get install clang libclang-rt-14-dev)" >&2; exit 1; }

build=$root/build-fuzz
# ccache shares objects between build directories when paths are relative to the tree (the
# generated API compiles to the same command in every sanitizer build directory).
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=true
if [[ ! -f $build/CMakeCache.txt ]]; then
  nice -n 10 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g" -DTOCK_FUZZ=ON
fi
nice -n 10 cmake --build "$build" --target fuzz_targets -- -j"${FUZZ_JOBS:-2}"

declare -A max_len
all=()
while read -r name len; do
  [[ -n $name ]] || continue
  max_len[$name]=$len
  all+=("$name")
done <"$build/tests/fuzz/targets.txt"

targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=("${all[@]}")
for t in "${targets[@]}"; do
  [[ -n ${max_len[$t]:-} ]] || { echo "fuzz.sh: unknown target $t (targets: ${all[*]})" >&2; exit 2; }
done

# Reports are errors; leaks are reported by LeakSanitizer at exit (libFuzzer's -detect_leaks).
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

failed=()
summary=()
for t in "${targets[@]}"; do
  work=$build/fuzz-corpus/$t
  findings=$build/fuzz-findings/$t
  rm -rf "$findings"
  mkdir -p "$work" "$findings"
  log=$build/fuzz-findings/$t.log
  echo "== fuzz_$t: ${seconds}s, -max_len=${max_len[$t]}"
  status=0
  (cd "$findings" && nice -n 10 "$build/tests/fuzz/fuzz_$t" "$work" "$root/tests/fuzz/corpus/$t" \
      -max_total_time="$seconds" -max_len="${max_len[$t]}" -timeout=10 -rss_limit_mb=2048 \
      -malloc_limit_mb=1024 -print_final_stats=1 \
      -artifact_prefix="$findings/") >"$log" 2>&1 || status=$?
  stats=$(grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' "$log" |
          sed 's/^stat:://' | tr '\n' ' ' || true)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9]+[a-zA-Z]*' "$log" | tail -1 || true)
  if [[ $status -ne 0 ]]; then
    failed+=("$t")
    summary+=("$t: FAILED (exit $status) $stats")
    echo "fuzz_$t FAILED (exit $status); log: $log; reproducer(s):" >&2
    ls -1 "$findings" | sed "s|^|  $findings/|" >&2
    grep -E 'ERROR|SUMMARY|fuzz check failed|==[0-9]+==' "$log" | head -20 >&2 || true
  else
    summary+=("$t: ok ${seconds}s $stats $cov")
  fi
done

echo
echo "== fuzz summary"
printf '%s\n' "${summary[@]}"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz.sh: findings in: ${failed[*]}" >&2
  exit 1
fi
