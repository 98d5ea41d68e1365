#!/usr/bin/env bash
# Installs what building and testing onestore needs, once; a second run skips
# everything that is already there and costs well under a second.
#
#   Debian packages: emscripten nlohmann-json3-dev sqlite3 libgtest-dev cmake g++
#                    chromium (the browser tests drive it with playwright-core)
#                    postgresql (the PostgreSQL mirror's tests start their own
#                    server with initdb/pg_ctl in a temp folder)
#                    clang libclang-rt-14-dev (libFuzzer, ASan and UBSan for
#                    the fuzz targets in tests/fuzz/)
#                    strace (tests/js/dir-sync.test.js watches the syncs)
#                    (as root, `apt-get update` once, then `apt-get install -y`)
#   npm packages:    `npm install` when node_modules is missing or older than
#                    package.json / package-lock.json
#
# Safe without a terminal (CI=true, no stdin). Not root and something missing:
# says what to install and fails.
set -euo pipefail

cd "$(dirname "$0")/.."

export DEBIAN_FRONTEND=noninteractive

# Debian package -> a file or command that proves it is installed. dpkg -s is
# the real check; the probe is a cheap first look.
APT_PACKAGES=(emscripten nlohmann-json3-dev sqlite3 libgtest-dev cmake g++ chromium strace
              postgresql clang libclang-rt-14-dev)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: missing Debian packages: ${missing[*]}" >&2
    echo "setup: install them as root, then run this again:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "setup: installing Debian packages: ${missing[*]}"
  apt-get update -q </dev/null
  apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
else
  echo "setup: Debian packages present (${APT_PACKAGES[*]})"
fi

for cmd in node npm; do
  if ! command -v "$cmd" >/dev/null; then
    echo "setup: '$cmd' not found: install Node.js 20 or later (with npm)" >&2
    exit 1
  fi
done

# npm packages: install when node_modules is missing or stale. npm writes
# node_modules/.package-lock.json on every install, so it is the stamp.
stamp=node_modules/.package-lock.json
need_npm=0
if [[ ! -f $stamp ]]; then
  need_npm=1
elif [[ package.json -nt $stamp ]] || { [[ -f package-lock.json ]] && [[ package-lock.json -nt $stamp ]]; }; then
  need_npm=1
elif [[ ! -f node_modules/better-sqlite3/deps/sqlite3/sqlite3.c ]]; then
  need_npm=1
fi
if ((need_npm)); then
  echo "setup: npm install"
  npm install --no-audit --no-fund </dev/null
  # npm leaves the stamp untouched when nothing changed; touch it so that the
  # next run does not install again.
  touch "$stamp"
else
  echo "setup: node_modules up to date"
fi
