// What the shipped wasm core carries (issue 13, the download): the bench's
// raw SQLite anchor (RawSqlite, wasm/raw_sqlite.cc) is not in
// dist/onestore-core.wasm but in the bench-only build
// (build/wasm/bench/onestore-bench.*), which is the same core plus it and
// runs SQL on the same SQLite, VFS and Node files as the store; and the glue
// has no JS strftime, SQLite's CURRENT_* formatting through the core's own
// (wasm/strftime.cc).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { loadBenchCore } from "../../bench/lib/bench-core.mjs";
import { loadNodeCore } from "../../js/loader-node.js";
import { openStore } from "../../js/index.js";
import { tempDir } from "./helpers.js";

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
    assert.deepEqual(JSON.parse(db.all("PRAGMA integrity_check", "[]")), [["ok"]]);
    const tables = JSON.parse(db.all("SELECT count(*) FROM sqlite_master WHERE type = 'table'", "[]"));
    assert.ok(tables[0][0] > 0, `a store file has tables, got ${JSON.stringify(tables)}`);
  } finally {
    db.close();
    db.delete();
  }
});

test("the shipped glue has no strftime of its own, and SQLite's CURRENT_TIMESTAMP, CURRENT_DATE and CURRENT_TIME format through the core's", async () => {
  const glue = readFileSync(new URL("../../dist/onestore-core.mjs", import.meta.url), "utf8");
  assert.ok(!glue.includes("strftime"), "dist/onestore-core.mjs still carries Emscripten's JS strftime");
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
