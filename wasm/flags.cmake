# Emscripten flags for the wasm core (dist/onestore-core.mjs + .wasm).
#
# All of them live here, one comment per flag; CMakeLists.txt only applies
# ONESTORE_WASM_COMPILE_FLAGS (to every target of the wasm build, SQLite
# included) and ONESTORE_WASM_LINK_FLAGS (to the onestore-core executable).
# Toolchain: Debian's emscripten 3.1.6 (clang-14); see design.md,
# "Toolchain facts". scripts/build.sh sets NODE_PATH and EM_CACHE.

# Link-time optimization across the core, SQLite and the bindings.
# Off by default: measured with 3.1.6 on the whole SQLite amalgamation, -flto
# made the .wasm only 0.4% smaller (1,033,565 vs 1,038,076 bytes) while every
# relink took ~4x the CPU (94 s vs 25 s), i.e. every edit of any source file
# paid ~1.5 extra minutes. Turn on with -DONESTORE_WASM_LTO=ON to measure again.
option(ONESTORE_WASM_LTO "Build the wasm core with -flto" OFF)

set(ONESTORE_WASM_COMPILE_FLAGS
  # Optimize for speed, whatever CMAKE_BUILD_TYPE says (Release is also -O3):
  # the wasm build only exists to be shipped and benchmarked.
  -O3
  # ...except SQLite (the onestore_sqlite object), optimized for size: the
  # download target is wasm + JS <= 500 KB gzipped. Measured on 2026-11-29
  # (bench/compare-builds.mjs, two builds interleaved in one process, 5 runs):
  #   SQLite -O3 (everything -O3): .wasm 545,006 bytes gzipped
  #   SQLite -Os:                        407,405 (-137.6 KB); raw SQLite insert
  #     and select within +-6% of -O3, the store's workloads unchanged
  #   SQLite -Oz:                        405,956; raw select 1.1-1.4x slower
  #   everything -Oz (core included):    360,631; the store's commits and
  #     bulk puts 2.4-3.8x slower, page and get 1.4-1.5x: not worth 45 KB.
  # A later -O flag wins, so this one overrides -O3 for SQLite alone.
  $<$<STREQUAL:$<TARGET_PROPERTY:NAME>,onestore_sqlite>:-Os>
  # No C++ exceptions (clang's default for Emscripten, stated so nobody turns
  # them on by accident): errors cross the boundary as "!code message".
  -fno-exceptions
  # No RTTI either (issue 13): nothing in src/ or wasm/ uses typeid or
  # dynamic_cast, and RTTI's type names alone (every std::function lambda's,
  # mangled) were 11 KB of the .wasm's data. embind works without it when
  # told so (EMSCRIPTEN_HAS_UNBOUND_TYPE_NAMES=0: an unbound type's error
  # names no type); the link's -fno-rtti picks the matching embind library.
  $<$<COMPILE_LANGUAGE:CXX>:-fno-rtti>
  -DEMSCRIPTEN_HAS_UNBOUND_TYPE_NAMES=0
)

# Core sources optimized for size (-Os) rather than speed in the wasm build:
# the ones no measured workload runs in a loop (documents, archives, table
# declarations, fingerprints), which had grown the download past its
# 500 KB target (wasm + JS gzipped: 554 KB after issue 9's merges, 468 KB
# before). CMakeLists.txt gives each of these files -Os after the -O3 above
# (a later -O flag wins). docs/performance.md, "The download", has the
# before/after figures and what each file saved.
set(ONESTORE_WASM_SIZE_SOURCES
  src/documents/documents.cc
  src/archive/archive.cc
  src/schema/schema.cc
  src/sync/fingerprint.cc
  src/sync/sha256.cc
  src/sync/replica.cc
  src/backends/sqlite/connection.cc
  src/backends/sqlite/mem_file.cc
  src/onestore/status.cc
  # Issue 13's fourth step (docs/performance.md, "Issue 13, the download
  # under 500 KB"): history (the log's pages), snapshots and restore, the
  # vector text and base64 forms, and the inArray list table.
  src/history/log.cc
  src/snapshot/snapshot.cc
  src/values/vector.cc
  src/backends/sqlite/list_table.cc
  # Issue 13, step two: nearest and its vector cache (no commit, get or page
  # runs them).
  src/vectors/nearest.cc
  src/vectors/vector_cache.cc
  # The durable and file-system bridges, whose time is the JS on the other
  # side. Not wasm/bindings.cc (Core's embind wrappers): at -Os it saved
  # about 5 KB gzipped and made every call slower (a relaxed file commit,
  # a get and a page 1.4-2.6x in bench/compare-files.mjs runs).
  wasm/durable_connection.cc
  wasm/js_file_system.cc
  # Issue 13, derives' pages patched in place (3 December): the SQL text of
  # queries and bulk writes (a page on a file builds its statement's text,
  # then SQLite's step is the larger part), and the libc printf and
  # strftime SQLite calls. 1,593 bytes of the gzipped .wasm, which the
  # patching's JS needed; bench/compare-files.mjs, 5 runs interleaved: a
  # page on a file 0.96x, a get 0.70x, commits within the machine's noise.
  # Then the memory backend's evaluator of set expressions (writes/eval.cc):
  # 1,047 bytes more, for a memory updateWhere of 10k rows with a
  # replacePrefix and an add 1.10x and 1.12x slower (two interleaved /tmp
  # runs; the bench's rename stays at about 0.65x a raw UPDATE).
  src/writes/sql.cc
  src/writes/eval.cc
  src/query/sql.cc
  # Session 49: the memory backend's scan planner (once a page, a count or
  # a where-op, none of it per row): 817 bytes of the gzipped .wasm, which
  # paid for reads cut at 8 MiB (src/backends/backend.h, kReadBytes);
  # bench/compare-reads.mjs and compare-files.mjs, 7 and 9 runs
  # interleaved: 100 held derives' commit 0.81x, a page on a file 1.07x and
  # 0.95x in two runs (the machine's noise).
  src/backends/memory/plan.cc
  wasm/strftime.cc
  wasm/snprintf.cc
)

# Sources built with wasm SIMD (-msimd128, fixed-width 128-bit SIMD, which
# Node 20, Chromium and workerd all run) and without fused multiply-add
# (-ffp-contract=off), so that their float sums are the native build's, bit
# for bit (src/vectors/distance.h). Only the distance kernels: the rest of
# the core gains nothing measurable from auto-vectorization.
set(ONESTORE_WASM_SIMD_SOURCES
  src/vectors/distance.cc
)

set(ONESTORE_WASM_LINK_FLAGS
  # The module's Core class, errorCodes and peekStore: JS over the plain
  # exports of wasm/bindings.cc, run inside the factory. Not embind (issue 13,
  # the download: its glue and C++ side were about 10 KB gzipped); only the
  # bench build links embind, for RawSqlite (ONESTORE_WASM_BENCH_LINK_FLAGS).
  "SHELL:--post-js ${PROJECT_SOURCE_DIR}/wasm/core_post.js"
  # malloc and free for js/ops-buffer.js (a transaction's ops in the heap);
  # the EMSCRIPTEN_KEEPALIVE functions of wasm/ are exported as well.
  -sEXPORTED_FUNCTIONS=[_malloc,_free]
  # Emit a factory function instead of a global Module object...
  -sMODULARIZE=1
  # ...as the default export of an ES module (dist/onestore-core.mjs).
  -sEXPORT_ES6=1
  # The factory's name: `import createOnestoreCore from ".../onestore-core.mjs"`.
  -sEXPORT_NAME=createOnestoreCore
  # Which runtimes the glue code supports. NOT "node": with -sEXPORT_ES6,
  # 3.1.6's Node branch uses `__dirname` and `require`, which do not exist in
  # an ES module, so the factory throws "__dirname is not defined" in Node
  # even when given wasmBinary; it would also install process-wide
  # uncaughtException/unhandledRejection handlers. Without the Node branch the
  # glue runs unchanged in Node and workerd, provided the loader hands it the
  # module: `wasmBinary` (bytes) or `instantiateWasm` (a WebAssembly.Module),
  # which js/ always does (checked under Node 20).
  -sENVIRONMENT=web,worker
  # No `import.meta` in the glue. By default 3.1.6's ES module output finds
  # the .wasm itself, `new URL("onestore-core.wasm", import.meta.url)`, as
  # soon as the factory runs: a bundler (Vite, webpack) sees that as a second
  # reference to the asset, and workerd, whose import.meta.url is no base
  # URL, throws building it. The loaders always hand the module over
  # (`instantiateWasm` or `wasmBinary`), so the glue never fetches; the only
  # reference to the file a bundler sees is js/loader-browser.js's
  # `new URL("../dist/onestore-core.wasm", import.meta.url)`. With 0, the glue
  # takes its own address from document.currentScript (unused too).
  -sUSE_ES6_IMPORT_META=0
  # The heap grows on demand (large pages, exports) ...
  -sALLOW_MEMORY_GROWTH=1
  # ... starting from 16 MiB.
  -sINITIAL_MEMORY=16MB
  # No Emscripten file system: the SQLite VFS does its file I/O through our
  # own JS library (wasm/files_library.js), synchronously.
  -sFILESYSTEM=0
  # No eval or new Function in the glue: workerd forbids code generation from
  # strings ("Code generation from strings disallowed for this context"), and
  # embind otherwise builds its invokers with new Function. Only the glue
  # changes (generic invokers); the .wasm is the same for every runtime.
  -sDYNAMIC_EXECUTION=0
  # The glue reads only the factory options the loaders pass (js/loader-*.js,
  # bench/lib/bench-core.mjs): Emscripten's default list has some fifty
  # (print, locateFile, preRun, canvas...), each with code in the glue. The
  # package's own options (onestoreFiles, onestoreDurable) are read by the JS
  # libraries of wasm/ and need no entry here. Issue 13: the glue is part of
  # the download.
  -sINCOMING_MODULE_JS_API=[wasmBinary,instantiateWasm]
  # TextDecoder exists in every runtime the glue supports (browsers, Node,
  # workerd): no fallback decoder in JS.
  -sTEXTDECODER=2
  # Optimize the final link too (wasm-opt -O3, minified glue). -Os here was
  # measured on 2026-12-01: 4.7 KB smaller gzipped, and every workload
  # slower (get 1.9x, page 1.5x, fingerprint 2.6x; docs/performance.md,
  # "Issue 13, the download under 500 KB"). -sMALLOC=emmalloc: 2.7 KB
  # smaller, document loads 1.3-1.4x slower; not kept either.
  -O3
  # wasm-opt runs its passes until the module stops shrinking: 1.1 KB
  # smaller gzipped for about 20 s more of each link (issue 13, step two).
  -sBINARYEN_EXTRA_PASSES=--converge
)

# The bench build (build/wasm/bench/) adds embind for the bench's RawSqlite
# (wasm/raw_sqlite.cc), without RTTI as compiled (ONESTORE_WASM_COMPILE_FLAGS):
# embind's library built the same way (libembind, not libembind-rtti).
set(ONESTORE_WASM_BENCH_LINK_FLAGS --bind -fno-rtti)

# The reference link of wasm/order-functions.mjs (CMakeLists.txt,
# onestore-core-order): the shipped link's flags at -O0, so that the functions
# stay in the linker's order, with their names (--profiling-funcs) and
# without the -O0 default of assertions (extra functions in the module).
set(ONESTORE_WASM_ORDER_LINK_FLAGS ${ONESTORE_WASM_LINK_FLAGS})
list(REMOVE_ITEM ONESTORE_WASM_ORDER_LINK_FLAGS -O3)
list(APPEND ONESTORE_WASM_ORDER_LINK_FLAGS -O0 -sASSERTIONS=0 --profiling-funcs)

if(ONESTORE_WASM_LTO)
  # Compile to LLVM bitcode and optimize across all objects at link time.
  list(APPEND ONESTORE_WASM_COMPILE_FLAGS -flto)
  list(APPEND ONESTORE_WASM_LINK_FLAGS -flto)
endif()
