// The store file of workloads 7 and 8, built once per run with the store
// itself: rows in transactions of 100k puts (durability relaxed while
// building), the outbox trimmed after each stage, then, for workload 7,
// 20k one-put commits so that the store holds 20k outbox records.
//
// Also: the DDL the store gives its table, read back from a store file, so
// that the SQL anchors create exactly the same table, index and _outbox.

import { copyFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

import { openStore } from "../../js/index.js";
import { Edits, EditsAltered, OWNER, ROW, TABLE } from "./common.mjs";
import { fill } from "./onestore-column.mjs";

const require = createRequire(import.meta.url);

export async function storeSchema(dir) {
  const path = join(dir, "schema.sqlite");
  const store = await openStore({ backend: "sqlite", path });
  const edits = store.object({ type: OWNER }).table(Edits);
  await edits.get("none");
  await store.close();
  const Database = require("better-sqlite3");
  const db = new Database(path, { readonly: true });
  const sqlOf = (where, ...args) => db.prepare(`SELECT sql FROM sqlite_master WHERE ${where}`).pluck().get(...args);
  const schema = {
    table: sqlOf("type = 'table' AND name = ?", TABLE),
    index: sqlOf("type = 'index' AND tbl_name = ? AND sql IS NOT NULL", TABLE),
    outbox: sqlOf("type = 'table' AND name = '_outbox'"),
  };
  db.close();
  rmSync(path, { force: true });
  for (const [k, v] of Object.entries(schema)) if (!v) throw new Error(`bench: the store's ${k} DDL was not found in its file`);
  return schema;
}

export function storeFixture(dir) {
  const path = join(dir, "fixture.sqlite");
  const fixture = {
    path,
    copy: join(dir, "fixture-copy.sqlite"),
    beforeAlter: join(dir, "fixture-before-alter.sqlite"),
    rows: 0,
    outbox: 0,
    async session(fn) {
      const store = await openStore({ backend: "sqlite", path, durability: "relaxed" });
      const owner = store.object({ type: OWNER });
      const edits = owner.table(Edits);
      await edits.get("none");
      try {
        await fn(store, owner, edits);
      } finally {
        await store.close();
      }
    },
    // Grows the table to `size` rows (rows 0..size-1) and trims the outbox.
    async growTo(size) {
      await fixture.session(async (store, owner, edits) => {
        await fill(owner, edits, fixture.rows, size);
        await store.outbox.trim(store.head);
      });
      fixture.rows = size;
      fixture.outbox = 0;
    },
    // `count` one-put commits (each replaces an existing row): the outbox
    // then holds exactly `count` records.
    async addOutbox(count) {
      await fixture.session(async (store, owner, edits) => {
        await store.outbox.trim(store.head);
        for (let i = 0; i < count; i++) await owner.tx(async (tx) => { await tx.put(edits, ROW((i * 48271) % fixture.rows)); });
      });
      fixture.outbox = count;
    },
    // Workload 14: the table altered (a column added) by the migration
    // commit of its version 2; after this the fixture opens only as that.
    // A copy of the file from before it is kept at `beforeAlter` (removed
    // by dropAlterCopy).
    async alterAdd() {
      copyFileSync(path, fixture.beforeAlter);
      const store = await openStore({ backend: "sqlite", path, durability: "relaxed" });
      try {
        await store.object({ type: OWNER }).table(EditsAltered).get("none");
      } finally {
        await store.close();
      }
    },
    dropAlterCopy() {
      rmSync(fixture.beforeAlter, { force: true });
    },
    makeCopy() {
      copyFileSync(path, fixture.copy);
    },
    dropCopy() {
      rmSync(fixture.copy, { force: true });
      for (const side of ["-journal", "-wal", "-shm"]) rmSync(`${fixture.copy}${side}`, { force: true });
    },
  };
  return fixture;
}
