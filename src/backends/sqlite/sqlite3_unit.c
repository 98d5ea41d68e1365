/* The SQLite amalgamation as onestore compiles it (CMakeLists.txt,
 * onestore_sqlite): sqlite3.c itself (with the line
 * cmake/sqlite_source.cmake adds), then what cmake/sqlite_options.cmake's
 * omissions leave undefined.
 *
 * SQLite's parser comes pre-generated in the amalgamation, so it keeps the
 * grammar of every statement: compiled with SQLITE_OMIT_VIEW, _ANALYZE,
 * _REINDEX, _TRIGGER or _ATTACH (which takes VACUUM with it), its actions
 * still call the function that starts the statement, which the option
 * removed. Each is defined here to refuse the
 * statement with an error (and free what the parser handed it), so that the
 * rest of the feature's code stays out of the build (issue 13: the
 * download). No store SQL creates a view or a trigger, analyzes, reindexes,
 * attaches or vacuums (a snapshot copies the file with the backup API), or
 * calls a window function (SQLITE_OMIT_WINDOWFUNC, below).
 * An error stops the parser at the token that raised it (sqlite3RunParser
 * breaks on pParse->rc), so a CREATE TRIGGER ends at its BEGIN. */
#ifdef SQLITE_OMIT_TRIGGER
/* Triggers: the parser's actions call these without a prototype in sight
 * (the amalgamation declares them only when triggers are in), so they are
 * declared here, before it, with the struct tags its typedefs name. */
struct Parse;
struct Token;
struct IdList;
struct SrcList;
struct Expr;
struct ExprList;
struct Select;
struct Upsert;
struct TriggerStep;
struct sqlite3;
static void sqlite3BeginTrigger(struct Parse *, struct Token *, struct Token *, int, int,
                                struct IdList *, struct SrcList *, struct Expr *, int, int);
static void sqlite3FinishTrigger(struct Parse *, struct TriggerStep *, struct Token *);
static void sqlite3DropTrigger(struct Parse *, struct SrcList *, int);
static void sqlite3DeleteTriggerStep(struct sqlite3 *, struct TriggerStep *);
static struct TriggerStep *sqlite3TriggerSelectStep(struct sqlite3 *, struct Select *, const char *,
                                                    const char *);
static struct TriggerStep *sqlite3TriggerInsertStep(struct Parse *, struct Token *, struct IdList *,
                                                    struct Select *, unsigned char, struct Upsert *,
                                                    const char *, const char *);
static struct TriggerStep *sqlite3TriggerUpdateStep(struct Parse *, struct Token *,
                                                    struct SrcList *, struct ExprList *,
                                                    struct Expr *, unsigned char, const char *,
                                                    const char *);
static struct TriggerStep *sqlite3TriggerDeleteStep(struct Parse *, struct Token *, struct Expr *,
                                                    const char *, const char *);
#endif

#ifdef SQLITE_OMIT_WINDOWFUNC
/* Window functions: the grammar's actions for OVER, FILTER and WINDOW call
 * these, declared (like the trigger ones above) before the amalgamation.
 * No SQL reaches them: the tokenizer reads those three words as identifiers
 * in this build (cmake/sqlite_source.cmake), so window syntax is a syntax
 * error. They are defined below only so that the parser links. */
struct Parse;
struct Token;
struct Expr;
struct ExprList;
struct Window;
struct sqlite3;
static struct Window *sqlite3WindowAlloc(struct Parse *, int, int, struct Expr *, int,
                                         struct Expr *, unsigned char);
static struct Window *sqlite3WindowAssemble(struct Parse *, struct Window *, struct ExprList *,
                                            struct ExprList *, struct Token *);
static void sqlite3WindowChain(struct Parse *, struct Window *, struct Window *);
static void sqlite3WindowListDelete(struct sqlite3 *, struct Window *);
/* One action stores a SELECT's WINDOW clause in Select.pWinDefn, a member
 * the option removes. So that it compiles, the member names a sink of the
 * right type (the comma discards the Select's op, read for nothing). */
static struct Window *onestore_window_defn_sink;
#define pWinDefn op, onestore_window_defn_sink
#endif

/* sqlite3.c with the one line cmake/sqlite_source.cmake adds. */
#include "sqlite3_onestore.c"

#ifdef SQLITE_OMIT_VIEW
SQLITE_PRIVATE void sqlite3CreateView(Parse *pParse, Token *pBegin, Token *pName1, Token *pName2,
                                      ExprList *pCNames, Select *pSelect, int isTemp, int noErr) {
  (void)pBegin;
  (void)pName1;
  (void)pName2;
  (void)isTemp;
  (void)noErr;
  /* A view in the schema of a database another application made (openStore
   * names its tables when refusing it, or adopts it): left out of the
   * connection's schema, where nothing the store runs would read it. */
  if (!pParse->db->init.busy) {
    sqlite3ErrorMsg(pParse, "CREATE VIEW is not in this build of SQLite (onestore)");
  }
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

#ifdef SQLITE_OMIT_TRIGGER
SQLITE_PRIVATE void sqlite3BeginTrigger(Parse *pParse, Token *pName1, Token *pName2, int tr_tm,
                                        int op, IdList *pColumns, SrcList *pTableName, Expr *pWhen,
                                        int isTemp, int noErr) {
  (void)pName1;
  (void)pName2;
  (void)tr_tm;
  (void)op;
  (void)isTemp;
  (void)noErr;
  /* Also when reading the schema of a database another application made:
   * its triggers would not run on this connection's writes, so it does not
   * open ("malformed database schema ... CREATE TRIGGER is not in this
   * build"), rather than open with them silently off. */
  sqlite3ErrorMsg(pParse, "CREATE TRIGGER is not in this build of SQLite (onestore)");
  sqlite3IdListDelete(pParse->db, pColumns);
  sqlite3SrcListDelete(pParse->db, pTableName);
  sqlite3ExprDelete(pParse->db, pWhen);
}

SQLITE_PRIVATE void sqlite3DropTrigger(Parse *pParse, SrcList *pName, int noErr) {
  (void)noErr;
  sqlite3ErrorMsg(pParse, "DROP TRIGGER is not in this build of SQLite (onestore)");
  sqlite3SrcListDelete(pParse->db, pName);
}

/* The parser reaches what follows only after a sqlite3BeginTrigger that
 * succeeded, which never happens: no step is ever built, and there is no list
 * of steps to finish or delete. Each still frees what it is handed. */
SQLITE_PRIVATE void sqlite3DeleteTriggerStep(sqlite3 *db, TriggerStep *pStep) {
  (void)db;
  (void)pStep;
}

SQLITE_PRIVATE void sqlite3FinishTrigger(Parse *pParse, TriggerStep *pStepList, Token *pAll) {
  (void)pStepList;
  (void)pAll;
  sqlite3ErrorMsg(pParse, "CREATE TRIGGER is not in this build of SQLite (onestore)");
}

SQLITE_PRIVATE TriggerStep *sqlite3TriggerSelectStep(sqlite3 *db, Select *pSelect,
                                                     const char *zStart, const char *zEnd) {
  (void)zStart;
  (void)zEnd;
  sqlite3SelectDelete(db, pSelect);
  return 0;
}

SQLITE_PRIVATE TriggerStep *sqlite3TriggerInsertStep(Parse *pParse, Token *pTableName,
                                                     IdList *pColumn, Select *pSelect, u8 orconf,
                                                     Upsert *pUpsert, const char *zStart,
                                                     const char *zEnd) {
  (void)pTableName;
  (void)orconf;
  (void)pUpsert; /* no upserts in this build (SQLITE_OMIT_UPSERT): always 0 */
  (void)zStart;
  (void)zEnd;
  sqlite3ErrorMsg(pParse, "CREATE TRIGGER is not in this build of SQLite (onestore)");
  sqlite3IdListDelete(pParse->db, pColumn);
  sqlite3SelectDelete(pParse->db, pSelect);
  return 0;
}

SQLITE_PRIVATE TriggerStep *sqlite3TriggerUpdateStep(Parse *pParse, Token *pTableName,
                                                     SrcList *pFrom, ExprList *pEList, Expr *pWhere,
                                                     u8 orconf, const char *zStart,
                                                     const char *zEnd) {
  (void)pTableName;
  (void)orconf;
  (void)zStart;
  (void)zEnd;
  sqlite3ErrorMsg(pParse, "CREATE TRIGGER is not in this build of SQLite (onestore)");
  sqlite3SrcListDelete(pParse->db, pFrom);
  sqlite3ExprListDelete(pParse->db, pEList);
  sqlite3ExprDelete(pParse->db, pWhere);
  return 0;
}

SQLITE_PRIVATE TriggerStep *sqlite3TriggerDeleteStep(Parse *pParse, Token *pTableName, Expr *pWhere,
                                                     const char *zStart, const char *zEnd) {
  (void)pTableName;
  (void)zStart;
  (void)zEnd;
  sqlite3ErrorMsg(pParse, "CREATE TRIGGER is not in this build of SQLite (onestore)");
  sqlite3ExprDelete(pParse->db, pWhere);
  return 0;
}
#endif

#ifdef SQLITE_OMIT_ATTACH
SQLITE_PRIVATE void sqlite3Attach(Parse *pParse, Expr *pFilename, Expr *pDbname, Expr *pKey) {
  sqlite3ErrorMsg(pParse, "ATTACH is not in this build of SQLite (onestore)");
  sqlite3ExprDelete(pParse->db, pFilename);
  sqlite3ExprDelete(pParse->db, pDbname);
  sqlite3ExprDelete(pParse->db, pKey);
}

SQLITE_PRIVATE void sqlite3Detach(Parse *pParse, Expr *pDbname) {
  sqlite3ErrorMsg(pParse, "DETACH is not in this build of SQLite (onestore)");
  sqlite3ExprDelete(pParse->db, pDbname);
}

/* Whether database iDb of db goes by zName: its schema name ("main",
 * "temp"), or "main" for database 0 whatever it is called. Name lookups
 * outside ATTACH need it (attach.c, which the option leaves out, has it). */
SQLITE_PRIVATE int sqlite3DbIsNamed(sqlite3 *db, int iDb, const char *zName) {
  if (sqlite3StrICmp(db->aDb[iDb].zDbSName, zName) == 0) return 1;
  return iDb == 0 && sqlite3StrICmp("main", zName) == 0;
}

/* VACUUM (and VACUUM INTO) goes with ATTACH: SQLite builds it on it. */
SQLITE_PRIVATE void sqlite3Vacuum(Parse *pParse, Token *pName, Expr *pInto) {
  (void)pName;
  sqlite3ErrorMsg(pParse, "VACUUM is not in this build of SQLite (onestore)");
  sqlite3ExprDelete(pParse->db, pInto);
}
#endif

#ifdef SQLITE_OMIT_WINDOWFUNC
/* Unreachable (see the declarations above); a window's frame would be
 * refused, should SQL ever get here. */
static struct Window *sqlite3WindowAlloc(Parse *pParse, int eType, int eStart, Expr *pStart,
                                         int eEnd, Expr *pEnd, u8 eExclude) {
  (void)eType;
  (void)eStart;
  (void)eEnd;
  (void)eExclude;
  sqlite3ErrorMsg(pParse, "window functions are not in this build of SQLite (onestore)");
  sqlite3ExprDelete(pParse->db, pStart);
  sqlite3ExprDelete(pParse->db, pEnd);
  return 0;
}

static struct Window *sqlite3WindowAssemble(Parse *pParse, Window *pWin, ExprList *pPartition,
                                            ExprList *pOrderBy, Token *pBase) {
  (void)pBase;
  sqlite3ExprListDelete(pParse->db, pPartition);
  sqlite3ExprListDelete(pParse->db, pOrderBy);
  return pWin;
}

static void sqlite3WindowChain(Parse *pParse, Window *pWin, Window *pList) {
  (void)pParse;
  (void)pWin;
  (void)pList;
}

static void sqlite3WindowListDelete(sqlite3 *db, Window *p) {
  (void)db;
  (void)p;
}
#endif
