#!/usr/bin/env bash
# Torture campaign: sanitized fuzzing, the long form (docs/reliability.md,
# "Sanitized fuzzing"). Fuzzes every target of tests/fuzz/ for
# ONESTORE_FUZZ_MINUTES (default 10) each, under ASan + UBSan, from the seed
# corpus; new corpus entries and any finding go to a temp dir
# (ONESTORE_FUZZ_WORK to choose it), which is printed and kept. A finding
# stops the campaign with the input's path: fix it in src/, then put the
# input in tests/fuzz/corpus/<target>/regression-<what> (replayed by npm test
# and by ctest) and add a test that names it.
set -euo pipefail
cd "$(dirname "$0")/../.."
minutes=${ONESTORE_FUZZ_MINUTES:-10}
bash scripts/fuzz.sh run $((minutes * 60))
