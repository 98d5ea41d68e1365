/* The SQLite amalgamation as onestore compiles it (CMakeLists.txt,
 * onestore_sqlite): sqlite3.c itself, then what cmake/sqlite_options.cmake's
 * omissions leave undefined.
 *
 * SQLite's parser comes pre-generated in the amalgamation, so it keeps the
 * grammar of every statement: compiled with SQLITE_OMIT_VIEW, _ANALYZE or
 * _REINDEX, its actions still call the function that starts the statement,
 * which the option removed. Each is defined here to refuse the statement with
 * an error (and free what the parser handed it), so that the rest of the
 * feature's code stays out of the build (issue 13: the download). No store
 * SQL creates a view, analyzes or reindexes. */
#include "sqlite3.c"

#ifdef SQLITE_OMIT_VIEW
SQLITE_PRIVATE void sqlite3CreateView(Parse *pParse, Token *pBegin, Token *pName1, Token *pName2,
                                      ExprList *pCNames, Select *pSelect, int isTemp, int noErr) {
  (void)pBegin;
  (void)pName1;
  (void)pName2;
  (void)isTemp;
  (void)noErr;
  sqlite3ErrorMsg(pParse, "CREATE VIEW is not in this build of SQLite (onestore)");
  sqlite3SelectDelete(pParse->db, pSelect);
  sqlite3ExprListDelete(pParse->db, pCNames);
}
#endif

#ifdef SQLITE_OMIT_ANALYZE
SQLITE_PRIVATE void sqlite3Analyze(Parse *pParse, Token *pName1, Token *pName2) {
  (void)pName1;
  (void)pName2;
  sqlite3ErrorMsg(pParse, "ANALYZE is not in this build of SQLite (onestore)");
}
#endif

#ifdef SQLITE_OMIT_REINDEX
SQLITE_PRIVATE void sqlite3Reindex(Parse *pParse, Token *pName1, Token *pName2) {
  (void)pName1;
  (void)pName2;
  sqlite3ErrorMsg(pParse, "REINDEX is not in this build of SQLite (onestore)");
}
#endif
