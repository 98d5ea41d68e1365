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
  # Not omitted on purpose: SQLITE_OMIT_AUTOINIT (sqlite3_initialize stays
  # automatic). Not enabled: SQLITE_ENABLE_MATH_FUNCTIONS (not needed).
)
