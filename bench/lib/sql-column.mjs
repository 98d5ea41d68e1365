// The SQL anchor columns: the same work as the store's, written as the SQL a
// careful user would run through a driver (bench/lib/drivers.mjs): each
// commit is BEGIN IMMEDIATE, the row statements, an INSERT of the same JSON
// outbox record into _outbox, COMMIT. The table, its index and _outbox are
// created with the very DDL the store uses (read from a store's file).

import { join } from "node:path";

import { COLUMNS, MIDDLE_ROW, ROW, ROW_SQL, TABLE, figure, getKeys, na, recordedOps, repeat, replicaBatches } from "./common.mjs";

const T = `"${TABLE}"`;
const PUT = `INSERT OR REPLACE INTO ${T} (${COLUMNS.join(", ")}) VALUES (?, ?, ?, ?, ?)`;
const OUT = "INSERT INTO _outbox (seq, record) VALUES (?, ?)";
const SELECT = `SELECT ${COLUMNS.join(", ")} FROM ${T}`;
const FIRST_PAGE = `${SELECT} ORDER BY path, at, id LIMIT ?`;
const NEXT_PAGE = `${SELECT} WHERE (path, at, id) > (?, ?, ?) ORDER BY path, at, id LIMIT ?`;
const GET = `${SELECT} WHERE id = ?`;

const putParams = (r) => [r.id, r.path, r.entry, r.at, JSON.stringify(r.meta)];
const asRow = (a) => ({ id: a[0], path: a[1], entry: a[2], at: a[3], meta: JSON.parse(a[4]) });

/**
 * A SQL anchor column. `open(path)` returns a driver; `mode` is "memory" (a
 * fresh in-memory db each time), "FULL" or "NORMAL" (a file in `dir` with
 * that synchronous and `journal`: "TRUNCATE", a rollback journal, or "WAL",
 * a write-ahead log with SQLite's usual shared-memory index and locking).
 * A WAL column puts a file back in rollback mode when it closes it
 * (journal_mode=DELETE, outside the timed work), as a closed onestore file
 * is, so that the other columns can open the shared fixture files after it.
 */
export function sqlColumn({ id, label, open, mode, dir, schema, settings, journal = "TRUNCATE" }) {
  let files = 0;
  const file = mode !== "memory";
  const wal = file && journal === "WAL";
  const pragmas = !file ? "" : wal
    ? `PRAGMA journal_mode = WAL; PRAGMA synchronous = ${mode};`
    : `PRAGMA journal_mode = TRUNCATE; PRAGMA locking_mode = NORMAL; PRAGMA synchronous = ${mode};`;

  function withPlainClose(db) {
    if (!wal) return db;
    const close = db.close;
    return { ...db, close: () => { db.exec("PRAGMA journal_mode = DELETE"); close(); } };
  }
  async function fresh() {
    const db = await open(file ? join(dir, `${id}-${files++}.sqlite`) : ":memory:");
    if (pragmas) db.exec(pragmas);
    db.exec(`${schema.table}; ${schema.index}; ${schema.outbox};`);
    return withPlainClose(db);
  }
  async function existing(path) {
    const db = await open(path);
    if (pragmas) db.exec(pragmas);
    return withPlainClose(db);
  }
  // One commit: the row statements given, then the record, as the store does.
  function seqOf(db) {
    const rows = db.all("SELECT coalesce(max(seq), 0) FROM _outbox", []);
    return Number(rows[0][0]);
  }
  function commit(db, state, ops, body) {
    db.exec("BEGIN IMMEDIATE");
    const counts = body();
    const seq = ++state.seq;
    if (counts !== undefined) ops = ops.map((op, i) => (counts[i] === undefined ? op : { ...op, count: counts[i] }));
    const record = JSON.stringify({ seq, from: seq - 1, at: Date.now(), owner: "bench", ops });
    db.run(OUT, [seq, record]);
    db.exec("COMMIT");
    return record;
  }
  const putOne = (db, state, row) => commit(db, state, [{ op: "put", table: TABLE, row }], () => { db.run(PUT, putParams(row)); });

  return {
    id, label, kind: "anchor", group: "node", settings: { ...settings, ...(file ? { journal_mode: wal ? "WAL" : "TRUNCATE", synchronous: mode, locking_mode: "NORMAL" } : { database: ":memory:" }) },
    memory: !file,

    async main(p, log) {
      const f = {};
      {
        const db = await fresh();
        const state = { seq: 0 };
        let n = 0;
        const count = file ? p.fileCommits : p.commits;
        const one = await repeat(p.runs, async () => {
          const t0 = performance.now();
          for (let i = 0; i < count; i++) putOne(db, state, ROW(n++));
          return (performance.now() - t0) / count;
        });
        f.commit = figure(one.value, "ms", { per: "commit", runs: one.runs });
        log(`${id}: one-put commit ${one.value.toFixed(3)} ms`);
        const bulk = await repeat(p.runs, async () => {
          const ops = [];
          commit(db, state, ops, () => {
            for (let i = 0; i < p.bulk; i++) {
              const row = ROW(n++);
              db.run(PUT, putParams(row));
              ops.push({ op: "put", table: TABLE, row });
            }
          });
        });
        f.bulk = figure(bulk.value, "ms", { per: `tx of ${p.bulk} puts`, runs: bulk.runs, putsPerSecond: p.bulk / (bulk.value / 1000) });
        log(`${id}: ${p.bulk} puts in one tx ${bulk.value.toFixed(1)} ms`);
        db.close();
      }
      {
        const db = await fresh();
        const state = { seq: 0 };
        db.exec(`INSERT INTO ${T} (${COLUMNS.join(", ")}) ${ROW_SQL(0, p.readRows)}`);
        const dirFrom = "src/dir3/";
        const dirTo = "src/moved3/";
        // The prefix as a range of the (path, at) index, as SQLite's LIKE
        // optimization would: from <= path < from with its last char + 1.
        const upper = (s) => s.slice(0, -1) + String.fromCharCode(s.charCodeAt(s.length - 1) + 1);
        const renameSql = `UPDATE ${T} SET path = ? || substr(path, ?) WHERE path >= ? AND path < ?`;
        let bytes = 0;
        let renamed = 0;
        const renameOnce = (from, to) => commit(db, state, [{ op: "update", table: TABLE, where: { prefix: ["path", from] }, set: { path: { replacePrefix: [from, to] } } }], () => {
          renamed = Number(db.run(renameSql, [to, from.length + 1, from, upper(from)]));
          return [renamed];
        });
        const rename = await repeat(p.runs, async (r) => {
          const [from, to] = r % 2 ? [dirTo, dirFrom] : [dirFrom, dirTo];
          const t0 = performance.now();
          const record = renameOnce(from, to);
          const ms = performance.now() - t0;
          bytes = Buffer.byteLength(record);
          return ms;
        });
        if (p.runs % 2) renameOnce(dirTo, dirFrom);
        f.rename = figure(rename.value, "ms", { per: `rename of ${p.readRows / 10} rows`, runs: rename.runs, outboxBytes: bytes });
        log(`${id}: rename ${rename.value.toFixed(2)} ms`);

        const pages = await repeat(p.runs, async () => {
          let last = null;
          let rows = 0;
          const t0 = performance.now();
          for (let i = 0; i < p.pages; i++) {
            const page = (last ? db.all(NEXT_PAGE, [last.path, last.at, last.id, p.pageSize]) : db.all(FIRST_PAGE, [p.pageSize])).map(asRow);
            rows += page.length;
            last = page[page.length - 1];
          }
          const ms = performance.now() - t0;
          if (rows !== p.pages * p.pageSize) throw new Error(`${id}: ${rows} rows paged, expected ${p.pages * p.pageSize}`);
          return ms / p.pages;
        });
        f.page = figure(pages.value, "ms", { per: `page of ${p.pageSize} rows`, runs: pages.runs });
        log(`${id}: page(${p.pageSize}) ${pages.value.toFixed(3)} ms`);

        const keys = getKeys(p.gets, p.readRows);
        const gets = await repeat(p.runs, async () => {
          const t0 = performance.now();
          for (const k of keys) {
            const rows = db.all(GET, [k]);
            if (rows.length !== 1) throw new Error(`${id}: ${k} not found`);
            asRow(rows[0]);
          }
          return (performance.now() - t0) / keys.length;
        });
        f.get = figure(gets.value, "ms", { per: "get", runs: gets.runs });
        log(`${id}: get ${(gets.value * 1000).toFixed(1)} µs`);
        db.close();
      }
      {
        const batches = recordedOps(file ? p.fileReplayCommits : p.replayCommits, p.replayOpsPerCommit);
        const changes = batches.reduce((s, b) => s + b.length, 0);
        const UPDATE_AT = `UPDATE ${T} SET at = ? WHERE id = ?`;
        const DELETE = `DELETE FROM ${T} WHERE id = ?`;
        const replay = await repeat(p.runs, async () => {
          const db = await fresh();
          const state = { seq: 0 };
          const t0 = performance.now();
          for (const ops of batches) {
            commit(db, state, ops, () => {
              for (const op of ops) {
                if (op.op === "put") db.run(PUT, putParams(op.row));
                else if (op.op === "update") {
                  if (Number(db.run(UPDATE_AT, [op.set.at.value, op.key[0]])) !== 1) throw new Error(`${id}: update of a missing row`);
                } else db.run(DELETE, [op.key[0]]);
              }
            });
          }
          const ms = performance.now() - t0;
          db.close();
          return ms / changes;
        });
        f.replay = figure(replay.value, "ms", { per: "row change", runs: replay.runs, rowChangesPerSecond: 1000 / replay.value, commits: batches.length, changes });
        log(`${id}: replay ${(1000 / replay.value).toFixed(0)} row changes/s`);
      }
      {
        // Workload 10: the same batches applied as SQL, one transaction a
        // batch: each op's statement (a bulk update's row count checked
        // against its recorded count, as a replica does), each record
        // inserted into _outbox as it came.
        const { batches, changes } = await replicaBatches(p);
        const UPDATE_AT = `UPDATE ${T} SET at = ? WHERE id = ?`;
        const UPDATE_PREFIX = `UPDATE ${T} SET at = ? WHERE path >= ? AND path < ?`;
        const DELETE = `DELETE FROM ${T} WHERE id = ?`;
        const upper = (s) => s.slice(0, -1) + String.fromCharCode(s.charCodeAt(s.length - 1) + 1);
        const apply = await repeat(p.runs, async () => {
          const db = await fresh();
          const t0 = performance.now();
          for (const b of batches) {
            db.exec("BEGIN IMMEDIATE");
            for (const r of b.commits) {
              for (const op of r.ops) {
                if (op.op === "table") continue;  // created with the store's DDL in fresh()
                if (op.op === "put") db.run(PUT, putParams(op.row));
                else if (op.op === "delete") db.run(DELETE, [op.key[0]]);
                else if (op.key !== undefined) {
                  if (Number(db.run(UPDATE_AT, [op.set.at.value, op.key[0]])) !== 1) throw new Error(`${id}: update of a missing row`);
                } else if (op.op === "update") {
                  const p0 = op.where.prefix[1];
                  if (Number(db.run(UPDATE_PREFIX, [op.set.at.value, p0, upper(p0)])) !== Number(op.count)) throw new Error(`${id}: a bulk update's count differs`);
                }
              }
              db.run(OUT, [r.seq, JSON.stringify(r)]);
            }
            db.exec("COMMIT");
          }
          const ms = performance.now() - t0;
          db.close();
          return ms / changes;
        });
        f.replica = figure(apply.value, "ms", { per: "row change", runs: apply.runs, rowChangesPerSecond: 1000 / apply.value, batches: batches.length, changes });
        log(`${id}: replica apply ${(1000 / apply.value).toFixed(0)} row changes/s`);
      }
      f.docLoad = na("documents (a base plus JSON Patch deltas) are onestore's own: no SQL anchor for workload 13");
      return f;
    },

    // Workload 8 in memory: one table grown through the sizes.
    async commitAtAll(p, log) {
      const out = {};
      const db = await fresh();
      const state = { seq: 0 };
      let have = 0;
      for (const size of p.commitAt) {
        if (size > have) db.exec(`INSERT INTO ${T} (${COLUMNS.join(", ")}) ${ROW_SQL(have, size)}`);
        have = size;
        out[size] = measureCommits(db, state, size, p);
        log(`${id}: commit at ${size} rows ${out[size].value.toFixed(3)} ms`);
      }
      db.close();
      return out;
    },

    // Workload 8 on a file: a copy of the store's fixture at `size` rows.
    async commitAt(size, fixture, p, log) {
      const db = await existing(fixture.copy);
      const state = { seq: seqOf(db) };
      const f = measureCommits(db, state, size, p);
      db.close();
      log(`${id}: commit at ${size} rows ${f.value.toFixed(3)} ms`);
      return f;
    },

    // Workload 15: snapshots are onestore's own.
    async snapshot() {
      return na("a snapshot is store.snapshot(), onestore's own: no SQL anchor does the same work");
    },

    // Workload 7: open the store's fixture file (1M rows, 20k outbox records)
    // and read one row.
    async open(fixture, p, log) {
      if (!file) return na("an in-memory database has nothing to open");
      const keys = getKeys(p.openRuns + 1, fixture.rows);
      const runs = [];
      for (let run = 0; run <= p.openRuns; run++) {
        const t0 = performance.now();
        const db = await existing(fixture.path);
        if (db.all(GET, [keys[run]]).length !== 1) throw new Error(`${id}: ${keys[run]} not in the fixture`);
        const ms = performance.now() - t0;
        db.close();
        if (run > 0) runs.push(ms);  // the first also reads the file into the page cache
      }
      const value = [...runs].sort((a, b) => a - b)[Math.floor(runs.length / 2)];
      log(`${id}: open ${value.toFixed(1)} ms`);
      return figure(value, "ms", { per: "open + first get", runs });
    },
  };

  function measureCommits(db, state, size, p) {
    let i = 0;
    const salt = id.length + 100;
    const count = file ? p.commitAtCommits : p.commitAtMemoryCommits;
    for (let k = 0; k < count; k++) putOne(db, state, MIDDLE_ROW(i++, size, salt));  // warm-up: a run's worth
    const r = [];
    for (let run = 0; run < p.runs; run++) {
      const t0 = performance.now();
      for (let k = 0; k < count; k++) putOne(db, state, MIDDLE_ROW(i++, size, salt));
      r.push((performance.now() - t0) / count);
    }
    const sorted = [...r].sort((a, b) => a - b);
    const value = sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
    return figure(value, "ms", { per: "commit", runs: r, rows: size });
  }
}

export { na };
