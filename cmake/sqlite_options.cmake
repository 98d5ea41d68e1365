# The one list of SQLite compile-time options for onestore.
#
# Every build of SQLite in this project (native tests, the wasm core) uses
# exactly this list, so the store file and the SQL it runs mean the same thing
# everywhere. The amalgamation is the one inside better-sqlite3@12.11.1
# (node_modules/better-sqlite3/deps/sqlite3/), which is also the native
# baseline of the benchmarks. Change an option here and nowhere else.
#
# The options are PUBLIC on the onestore_sqlite target, so code that includes
# sqlite3.h (src/backends/sqlite/) sees the same configuration.

set(ONESTORE_SQLITE_OPTIONS
  # No built-in OS layer: the VFS in src/backends/sqlite/ provides
  # sqlite3_os_init/sqlite3_os_end and does all file I/O through our file
  # interface (OPFS, Node files, the POSIX file natively, an in-memory fake).
  SQLITE_OS_OTHER=1
  # Double-quoted strings are identifiers only, never string literals.
  SQLITE_DQS=0
  # One thread per store: the commit queue serializes everything.
  SQLITE_THREADSAFE=0
  # Temporary tables and indices live in memory (no temp files through the VFS).
  SQLITE_TEMP_STORE=3
  # No memory-usage accounting on every malloc (it costs a lock and a counter).
  SQLITE_DEFAULT_MEMSTATUS=0
  # No loadable extensions (no dlopen in wasm, and nothing to load).
  SQLITE_OMIT_LOAD_EXTENSION
  # Drop deprecated interfaces so we cannot come to rely on them.
  SQLITE_OMIT_DEPRECATED
  # No shared-cache mode.
  SQLITE_OMIT_SHARED_CACHE
  # LIKE never matches a BLOB (faster, and what a user expects).
  SQLITE_LIKE_DOESNT_MATCH_BLOBS
  # No limit on expression depth, and no depth bookkeeping.
  SQLITE_MAX_EXPR_DEPTH=0
  # Use alloca() for short-lived scratch memory instead of malloc.
  SQLITE_USE_ALLOCA
  # No progress handler callbacks.
  SQLITE_OMIT_PROGRESS_CALLBACK
  # Features no store SQL uses, left out to keep the wasm download small
  # (docs/performance.md, "The download"); each is an option SQLite
  # supports with the amalgamation: the date and time functions, UTF-16
  # text and APIs, sqlite3_complete, column declared types, sqlite3_get_table,
  # Tcl-style variables, tracing, the authorizer, incremental blob I/O and
  # the compile-option list.
  SQLITE_OMIT_DATETIME_FUNCS
  SQLITE_OMIT_UTF16
  SQLITE_OMIT_COMPLETE
  SQLITE_OMIT_DECLTYPE
  SQLITE_OMIT_GET_TABLE
  SQLITE_OMIT_TCL_VARIABLE
  SQLITE_OMIT_TRACE
  SQLITE_OMIT_AUTHORIZATION
  SQLITE_OMIT_INCRBLOB
  SQLITE_OMIT_COMPILEOPTION_DIAGS
  # Features the store's SQL never uses, omitted for the download (measured
  # 2026-11-30 on the wasm core, .wasm gzipped: 482.9 KB with the list above,
  # 468.2 KB with the ones below but JSON, 454.0 KB with JSON too). Only
  # options that leave SQLite's parser alone: those that remove grammar
  # (triggers, views, CTEs, window functions, ATTACH, VACUUM, ANALYZE) fail
  # to compile or link with the amalgamation's pre-generated parser.
  # - JSON functions: long inArray lists read their JSON array through the
  #   core's own onestore_list table (src/backends/sqlite/list_table.h)
  #   instead of json_each. A Durable Object's SQLite is not this one.
  SQLITE_OMIT_JSON
  # - No foreign keys, CHECK constraints, generated columns or auto_vacuum in
  #   the store's tables (src/schema/), so none of their machinery.
  SQLITE_OMIT_FOREIGN_KEY
  SQLITE_OMIT_CHECK
  SQLITE_OMIT_GENERATED_COLUMNS
  SQLITE_OMIT_AUTOVACUUM
  # - Every query the store runs has the index it needs: no automatic ones.
  SQLITE_OMIT_AUTOMATIC_INDEX
  # - Planner and pragma extras the store's statements never reach: the
  #   INSERT ... SELECT transfer, LIKE's index use (no LIKE in its SQL),
  #   flag and introspection pragmas (journal_mode, locking_mode,
  #   synchronous, integrity_check, wal_checkpoint and user_version remain),
  #   X'..' literals (blobs are bound), localtime, sqlite3_deserialize.
  SQLITE_OMIT_XFER_OPT
  SQLITE_OMIT_LIKE_OPTIMIZATION
  SQLITE_OMIT_CASE_SENSITIVE_LIKE_PRAGMA
  SQLITE_OMIT_FLAG_PRAGMAS
  SQLITE_OMIT_INTROSPECTION_PRAGMAS
  SQLITE_OMIT_BLOB_LITERAL
  SQLITE_OMIT_LOCALTIME
  SQLITE_OMIT_DESERIALIZE
  # Issue 13, the download, step two (docs/performance.md): more of what no
  # store SQL reaches and that compiles out cleanly with the amalgamation's
  # parser (the statements still parse; SQLite's code for them is gone):
  # EXPLAIN (runs the statement itself), upserts (ON CONFLICT ... DO fails
  # as a plain INSERT would; the store writes INSERT OR REPLACE), the schema
  # pragmas (table_info, index_list...: no rows), and the test-control hooks.
  # Not SQLITE_OMIT_COMPOUND_SELECT: it compiles, but a UNION then answers
  # its last SELECT's rows only, silently (and so would a multi-row VALUES
  # that SQLite codes as a UNION ALL): too quiet a trap for the bytes.
  SQLITE_OMIT_EXPLAIN
  SQLITE_OMIT_UPSERT
  SQLITE_OMIT_SCHEMA_PRAGMAS
  SQLITE_UNTESTABLE
  # Views, triggers, ANALYZE, REINDEX, ATTACH and with it VACUUM: the
  # parser still calls the function that starts each statement, which
  # src/backends/sqlite/sqlite3_unit.c defines to refuse it with an error.
  # (CTEs are more entangled with the parser: left in. Window functions are
  # out since session 54, below.)
  SQLITE_OMIT_ATTACH
  SQLITE_OMIT_TRIGGER
  SQLITE_OMIT_VIEW
  SQLITE_OMIT_ANALYZE
  SQLITE_OMIT_REINDEX
  # Issue 13, memory tables' keys and a get without embind
  # (docs/performance.md): 1,405 bytes gzipped that pay for them, none of
  # which a store's SQL reaches but the last. No memory-mapped I/O (none of
  # the VFSs maps a file); no hex integer literals (values are bound); no
  # AUTOINCREMENT (the store's tables have none); no sorter threads
  # (SQLITE_THREADSAFE=0 starts none); no index use for BETWEEN (the
  # store's SQL writes ranges as >= and <).
  # Not SQLITE_OMIT_TEMPDB: it compiles, but ALTER TABLE ... DROP COLUMN
  # then opens the missing temp database's B-tree and crashes (the fuzz
  # corpus's batch target found it).
  SQLITE_MAX_MMAP_SIZE=0
  SQLITE_OMIT_HEX_INTEGER
  SQLITE_OMIT_AUTOINCREMENT
  SQLITE_MAX_WORKER_THREADS=0
  SQLITE_OMIT_BETWEEN_OPTIMIZATION
  # No lookaside allocator: SQLite's small allocations go to malloc. 478
  # bytes; a Node file's one-put commit read 1.01x (relaxed) and 1.03x
  # (full) the CPU time with it, 25,000 puts 1.03x, within the noise
  # (bench/compare-file-commits.mjs, 9 runs).
  SQLITE_OMIT_LOOKASIDE
  # No window functions (OVER, FILTER, WINDOW): 7,370 bytes of the gzipped
  # .wasm (docs/performance.md, "Session 54"). No store SQL has one. The
  # amalgamation's tokenizer would then read the three words as keywords the
  # grammar has no place for; cmake/sqlite_source.cmake adds the line that
  # reads them as identifiers, as SQLite built from its full sources without
  # window functions does, and src/backends/sqlite/sqlite3_unit.c defines
  # what the parser's window actions call, so that it links.
  SQLITE_OMIT_WINDOWFUNC
  # Not omitted on purpose: SQLITE_OMIT_AUTOINIT (sqlite3_initialize stays
  # automatic). Not enabled: SQLITE_ENABLE_MATH_FUNCTIONS (not needed).
)

if(EMSCRIPTEN)
  # The wasm core only: no PRAGMA integrity_check or quick_check (they
  # answer no rows). No store code runs them; the tests check files with the
  # real sqlite3 command (an OPFS store's files are read out of the browser:
  # tests/browser/harness.js, integrity), and the native build keeps them
  # for its crash tests. ALTER TABLE ... ADD COLUMN on a STRICT table reads
  # pragma_quick_check: the core registers a table of no rows under that
  # name (src/backends/sqlite/list_table.h, RegisterEmptyQuickCheck).
  # 3,951 bytes of the gzipped .wasm (6 December), which paid for the fixes
  # of session 44's probes.
  list(APPEND ONESTORE_SQLITE_OPTIONS SQLITE_OMIT_INTEGRITY_CHECK)
endif()
