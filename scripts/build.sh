#!/usr/bin/env bash
# Builds onestore twice from CMakeLists.txt:
#   native  build/native  (RelWithDebInfo): libonestore_core.a, onestore_tests
#   wasm    build/wasm    (Emscripten):     dist/onestore-core.mjs + .wasm
# Incremental: CMake rebuilds only what changed (SQLite's object is compiled
# once per build tree). Usage: scripts/build.sh [native|wasm]...  (default both)
#
# Expects what scripts/setup.sh installs (cmake, g++, emscripten, nlohmann,
# node_modules/better-sqlite3 for the SQLite amalgamation).
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
jobs=${ONESTORE_BUILD_JOBS:-2}

targets=("$@")
((${#targets[@]})) || targets=(native wasm)

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

build_native() {
  local t0; t0=$(now)
  # Configuring an existing tree is quick and also repairs one whose last
  # configure failed; the globs are re-checked on every build anyway
  # (CONFIGURE_DEPENDS).
  cmake -S . -B build/native -DCMAKE_BUILD_TYPE=RelWithDebInfo >build/native-configure.log 2>&1 \
    || { cat build/native-configure.log >&2; exit 1; }
  grep -A3 -i 'warning' build/native-configure.log || true
  cmake --build build/native -j"$jobs"
  echo "build: native done in $(elapsed "$t0") s"
}

build_wasm() {
  local t0; t0=$(now)
  if ! command -v emcmake >/dev/null; then
    echo "build: emcmake not found: run scripts/setup.sh (installs Debian's emscripten)" >&2
    exit 1
  fi
  # Emscripten's JS optimizer imports acorn; Debian ships it as node-acorn in
  # /usr/share/nodejs, which node does not search by itself.
  export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
  # Emscripten's cache of system libraries (libc, libc++, embind...). Debian's
  # package ships it prebuilt and frozen in /usr/share/emscripten/cache
  # (FROZEN_CACHE in /usr/share/emscripten/.emscripten): nothing to warm up,
  # and it works for any user. Only an install whose cache is neither frozen
  # nor writable gets a cache of ours, built once and kept in build/emcache.
  if [[ -z ${EM_CACHE:-} ]]; then
    local sys_cache=/usr/share/emscripten/cache
    local config=/usr/share/emscripten/.emscripten
    if [[ -d $sys_cache && ! -w $sys_cache ]] && ! grep -qs '^FROZEN_CACHE *= *True' "$config"; then
      export EM_CACHE=$root/build/emcache
      mkdir -p "$EM_CACHE"
      echo "build: $sys_cache is not writable: using EM_CACHE=$EM_CACHE (the first build fills it; slow once)"
    fi
  fi
  emcmake cmake -S . -B build/wasm >build/wasm-configure.log 2>&1 \
    || { cat build/wasm-configure.log >&2; exit 1; }
  grep -A3 -i 'warning' build/wasm-configure.log || true
  cmake --build build/wasm -j"$jobs"
  if [[ -f dist/onestore-core.mjs ]]; then
    echo "build: wasm done in $(elapsed "$t0") s:" \
      "dist/onestore-core.wasm $(stat -c %s dist/onestore-core.wasm) bytes," \
      "dist/onestore-core.mjs $(stat -c %s dist/onestore-core.mjs) bytes"
  else
    echo "build: wasm done in $(elapsed "$t0") s (no dist/onestore-core.mjs: wasm/*.cc missing?)"
  fi
}

mkdir -p build
for target in "${targets[@]}"; do
  case $target in
    native) build_native ;;
    wasm) build_wasm ;;
    *) echo "build: unknown target '$target' (native, wasm)" >&2; exit 2 ;;
  esac
done
