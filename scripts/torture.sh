#!/usr/bin/env bash
# `npm run torture`: the long forms of the reliability campaigns (issue 14),
# after the same setup and build as `npm test`. Each campaign is one file in
# tests/torture/ (a `.sh` run with bash, or a `.mjs` run with node), run in
# name order; ONESTORE_TORTURE_ONLY=<substring> runs only the matching ones.
# Every campaign prints its own figures; docs/reliability.md reports them.
set -euo pipefail

cd "$(dirname "$0")/.."

bash scripts/setup.sh
bash scripts/build.sh

shopt -s nullglob
campaigns=(tests/torture/*.sh tests/torture/*.mjs)
IFS=$'\n' campaigns=($(printf '%s\n' "${campaigns[@]}" | sort)); unset IFS
if ((${#campaigns[@]} == 0)); then
  echo "torture: no campaigns in tests/torture/" >&2
  exit 1
fi

status=0
for c in "${campaigns[@]}"; do
  if [[ -n ${ONESTORE_TORTURE_ONLY:-} && $c != *"$ONESTORE_TORTURE_ONLY"* ]]; then continue; fi
  echo
  echo "=== torture: $c ($(date -u +%H:%M:%S))"
  t0=$(date +%s)
  case $c in
    *.sh) bash "$c" || status=$? ;;
    *.mjs) node --expose-gc "$c" || status=$? ;;
  esac
  echo "=== torture: $c done in $(( $(date +%s) - t0 )) s (exit $status)"
  if ((status != 0)); then break; fi
done
exit "$status"
