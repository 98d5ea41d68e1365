#!/usr/bin/env bash
# Sanitized fuzzing of the core's decoders (tests/fuzz/, docs/reliability.md
# "Sanitized fuzzing"). Builds build/fuzz with clang + libFuzzer + ASan +
# UBSan (-DONESTORE_FUZZ=ON; SQLite compiled once and kept there), then:
#
#   scripts/fuzz.sh build            build only
#   scripts/fuzz.sh replay           every target over its seed corpus
#                                    (tests/fuzz/corpus/<target>/, -runs=0)
#   scripts/fuzz.sh test             build, replay, then fuzz each target for
#                                    ONESTORE_FUZZ_RUNS executions (default 1000) from
#                                    its seeds, new inputs kept in a temp dir
#                                    (what `npm test` runs)
#   scripts/fuzz.sh run SECONDS [target...]
#                                    fuzz each target (all by default) for
#                                    SECONDS; new corpus entries go to
#                                    ONESTORE_FUZZ_WORK (default a temp dir,
#                                    printed), findings to its findings/;
#                                    at nice 19 unless ONESTORE_FUZZ_NICE=0;
#                                    each target's executions and CPU
#                                    seconds are printed
#
# Without clang++ this prints why and exits 0, except on CI (CI set), where
# a missing fuzzer is a failure. The long form (run) fuzzes niced, the short
# one (test) not; the build uses one job unless ONESTORE_BUILD_JOBS says
# otherwise.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
jobs=${ONESTORE_BUILD_JOBS:-1}
mode=${1:-test}
seed=1  # libFuzzer's -seed: fixed for the short form (see fuzz below)
shift || true

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

have_clang() {
  command -v clang++ >/dev/null && command -v clang >/dev/null || return 1
  # libFuzzer's runtime (Debian: libclang-rt-14-dev).
  echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long){return 0;}' |
    clang++ -x c++ -fsanitize=fuzzer,address,undefined -o /dev/null - 2>/dev/null
}

if ! have_clang; then
  if [[ -n ${CI:-} ]]; then
    echo "fuzz: clang++ with libFuzzer (clang, libclang-rt-14-dev) is missing; scripts/setup.sh installs it" >&2
    exit 1
  fi
  echo "fuzz: skipped: clang++ with libFuzzer and the sanitizers is not installed (scripts/setup.sh installs clang and libclang-rt-14-dev)"
  exit 0
fi

targets() {
  local f
  for f in tests/fuzz/*.cc; do basename "$f" .cc; done
}

build() {
  CC=clang CXX=clang++ cmake -S . -B build/fuzz -DONESTORE_FUZZ=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >build/fuzz-configure.log 2>&1 \
    || { cat build/fuzz-configure.log >&2; exit 1; }
  cmake --build build/fuzz -j"$jobs"
}

replay() {
  local t n total=0
  for t in $(targets); do
    n=$(find "tests/fuzz/corpus/$t" -type f | wc -l)
    total=$((total + n))
    # -runs=0 runs each file once; its output is a line per file otherwise.
    "build/fuzz/fuzz_$t" -runs=0 "tests/fuzz/corpus/$t" >"build/fuzz/replay-$t.log" 2>&1 \
      || { echo "fuzz: $t failed on its corpus:" >&2; tail -40 "build/fuzz/replay-$t.log" >&2; exit 1; }
    echo "fuzz: replayed $t: $n inputs"
  done
  echo "fuzz: replayed $total corpus inputs under ASan + UBSan, no finding"
}

# fuzz LIMIT WORK target...: each target from its seeds, for LIMIT: a
# number of seconds, or "<N>runs" for exactly N executions (the short form
# in npm test: with -seed=1 the same N mutations on every run, so the phase
# is as repeatable as the rest of npm test; time-bounded fuzzing, whose
# reach depends on the machine's speed, is for npm run torture).
fuzz() {
  local seconds=$1 work=$2; shift 2
  local bound="-max_total_time=$seconds"
  if [[ $seconds == *runs ]]; then bound="-runs=${seconds%runs}"; fi
  local t status=0
  mkdir -p "$work/findings"
  for t in "$@"; do
    mkdir -p "$work/corpus/$t"
    local log="$work/$t.log"
    # The CPU time a target had (a niced run on a busy machine gets much less
    # than its wall time): /usr/bin/time when there is one.
    local timer=()
    if [[ -x /usr/bin/time ]]; then timer=(/usr/bin/time -f '%U %S' -o "$work/$t.cpu"); fi
    # -seed: the same mutations on every run of the short form; a long run
    # (run) takes ONESTORE_FUZZ_SEED, else one from the clock (printed), so
    # that two long runs do not repeat each other's mutations.
    $nice "${timer[@]}" "build/fuzz/fuzz_$t" "$bound" -seed="$seed" -max_len=4096 -timeout=20 \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/findings/$t-" \
      "$work/corpus/$t" "tests/fuzz/corpus/$t" >"$log" 2>&1 || status=$?
    local execs
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
    local units
    units=$(find "$work/corpus/$t" -type f | wc -l)
    local cpu=""
    if [[ -s $work/$t.cpu ]]; then
      cpu=$(awk 'END { printf ", %.0f CPU s", $1 + $2 }' "$work/$t.cpu")
    fi
    echo "fuzz: $t: $execs executions (${bound#-}$cpu), $units new corpus entries"
    if ((status)); then
      echo "fuzz: $t FOUND something (exit $status); the input is in $work/findings/:" >&2
      grep -B2 -A30 -m1 -E 'ERROR|runtime error|invariant broken|deadly signal' "$log" >&2 || tail -40 "$log" >&2
      return "$status"
    fi
  done
}

nice=
case $mode in
  build) build ;;
  replay) replay ;;
  test)
    build
    replay
    work=$(mktemp -d "${TMPDIR:-/tmp}/onestore-fuzz-XXXXXX")
    fuzz "${ONESTORE_FUZZ_RUNS:-1000}runs" "$work" $(targets) || { echo "fuzz: kept $work" >&2; exit 1; }
    rm -rf "$work"
    ;;
  run)
    seconds=${1:?usage: scripts/fuzz.sh run SECONDS [target...]}; shift
    seed=${ONESTORE_FUZZ_SEED:-$(( $(date +%s) % 1000000000 + 1 ))}
    echo "fuzz: -seed=$seed (ONESTORE_FUZZ_SEED repeats this run)"
    [[ ${ONESTORE_FUZZ_NICE:-1} == 0 ]] || nice="nice -n 19"
    build
    work=${ONESTORE_FUZZ_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/onestore-fuzz-XXXXXX")}
    echo "fuzz: new corpus entries and findings in $work"
    if (($#)); then fuzz "$seconds" "$work" "$@"; else fuzz "$seconds" "$work" $(targets); fi
    ;;
  *) echo "fuzz: unknown mode '$mode' (build, replay, test, run)" >&2; exit 2 ;;
esac
