#!/usr/bin/env bash
# Builds tock-server, tock and the C++ tests with one sanitizer and runs the tests (ctest:
# unit, conformance, integration, CLI, REPL, the fuzz replays, and the SDK suite, which runs
# against the instrumented tock-server) in a build directory of its own.
#
#   scripts/sanitize.sh address|thread|undefined [CTEST_ARGS...]
#     e.g. scripts/sanitize.sh thread -R 'HistoryEngine|TimerQueue'
#
# `address` builds with ASan and UBSan together (one build and one run instead of two; the
# fuzz build does the same); `undefined` is UBSan alone, for a faster run.
#
# Fails when a test fails or when any process (a test, tock-server or tock started by one)
# wrote a sanitizer report: reports go to build-<asan|tsan|ubsan>/sanitizer-reports/ (one
# file per process) and are printed at the end. The build uses clang (CXX to change it) at
# -O1 -g with -fno-omit-frame-pointer; the generated Temporal API code is left
# uninstrumented (see the top-level CMakeLists.txt). Suppressions (tests/fuzz/sanitizers/)
# cover third-party code only, each with its reason.
#
# Environment: SANITIZE_JOBS (ctest parallelism, default 1: instrumented servers on 2 cores
# time out otherwise), BUILD_JOBS (default 2), SANITIZE_TARGETS (what to build; default all;
# the PostgreSQL fixture the postgres-labelled tests need is always added), e.g.
#   SANITIZE_TARGETS="tock-server tock" scripts/sanitize.sh address -R sdk_hosts
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

kind=${1:-}
case $kind in
  address) dir=build-asan; flags=address,undefined ;;
  thread) dir=build-tsan; flags=thread ;;
  undefined) dir=build-ubsan; flags=undefined ;;
  *) echo "usage: $0 address|thread|undefined [CTEST_ARGS...]" >&2; exit 2 ;;
esac
shift
build=$root/$dir

cxx=${CXX:-}
if [[ -z $cxx ]]; then
  if command -v clang++-14 >/dev/null; then cxx=clang++-14; else cxx=clang++; fi
fi

start=$(date +%s)
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=true
# TSan: gRPC, protobuf and Abseil linked as Debian's shared libraries, so that TSan can tell
# their (uninstrumented) code from ours and ignore the accesses it makes
# (ignore_noninstrumented_modules below); statically linked, they are one module with ours.
static_deps=ON
[[ $kind == thread ]] && static_deps=OFF
if [[ ! -f $build/CMakeCache.txt ]]; then
  nice -n 10 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g" \
    -DTOCK_SANITIZE="$flags" -DTOCK_STATIC_DEPS=$static_deps
fi
# A build directory configured by an older script keeps its sanitizer unless told. The SDK
# suites get more time: TSan slows the server about 5x, ASan about 2x (their own deadlines
# inside still apply).
scale=2
[[ $kind == thread ]] && scale=4
cmake -S "$root" -B "$build" -DTOCK_SANITIZE="$flags" -DTOCK_TEST_TIMEOUT_SCALE=$scale >/dev/null
targets=all
if [[ -n ${SANITIZE_TARGETS:-} ]]; then targets="$SANITIZE_TARGETS tock_postgres_fixture"; fi
# shellcheck disable=SC2086
nice -n 10 cmake --build "$build" --target $targets -- -j"${BUILD_JOBS:-2}"
built=$(date +%s)

reports=$build/sanitizer-reports
rm -rf "$reports"
mkdir -p "$reports"
supp=$root/tests/fuzz/sanitizers
# Every report is fatal to its process and lands in $reports/<kind>.<pid>, whichever process
# it is (the tests start tock-server and tock as child processes, whose stderr they may not
# show).
# Only the chosen sanitizer's options: each runtime also reads the others' (UBSan's log_path
# would rename TSan's reports).
unset ASAN_OPTIONS LSAN_OPTIONS TSAN_OPTIONS UBSAN_OPTIONS
case $kind in
  address)
    export ASAN_OPTIONS="log_path=$reports/asan:halt_on_error=1:exitcode=66:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1"
    export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
    export UBSAN_OPTIONS="log_path=$reports/ubsan:halt_on_error=1:exitcode=66:print_stacktrace=1:suppressions=$supp/ubsan.supp" ;;
  thread)
    export TSAN_OPTIONS="log_path=$reports/tsan:halt_on_error=1:exitcode=66:second_deadlock_stack=1:ignore_noninstrumented_modules=1:suppressions=$supp/tsan.supp:print_suppressions=0" ;;
  undefined)
    export UBSAN_OPTIONS="log_path=$reports/ubsan:halt_on_error=1:exitcode=66:print_stacktrace=1:suppressions=$supp/ubsan.supp" ;;
esac

status=0
# Left out: s3_proxy tests only the node proxy (no C++ of ours); docs_man_lint lints
# generated text; CompletionTest.UnreachableServerIsSilentAndFast bounds a latency (4 s) that
# an instrumented binary does not meet.
nice -n 10 ctest --test-dir "$build" --output-on-failure --parallel "${SANITIZE_JOBS:-1}" \
  --timeout 900 -E '^(s3_proxy|docs_man_lint|CompletionTest\.UnreachableServerIsSilentAndFast)$' \
  "$@" || status=$?
finished=$(date +%s)

shopt -s nullglob
found=("$reports"/*)
if [[ ${#found[@]} -gt 0 ]]; then
  echo "== $kind sanitizer reports (${#found[@]}):" >&2
  for f in "${found[@]}"; do
    echo "--- $f" >&2
    head -60 "$f" >&2
  done
  status=1
fi
echo "sanitize.sh $kind: build $((built - start)) s, tests $((finished - built)) s, $([[ $status -eq 0 ]] && echo clean || echo FAILED)"
exit $status
