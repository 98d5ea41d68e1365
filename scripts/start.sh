#!/usr/bin/env bash
# `npm start`: on a fresh machine installs what is missing and builds the wasm
# core (both skipped when already done), then serves the demo page on
# localhost (scripts/serve-demo.mjs; a port may follow: `npm start -- 9000`),
# with a local sync relay in workerd beside it (examples/relay/; `npm start --
# --no-relay` skips it).
# `npm run example` runs the Node example session (examples/session.mjs).
set -euo pipefail

cd "$(dirname "$0")/.."

bash scripts/setup.sh
bash scripts/build.sh wasm

if [[ "${1:-}" == "--example" ]]; then
  shift
  exec node examples/session.mjs "$@"
fi
exec node scripts/serve-demo.mjs "$@"
