// What the shipped wasm core carries (issue 13, the download): the bench's
// raw SQLite anchor (RawSqlite, wasm/raw_sqlite.cc) is not in
// dist/onestore-core.wasm but in the bench-only build
// (build/wasm/bench/onestore-bench.*), which is the same core plus it and
// runs SQL on the same SQLite, VFS and Node files as the store.

import assert from "node:assert/strict";
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
