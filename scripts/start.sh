#!/usr/bin/env bash
# `npm start`: on a fresh machine installs what is missing and builds the wasm
# core (both skipped when already done), then runs the example session.
set -euo pipefail

cd "$(dirname "$0")/.."

bash scripts/setup.sh
bash scripts/build.sh wasm

if [[ ! -f examples/session.mjs ]]; then
  echo "start: examples/session.mjs does not exist yet" >&2
  exit 1
fi
exec node examples/session.mjs "$@"
