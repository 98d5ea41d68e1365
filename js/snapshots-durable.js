// The snapshots of a durable store, inside the Durable Object's own SQLite
// (docs/formats.md, "Snapshot layout"). A Durable Object's SQLite has no
// backup API, no VACUUM INTO, no ATTACH and no second database file, so a
// snapshot is a set of copies of the store's tables in the same database:
//
//   _snapshots (id, n, seq, at, label, copies)   one row per snapshot; copies: the
//                                                JSON list [{ copy, table }] below
//   "_snap_<id>_<k>"                             the k-th table of the store (by name)
//                                                at the snapshot's seq: its CREATE
//                                                TABLE text (columns, key, STRICT), no
//                                                index, filled by INSERT INTO … SELECT
//
// A snapshot is taken in one transactionSync, inside a step of the commit
// queue (js/snapshots.js), so its copies and its _snapshots row are all
// there at one head or none is; a removal drops them in one transactionSync.
// The core reads the copies for a restore and for store.at
// (Snapshots::RestoreCopies and CopyCopiesInto, src/snapshot/snapshot.h).
// Only the tables recorded in _tables are copied: not _blobs (blobs are kept
// by hash and outlive any snapshot), not the outbox.

import { ErrorCodes, StoreError } from "./errors.js";

const CATALOGUE = "_snapshots";

// An SQL identifier, quoted (as the core's QuoteIdent does).
const ident = (name) => `"${String(name).replaceAll('"', '""')}"`;

/**
 * The snapshot shelf of a durable store whose Durable Object storage is
 * `storage` (ctx.storage). `take(meta)` copies synchronously (it needs no
 * handle), so snapshotEvery works as on memory and Node.
 *
 * @example
 * const shelf = durableSnapshots(ctx.storage); const known = await shelf.list();
 */
export function durableSnapshots(storage) {
  const sql = storage.sql;
  const copies = new Map();  // id -> its copies as JSON text (the core reads them)

  const exists = () => sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", CATALOGUE).toArray().length > 0;

  function dropCopies(id, text) {
    let list = [];
    try { list = JSON.parse(text); } catch { /* a cut row: its copies are found by name below */ }
    for (const { copy } of Array.isArray(list) ? list : []) {
      if (typeof copy === "string") sql.exec(`DROP TABLE IF EXISTS ${ident(copy)}`);
    }
  }

  return {
    fileOf: () => "",
    /** The snapshot's copies as the core takes them (Snapshots::RestoreCopies). */
    copiesOf: (id) => copies.get(id),
    /**
     * Copies every table of the store into new tables and records the
     * snapshot `{ id, at, label, n }`, in one transaction; returns the seq it
     * holds. Runs inside a step of the commit queue.
     */
    take({ id, at, label, n }) {
      return storage.transactionSync(() => {
        sql.exec(`CREATE TABLE IF NOT EXISTS ${CATALOGUE} (id TEXT PRIMARY KEY, n INTEGER NOT NULL, seq INTEGER NOT NULL, ` +
          "at INTEGER NOT NULL, label TEXT, copies TEXT NOT NULL) STRICT");
        const seq = Number(sql.exec("SELECT value FROM _meta WHERE key = 'head'").toArray()[0]?.value ?? 0);
        const tables = sql.exec("SELECT name, record FROM _tables ORDER BY name").toArray();
        const list = [];
        tables.forEach(({ name, record }, k) => {
          const create = sql.exec("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", name).toArray()[0]?.sql;
          const head = `CREATE TABLE ${ident(name)}`;
          if (typeof create !== "string" || !create.startsWith(head)) {
            throw new StoreError(ErrorCodes.StorageFailed, `store.snapshot: cannot copy table ${JSON.stringify(name)}: its SQL definition is not the store's (${JSON.stringify(create ?? null)})`);
          }
          const copy = `_snap_${id}_${k}`;
          sql.exec(`DROP TABLE IF EXISTS ${ident(copy)}`);
          sql.exec(`CREATE TABLE ${ident(copy)}${create.slice(head.length)}`);
          sql.exec(`INSERT INTO ${ident(copy)} SELECT * FROM ${ident(name)}`);
          list.push({ copy, table: JSON.parse(record) });
        });
        const text = JSON.stringify(list);
        sql.exec(`INSERT OR REPLACE INTO ${CATALOGUE} (id, n, seq, at, label, copies) VALUES (?, ?, ?, ?, ?, ?)`,
          id, n, seq, at, label ?? null, text);
        copies.set(id, text);
        return seq;
      });
    },
    async list() {
      if (!exists()) return [];
      const metas = [];
      const kept = new Set();
      for (const row of sql.exec(`SELECT id, n, seq, at, label, copies FROM ${CATALOGUE}`).toArray()) {
        copies.set(row.id, row.copies);
        for (const { copy } of JSON.parse(row.copies)) kept.add(copy);
        metas.push({ id: row.id, seq: Number(row.seq), at: Number(row.at), label: row.label ?? null, n: Number(row.n) });
      }
      // Copies that no row lists (none should be: a snapshot is taken and
      // removed in one transaction) go.
      const strays = sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '\\_snap\\_%' ESCAPE '\\'").toArray()
        .map((r) => r.name).filter((name) => !kept.has(name));
      if (strays.length > 0) storage.transactionSync(() => { for (const name of strays) sql.exec(`DROP TABLE IF EXISTS ${ident(name)}`); });
      return metas;
    },
    // The row is written with the copies, in take.
    async save() {},
    async remove(id) {
      if (!exists()) return;
      storage.transactionSync(() => {
        const row = sql.exec(`SELECT copies FROM ${CATALOGUE} WHERE id = ?`, id).toArray()[0];
        if (row) dropCopies(id, row.copies);
        sql.exec(`DELETE FROM ${CATALOGUE} WHERE id = ?`, id);
      });
      copies.delete(id);
    },
  };
}
