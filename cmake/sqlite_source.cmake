# The SQLite source onestore compiles: ${ONESTORE_SQLITE_DIR}/sqlite3.c with
# one line added, written to ${ONESTORE_SQLITE_SOURCE} (included by
# src/backends/sqlite/sqlite3_unit.c).
#
# Why: cmake/sqlite_options.cmake leaves window functions out
# (SQLITE_OMIT_WINDOWFUNC). SQLite's own build would also take WINDOW,
# OVER and FILTER out of its keyword table, but the amalgamation's table and
# parser come pre-generated with them, and the tokenizer's step that reads
# them as identifiers where they are not window syntax is compiled out with
# the option. Without the line below, a column named `filter`, `over` or
# `window` in another application's schema would be a syntax error (openStore
# could not read that file), and `count(*) FILTER (WHERE ...)` would parse
# and count every row. With it, the three words are identifiers everywhere,
# as in a SQLite built without window functions from its full sources, and
# window syntax is a syntax error.
#
# The line goes after the one place it fits; a different SQLite whose text
# no longer holds that place stops the configure here, never a silent build
# without it. The output is rewritten only when its text changes, so SQLite
# is compiled once per build tree as before.

set(_onestore_sqlite_in ${ONESTORE_SQLITE_DIR}/sqlite3.c)
set(ONESTORE_SQLITE_SOURCE ${CMAKE_BINARY_DIR}/sqlite/sqlite3_onestore.c)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_onestore_sqlite_in})

file(READ ${_onestore_sqlite_in} _onestore_sqlite_text)
# sqlite3RunParser's branch for a build without window functions.
set(_onestore_at "#else\n    if( tokenType>=TK_SPACE ){\n")
set(_onestore_line "    if( tokenType==TK_WINDOW || tokenType==TK_OVER || tokenType==TK_FILTER ){\n      tokenType = TK_ID;  /* onestore: cmake/sqlite_source.cmake */\n    }\n")
string(FIND "${_onestore_sqlite_text}" "${_onestore_at}" _onestore_first)
string(FIND "${_onestore_sqlite_text}" "${_onestore_at}" _onestore_last REVERSE)
if(_onestore_first EQUAL -1 OR NOT _onestore_first EQUAL _onestore_last)
  message(FATAL_ERROR
    "${_onestore_sqlite_in}: sqlite3RunParser's branch without window functions "
    "is not where cmake/sqlite_source.cmake expects it (once). This SQLite is "
    "not the one onestore was built with (better-sqlite3@12.11.1's 3.53.x).")
endif()
string(REPLACE "${_onestore_at}" "#else\n${_onestore_line}    if( tokenType>=TK_SPACE ){\n"
       _onestore_sqlite_text "${_onestore_sqlite_text}")
file(WRITE ${ONESTORE_SQLITE_SOURCE}.new "${_onestore_sqlite_text}")
configure_file(${ONESTORE_SQLITE_SOURCE}.new ${ONESTORE_SQLITE_SOURCE} COPYONLY)
file(REMOVE ${ONESTORE_SQLITE_SOURCE}.new)
unset(_onestore_sqlite_text)
