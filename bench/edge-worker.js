// The Worker of bench/edge-figures.mjs: Durable Objects (class Bench, SQLite)
// that run the figures' work on a durable store, or as raw sql.exec calls
// (impl=raw: no store), and time it inside workerd (performance.now(), whole
// batches: workerd's clock may be coarse). One request runs one phase on one
// object (a fresh object per phase and run):
//   POST /run?object=NAME&phase=main|read|replay|fixture&impl=store|raw
//   body: { W, batches? } (W: the sizes, bench/lib/common.mjs plan() plus the
//   workerd ones; batches: the recorded ops of the replay) -> JSON figures.
// Rows, keys and ops are those of every column (bench/lib/work.mjs).

import * as api from "../js/workerd.js";
import { OWNER, TABLE, keyOf, ROW, ROW_SQL, MIDDLE_ROW, getKeys, editsTable } from "./lib/work.mjs";

const { openStore, prefix, query, replacePrefix } = api;
const Edits = editsTable(api);
// A commit's outbox record is one SQLite value, at most 2 MB in a Durable
// Object: fills go in transactions of 10k puts (about 1.4 MB).
const CHUNK = 10000;
const DIR_FROM = "src/dir3/";
const DIR_TO = "src/moved3/";
const upper = (s) => s.slice(0, -1) + String.fromCharCode(s.charCodeAt(s.length - 1) + 1);
const mean = (t0, count) => (performance.now() - t0) / count;

export class Bench {
  constructor(ctx) {
    this.ctx = ctx;
  }

  async fetch(request) {
    const p = new URL(request.url).searchParams;
    const body = await request.json();
    const impl = p.get("impl") === "raw" ? raw(this.ctx) : await store(this.ctx);
    const out = await impl[p.get("phase")](body.W, body.batches);
    if (impl.close) await impl.close();
    return Response.json(out);
  }
}

// ---- the onestore durable backend ----

async function store(ctx) {
  let s;
  let owner;
  let edits;
  const open = async () => {
    s = await openStore({ backend: "durable", storage: ctx.storage });
    owner = s.object({ type: OWNER });
    edits = owner.table(Edits);
    await edits.get("none");  // the table's declaration has committed
  };
  await open();
  const fill = async (from, to) => {
    for (let at = from; at < to; at += CHUNK) {
      const end = Math.min(to, at + CHUNK);
      await owner.tx(async (tx) => { for (let i = at; i < end; i++) await tx.put(edits, ROW(i)); });
    }
  };
  const renameOnce = (from, to) => owner.tx(async (tx) => { await tx.updateWhere(edits, (e) => prefix(e.path, from), { path: replacePrefix(from, to) }); });
  return {
    close: () => s.close(),
    async main(W) {
      const out = {};
      let n = 0;
      let t0 = performance.now();
      for (let i = 0; i < W.commitsBatch; i++) await owner.tx(async (tx) => { await tx.put(edits, ROW(n++)); });
      out.commit = mean(t0, W.commitsBatch);
      t0 = performance.now();
      for (let r = 0; r < W.bulkRuns; r++) await owner.tx(async (tx) => { for (let i = 0; i < W.edgeBulk; i++) await tx.put(edits, ROW(n++)); });
      out.bulk = mean(t0, W.bulkRuns);
      return out;
    },
    async read(W) {
      const out = {};
      await fill(0, W.readRows);
      let t0 = performance.now();
      for (let r = 0; r < W.renames; r++) await (r % 2 ? renameOnce(DIR_TO, DIR_FROM) : renameOnce(DIR_FROM, DIR_TO));
      out.rename = mean(t0, W.renames);
      const { commits } = await s.outbox.read(s.head - 1, 1);
      out.renameRows = commits[0].ops[0].count;
      out.outboxBytes = new TextEncoder().encode(JSON.stringify(commits[0])).length;
      if (W.renames % 2) await renameOnce(DIR_TO, DIR_FROM);
      const q = query(Edits).orderBy((e) => e.path).orderBy((e) => e.at);
      let rows = 0;
      t0 = performance.now();
      for (let r = 0; r < W.pageRuns; r++) {
        let after;
        for (let i = 0; i < W.pages; i++) {
          const page = await edits.page(q, W.pageSize, undefined, after ? { after } : undefined);
          rows += page.rows.length;
          after = page.next;
        }
      }
      out.page = mean(t0, W.pageRuns * W.pages);
      if (rows !== W.pageRuns * W.pages * W.pageSize) throw new Error(`${rows} rows paged, expected ${W.pageRuns * W.pages * W.pageSize}`);
      const keys = getKeys(W.gets, W.readRows);
      t0 = performance.now();
      for (const k of keys) if ((await edits.get(k)) === undefined) throw new Error(`${k} not found`);
      out.get = mean(t0, keys.length);
      return out;
    },
    async replay(W, batches) {
      const changes = batches.reduce((a, b) => a + b.length, 0);
      const t0 = performance.now();
      for (const ops of batches) await s.commit(ops);
      return { replay: mean(t0, changes), commits: batches.length, changes };
    },
    // Workload 8 at each size (the table grown stage by stage, the outbox
    // trimmed after each), then workload 7 on the largest: `openOutbox`
    // one-put commits, close, and open again (open + first get).
    async fixture(W) {
      const out = { commitAt: {}, skipped: {} };
      let have = 0;
      let rate = 0;  // ms per filled row, measured
      for (const size of W.stages) {
        if (size > have && rate > 0 && rate * (size - have) > W.fillBudgetMs) {
          out.skipped[size] = Math.round(rate * (size - have));
          continue;
        }
        const t0 = performance.now();
        await fill(have, size);
        if (size - have >= 1000) rate = (performance.now() - t0) / (size - have);
        await s.outbox.trim(s.head);
        have = size;
        if (!W.commitAt.includes(size)) continue;
        let i = 0;
        await owner.tx(async (tx) => { await tx.put(edits, MIDDLE_ROW(i++, size, 1)); });  // warm-up
        const count = W.commitAtBatch;
        const t1 = performance.now();
        for (let k = 0; k < count; k++) await owner.tx(async (tx) => { await tx.put(edits, MIDDLE_ROW(i++, size, 1)); });
        out.commitAt[size] = mean(t1, count);
      }
      await s.outbox.trim(s.head);
      for (let i = 0; i < W.openOutbox; i++) await owner.tx(async (tx) => { await tx.put(edits, ROW((i * 48271) % have)); });
      out.openRows = await edits.count();
      out.openOutbox = (await s.outbox.read(0, W.openOutbox + 10)).commits.length;
      await s.close();
      // One open to warm up, then a batch of `openBatch` opens, each
      // open + first get + close: one open is shorter than a tick of
      // workerd's clock, so the figure is the batch mean (close included).
      const keys = getKeys(W.openBatch + 1, have);
      const openOnce = async (key) => {
        await open();
        if ((await edits.get(key)) === undefined) throw new Error(`${key} not in the fixture`);
        await s.close();
      };
      await openOnce(keys[0]);
      const runs = [];
      for (let r = 0; r < W.openRuns; r++) {
        const t0 = performance.now();
        for (let k = 0; k < W.openBatch; k++) await openOnce(keys[1 + ((r * W.openBatch + k) % W.openBatch)]);
        runs.push(mean(t0, W.openBatch));
      }
      await open();
      out.openRuns = runs;
      out.open = [...runs].sort((a, b) => a - b)[Math.floor(runs.length / 2)];
      return out;
    },
  };
}

// ---- the anchor: the same work as raw sql.exec calls, no store ----
// Each commit is a transactionSync with the row statements and an INSERT of
// the same JSON outbox record, as bench/lib/sql-column.mjs does.

function raw(ctx) {
  const sql = ctx.storage.sql;
  sql.exec('CREATE TABLE IF NOT EXISTS raw_edits (id TEXT PRIMARY KEY, path TEXT NOT NULL, entry INTEGER NOT NULL, at INTEGER NOT NULL, meta TEXT NOT NULL) STRICT, WITHOUT ROWID');
  sql.exec('CREATE INDEX IF NOT EXISTS raw_by_path ON raw_edits (path, at)');
  sql.exec('CREATE TABLE IF NOT EXISTS raw_outbox (seq INTEGER PRIMARY KEY, record TEXT NOT NULL) STRICT');
  const COLS = "id, path, entry, at, meta";
  const SELECT = `SELECT ${COLS} FROM raw_edits`;
  const asRow = (a) => ({ id: a.id, path: a.path, entry: a.entry, at: a.at, meta: JSON.parse(a.meta) });
  let seq = 0;
  const put = (r) => sql.exec(`INSERT OR REPLACE INTO raw_edits (${COLS}) VALUES (?, ?, ?, ?, ?)`, r.id, r.path, r.entry, r.at, JSON.stringify(r.meta));
  const commit = (ops, body) => ctx.storage.transactionSync(() => {
    const counts = body();
    const s = ++seq;
    if (counts !== undefined) ops = ops.map((op, i) => (counts[i] === undefined ? op : { ...op, count: counts[i] }));
    const record = JSON.stringify({ seq: s, from: s - 1, at: Date.now(), owner: OWNER, ops });
    sql.exec("INSERT INTO raw_outbox (seq, record) VALUES (?, ?)", s, record);
    return record;
  });
  const putOne = (row) => commit([{ op: "put", table: TABLE, row }], () => { put(row); });
  const grow = (from, to) => { if (to > from) sql.exec(`INSERT INTO raw_edits (${COLS}) ${ROW_SQL(from, to)}`); };
  return {
    main(W) {
      const out = {};
      let n = 0;
      let t0 = performance.now();
      for (let i = 0; i < W.commitsBatch; i++) putOne(ROW(n++));
      out.commit = mean(t0, W.commitsBatch);
      t0 = performance.now();
      for (let r = 0; r < W.bulkRuns; r++) {
        const ops = [];
        commit(ops, () => { for (let i = 0; i < W.edgeBulk; i++) { const row = ROW(n++); put(row); ops.push({ op: "put", table: TABLE, row }); } });
      }
      out.bulk = mean(t0, W.bulkRuns);
      return out;
    },
    read(W) {
      const out = {};
      grow(0, W.readRows);
      const renameSql = "UPDATE raw_edits SET path = ? || substr(path, ?) WHERE path >= ? AND path < ?";
      let record;
      const renameOnce = (from, to) => {
        record = commit([{ op: "update", table: TABLE, where: { prefix: ["path", from] }, set: { path: { replacePrefix: [from, to] } } }], () => {
          const c = sql.exec(renameSql, to, from.length + 1, from, upper(from));
          c.toArray();
          out.renameRows = sql.exec("SELECT changes() AS n").one().n;
          return [out.renameRows];
        });
      };
      let t0 = performance.now();
      for (let r = 0; r < W.renames; r++) (r % 2 ? renameOnce(DIR_TO, DIR_FROM) : renameOnce(DIR_FROM, DIR_TO));
      out.rename = mean(t0, W.renames);
      out.outboxBytes = new TextEncoder().encode(record).length;
      if (W.renames % 2) renameOnce(DIR_TO, DIR_FROM);
      let rows = 0;
      t0 = performance.now();
      for (let r = 0; r < W.pageRuns; r++) {
        let last = null;
        for (let i = 0; i < W.pages; i++) {
          const page = (last
            ? sql.exec(`${SELECT} WHERE (path, at, id) > (?, ?, ?) ORDER BY path, at, id LIMIT ?`, last.path, last.at, last.id, W.pageSize)
            : sql.exec(`${SELECT} ORDER BY path, at, id LIMIT ?`, W.pageSize)).toArray().map(asRow);
          rows += page.length;
          last = page[page.length - 1];
        }
      }
      out.page = mean(t0, W.pageRuns * W.pages);
      if (rows !== W.pageRuns * W.pages * W.pageSize) throw new Error(`raw: ${rows} rows paged, expected ${W.pageRuns * W.pages * W.pageSize}`);
      const keys = getKeys(W.gets, W.readRows);
      t0 = performance.now();
      for (const k of keys) {
        const rs = sql.exec(`${SELECT} WHERE id = ?`, k).toArray();
        if (rs.length !== 1) throw new Error(`raw: ${k} not found`);
        asRow(rs[0]);
      }
      out.get = mean(t0, keys.length);
      return out;
    },
    replay(W, batches) {
      const changes = batches.reduce((a, b) => a + b.length, 0);
      const t0 = performance.now();
      for (const ops of batches) {
        commit(ops, () => {
          for (const op of ops) {
            if (op.op === "put") put(op.row);
            else if (op.op === "update") {
              const c = sql.exec("UPDATE raw_edits SET at = ? WHERE id = ?", op.set.at.value, op.key[0]);
              c.toArray();
              if (c.rowsWritten < 1) throw new Error("raw: update of a missing row");
            } else sql.exec("DELETE FROM raw_edits WHERE id = ?", op.key[0]).toArray();
          }
        });
      }
      return { replay: mean(t0, changes), commits: batches.length, changes };
    },
    fixture(W) {
      const out = { commitAt: {} };
      let have = 0;
      for (const size of W.commitAt) {
        grow(have, size);
        have = size;
        let i = 0;
        putOne(MIDDLE_ROW(i++, size, 101));  // warm-up
        const count = W.commitAtBatch;
        const t0 = performance.now();
        for (let k = 0; k < count; k++) putOne(MIDDLE_ROW(i++, size, 101));
        out.commitAt[size] = mean(t0, count);
      }
      return out;
    },
  };
}

export default {
  fetch(request, env) {
    return env.BENCH.get(env.BENCH.idFromName(new URL(request.url).searchParams.get("object") ?? "bench")).fetch(request);
  },
};
