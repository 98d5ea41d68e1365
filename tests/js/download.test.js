// What the shipped wasm core carries (issue 13, the download): the bench's
// raw SQLite anchor (RawSqlite, wasm/raw_sqlite.cc) is not in
// dist/onestore-core.wasm but in the bench-only build
// (build/wasm/bench/onestore-bench.*), which is the same core plus it and
// runs SQL on the same SQLite, VFS and Node files as the store; and the glue
// has no JS strftime, gmtime or tzset, SQLite's CURRENT_* formatting through
// the core's own (wasm/strftime.cc); and SQLite is built without what no
// store SQL uses: views, triggers, ANALYZE, REINDEX, ATTACH and VACUUM,
// which it refuses with an error, and window functions, whose syntax is an
// error; UNIONs, multi-row VALUES and aggregates still answer in full
// (src/backends/sqlite/sqlite3_unit.c, cmake/sqlite_options.cmake,
// cmake/sqlite_source.cmake).

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { loadBenchCore } from "../../bench/lib/bench-core.mjs";
import { loadNodeCore } from "../../js/loader-node.js";
import { defineTable, openStore, str } from "../../js/index.js";
import { rejectsWith, tempDir } from "./helpers.js";

test("the shipped core has the store's Core class and not the bench's RawSqlite", async () => {
  const mod = await loadNodeCore();
  assert.equal(typeof mod.Core, "function");
  assert.equal(mod.RawSqlite, undefined);
});

test("the bench build's RawSqlite reads a store file the shipped core wrote, through the same VFS", async () => {
  const dir = tempDir();
  const path = join(dir, "s.sqlite");
  const store = await openStore({ backend: "sqlite", path });
  await store.close();
  const bench = await loadBenchCore();
  assert.equal(typeof bench.Core, "function");
  const db = new bench.RawSqlite();
  try {
    assert.equal(db.open(path), "");
    // The store's file is in WAL format; the VFS has no shared memory.
    assert.equal(db.exec("PRAGMA locking_mode=EXCLUSIVE"), "");
    // No integrity_check in this SQLite (SQLITE_OMIT_INTEGRITY_CHECK): the
    // pragma answers no rows. The real sqlite3 command checks the file.
    assert.deepEqual(JSON.parse(db.all("PRAGMA integrity_check", "[]")), []);
    assert.equal(execFileSync("/usr/bin/sqlite3", [path, "PRAGMA integrity_check"], { encoding: "utf8" }).trim(), "ok");
    const tables = JSON.parse(db.all("SELECT count(*) FROM sqlite_master WHERE type = 'table'", "[]"));
    assert.ok(tables[0][0] > 0, `a store file has tables, got ${JSON.stringify(tables)}`);
  } finally {
    db.close();
    db.delete();
  }
});

test("the shipped glue has no strftime, gmtime or tzset of its own, and SQLite's CURRENT_TIMESTAMP, CURRENT_DATE and CURRENT_TIME format through the core's", async () => {
  const glue = readFileSync(new URL("../../dist/onestore-core.mjs", import.meta.url), "utf8");
  assert.ok(!glue.includes("strftime"), "dist/onestore-core.mjs still carries Emscripten's JS strftime");
  assert.ok(!/gmtime|tzset/.test(glue), "dist/onestore-core.mjs still carries Emscripten's JS gmtime and tzset");
  const bench = await loadBenchCore();
  const db = new bench.RawSqlite();
  try {
    assert.equal(db.open(":memory:"), "");
    const before = Date.now();
    const [[stamp, date, time, both]] = JSON.parse(db.all("SELECT CURRENT_TIMESTAMP, CURRENT_DATE, CURRENT_TIME, CURRENT_DATE || ' ' || CURRENT_TIME", "[]"));
    const after = Date.now();
    assert.match(stamp, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    assert.match(date, /^\d{4}-\d{2}-\d{2}$/);
    assert.match(time, /^\d{2}:\d{2}:\d{2}$/);
    assert.equal(both, stamp);
    // The UTC time of the statement, to the second.
    const at = Date.parse(`${stamp.replace(" ", "T")}Z`);
    assert.ok(at >= Math.floor(before / 1000) * 1000 && at <= after, `CURRENT_TIMESTAMP ${stamp} is not the time of the call`);
  } finally {
    db.close();
    db.delete();
  }
});

test("the core's SQLite refuses views, triggers, ANALYZE, REINDEX, ATTACH, DETACH and VACUUM with an error naming the statement and window syntax as a syntax error, and still answers UNIONs, multi-row VALUES and aggregates in full", async () => {
  const bench = await loadBenchCore();
  const db = new bench.RawSqlite();
  try {
    assert.equal(db.open(":memory:"), "");
    assert.equal(db.exec("CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT)"), "");
    const refused = {
      "CREATE VIEW v AS SELECT a FROM t": "CREATE VIEW",
      "CREATE TRIGGER tr AFTER INSERT ON t BEGIN UPDATE t SET b = 'x'; END": "CREATE TRIGGER",
      "CREATE TEMP TRIGGER IF NOT EXISTS tr BEFORE DELETE ON t WHEN 1 BEGIN SELECT 1; END": "CREATE TRIGGER",
      "DROP TRIGGER IF EXISTS tr": "DROP TRIGGER",
      "ANALYZE": "ANALYZE",
      "REINDEX": "REINDEX",
      "ATTACH ':memory:' AS other": "ATTACH",
      "DETACH other": "DETACH",
      "VACUUM": "VACUUM",
    };
    for (const [sql, what] of Object.entries(refused)) {
      assert.equal(db.exec(sql), `!storage_failed ${what} is not in this build of SQLite (onestore)`, sql);
    }
    // Nothing was created, and the connection goes on.
    assert.deepEqual(JSON.parse(db.all("SELECT type, name FROM sqlite_master ORDER BY name", "[]")), [["table", "t"]]);
    assert.equal(db.exec("INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, CAST(3 AS TEXT))"), "");
    assert.deepEqual(JSON.parse(db.all("SELECT a FROM t WHERE a IN (SELECT 1 UNION ALL SELECT 3) ORDER BY a", "[]")), [[1], [3]]);
    assert.deepEqual(JSON.parse(db.all("SELECT 1 UNION SELECT 2 ORDER BY 1", "[]")), [[1], [2]]);
    assert.deepEqual(JSON.parse(db.all("VALUES (CAST(1 AS TEXT)), (2)", "[]")), [["1"], [2]]);
    // Window functions (SQLITE_OMIT_WINDOWFUNC): OVER, FILTER and WINDOW
    // are identifiers in this build (cmake/sqlite_source.cmake), so window
    // syntax fails to prepare, rather than running as a plain aggregate.
    const windowed = [
      "SELECT a, sum(a) OVER () FROM t",
      "SELECT a, count(*) OVER (ORDER BY a) FROM t",
      "SELECT a, max(a) OVER (PARTITION BY b ORDER BY a ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t",
      "SELECT a, sum(a) OVER w FROM t WINDOW w AS (ORDER BY a)",
      "SELECT count(*) OVER w FROM t",
      "SELECT count(*) FILTER (WHERE a > 1) FROM t",
      "SELECT a FROM t WINDOW w AS (ORDER BY a)",
    ];
    for (const sql of windowed) {
      assert.match(db.all(sql, "[]"), /^!storage_failed near "[^"]+": syntax error$/, sql);
    }
    assert.match(db.all("SELECT row_number() FROM t", "[]"), /^!storage_failed no such function: row_number$/);
    // The same functions as aggregates, and the three words as names.
    assert.deepEqual(JSON.parse(db.all("SELECT sum(a), count(*), max(a), group_concat(b, '') FROM t", "[]")), [[6, 3, 3, "ab3"]]);
    assert.equal(db.exec("CREATE TABLE w (window INTEGER, over TEXT, filter TEXT)"), "");
    assert.equal(db.exec("INSERT INTO w VALUES (1, 'o', 'f')"), "");
    assert.deepEqual(JSON.parse(db.all("SELECT window, over, filter AS window FROM w WHERE window = 1 ORDER BY over", "[]")), [[1, "o", "f"]]);
  } finally {
    db.close();
    db.delete();
  }
});

test("another application's database with a view is still refused naming its tables, and one with a trigger is refused for the trigger, not opened with it silently off", async () => {
  const dir = tempDir();
  const withView = join(dir, "view.db");
  execFileSync("/usr/bin/sqlite3", [withView, "create table notes(id integer primary key, body text); create view v as select body from notes;"]);
  await rejectsWith(openStore({ backend: "sqlite", path: withView }), "invalid/args", ['the tables and views "notes", "v"', "adoptForeign"]);
  const withTrigger = join(dir, "trigger.db");
  execFileSync("/usr/bin/sqlite3", [withTrigger, "create table notes(id integer primary key, body text); create table log(n); create trigger t after insert on notes begin insert into log values (new.id); end;"]);
  await rejectsWith(openStore({ backend: "sqlite", path: withTrigger, adoptForeign: true }), "storage_failed", [`opening ${withTrigger}:`, "CREATE TRIGGER is not in this build of SQLite"]);
  assert.equal(execFileSync("/usr/bin/sqlite3", [withTrigger, "select count(*) from sqlite_master where type = 'trigger'"], { encoding: "utf8" }).trim(), "1");
});

test("another application's database whose schema names columns window, over and filter unquoted opens with adoptForeign, and its rows stay readable by sqlite3", async () => {
  const dir = tempDir();
  const path = join(dir, "words.db");
  execFileSync("/usr/bin/sqlite3", [path, "create table views(id integer primary key, window text, over int, filter text); create index by_over on views(over, filter) where window is not null; insert into views values (1, 'w', 2, 'f');"]);
  const store = await openStore({ backend: "sqlite", path, adoptForeign: true });
  const Notes = defineTable("notes", { version: 1, columns: { id: str(), body: str() }, key: ["id"] });
  const notes = store.object({ host: "session", type: "app" }).table(Notes);
  await store.object({ host: "session", type: "app" }).tx(async (tx) => tx.put(notes, { id: "n1", body: "kept" }));
  assert.equal((await notes.get("n1")).body, "kept");
  await store.close();
  assert.equal(execFileSync("/usr/bin/sqlite3", [path, "select window || over || filter from views where over = 2"], { encoding: "utf8" }).trim(), "w2f");
  assert.equal(execFileSync("/usr/bin/sqlite3", [path, "PRAGMA integrity_check"], { encoding: "utf8" }).trim(), "ok");
});

// Issue 13's budget, measured as the bench measures it (bench/lib/common.mjs):
// the .wasm gzipped plus every export of the browser root bundled and
// minified by esbuild, gzipped. A size, not a time: it is the same on every
// machine for one build.
test("the download, .wasm plus the bundled JS gzipped, stays within 500 KB", async () => {
  const { bundledSize, sizeOf } = await import("../../bench/lib/common.mjs");
  const root = new URL("../../", import.meta.url);
  const wasm = sizeOf([new URL("dist/onestore-core.wasm", root)]);
  const js = await bundledSize(root);
  const total = wasm.gzip + js.gzip;
  assert.ok(js.gzip > 20_000 && wasm.gzip > 200_000, `measured something: .wasm ${wasm.gzip}, JS ${js.gzip}`);
  assert.ok(total <= 500_000, `download ${total} bytes gzipped (.wasm ${wasm.gzip} + JS ${js.gzip}) is over the 500,000-byte budget`);
});
