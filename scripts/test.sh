#!/usr/bin/env bash
# `npm test`: set up, build, and run every test suite; stops at the first
# failure. Phases: setup, build (native + wasm), C++ tests (ctest), sanitized
# fuzzing (scripts/fuzz.sh: corpus replay and a short run), JS tests
# (node --test), browser tests (Chromium), bundler tests (the packed package
# built by Vite, esbuild, webpack, wrangler; run in Chromium and workerd), edge
# tests (workerd), TypeScript type-check of the package's .d.ts.
set -euo pipefail

cd "$(dirname "$0")/.."

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

timings=()
phase() {
  local name=$1; shift
  local t0; t0=$(now)
  echo
  echo "=== test: $name"
  "$@"
  local took; took=$(elapsed "$t0")
  timings+=("$(printf '%-12s %7s s' "$name" "$took")")
  echo "=== test: $name done in $took s"
}

# Every node --test phase reports with the spec reporter: it ends with the
# list of failing tests and their errors, so the tail of a run's log (all
# that some CI views keep) names what failed.
run_js_tests() {
  local files=()
  while IFS= read -r -d '' f; do files+=("$f"); done < <(
    find tests/js -type f \( -name '*.test.js' -o -name '*.test.mjs' \) -print0 2>/dev/null | sort -z)
  if ((${#files[@]} == 0)); then
    echo "test: no tests/js/**/*.test.{js,mjs} yet: skipped"
    return 0
  fi
  node --test --test-reporter=spec "${files[@]}"
}

# Browser tests: real Chromium (Debian's) driven by playwright-core, against
# the repository served on localhost (tests/browser/harness.js).
run_browser_tests() {
  local files=()
  while IFS= read -r -d '' f; do files+=("$f"); done < <(
    find tests/browser -type f \( -name '*.test.js' -o -name '*.test.mjs' \) -print0 2>/dev/null | sort -z)
  if ((${#files[@]} == 0)); then
    echo "test: no tests/browser/**/*.test.{js,mjs} yet: skipped"
    return 0
  fi
  node --test --test-reporter=spec --test-concurrency=1 "${files[@]}"
}

# Bundler tests: the package packed once (npm pack, ONESTORE_TARBALL),
# installed from the tarball into temp apps, built with Vite, esbuild,
# webpack and wrangler, and run in Chromium and workerd (tests/bundlers/).
run_bundler_tests() {
  local files=()
  while IFS= read -r -d '' f; do files+=("$f"); done < <(
    find tests/bundlers -type f \( -name '*.test.js' -o -name '*.test.mjs' \) -print0 2>/dev/null | sort -z)
  if ((${#files[@]} == 0)); then
    echo "test: no tests/bundlers/**/*.test.{js,mjs} yet: skipped"
    return 0
  fi
  local pack_dir status=0
  pack_dir=$(mktemp -d "${TMPDIR:-/tmp}/onestore-pack-XXXXXX")
  npm pack --pack-destination "$pack_dir" --loglevel=error >/dev/null
  ONESTORE_TARBALL=$(echo "$pack_dir"/*.tgz) node --test --test-reporter=spec --test-concurrency=1 "${files[@]}" || status=$?
  rm -rf "$pack_dir"
  return "$status"
}

# Edge tests: real workerd (Miniflare 4 from node_modules), a SQLite Durable
# Object with the durable backend (tests/edge/harness.js).
run_edge_tests() {
  local files=()
  while IFS= read -r -d '' f; do files+=("$f"); done < <(
    find tests/edge -type f \( -name '*.test.js' -o -name '*.test.mjs' \) -print0 2>/dev/null | sort -z)
  if ((${#files[@]} == 0)); then
    echo "test: no tests/edge/**/*.test.{js,mjs} yet: skipped"
    return 0
  fi
  node --test --test-reporter=spec --test-concurrency=1 "${files[@]}"
}

run_type_check() {
  if [[ ! -f tests/types/tsconfig.json ]]; then
    echo "test: tests/types/tsconfig.json does not exist yet: type-check skipped"
    return 0
  fi
  npx --no-install tsc -p tests/types/tsconfig.json
  # The same package in a Cloudflare Worker's types (@cloudflare/workers-types).
  npx --no-install tsc -p tests/types/tsconfig.workers.json
  echo "test: type-check passed"
}

t_all=$(now)
phase setup bash scripts/setup.sh
phase build bash scripts/build.sh
# GoogleTest's TempDir() follows TEST_TMPDIR: a folder of this run's own, so
# two runs on one machine (two checkouts, say) never share a test's files.
ctest_tmp=$(mktemp -d -t onestore-ctest.XXXXXX)
export TEST_TMPDIR=$ctest_tmp/
phase ctest ctest --test-dir build/native --output-on-failure --timeout 300
rm -rf "$ctest_tmp"
# Sanitized fuzzing, the short form: the core built with clang, ASan and
# UBSan (build/fuzz), every seed and regression input of tests/fuzz/corpus/
# replayed, then each target fuzzed for ONESTORE_FUZZ_RUNS executions (scripts/fuzz.sh;
# skipped with a message where clang is missing, except on CI).
phase fuzz bash scripts/fuzz.sh test
phase node-test run_js_tests
phase browser run_browser_tests
phase bundlers run_bundler_tests
phase edge run_edge_tests
phase types run_type_check

echo
echo "=== test: all phases passed in $(elapsed "$t_all") s"
printf '  %s\n' "${timings[@]}"
