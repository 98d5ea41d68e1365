// The OPFS figures (bench/opfs-figures.mjs drives this through opfs.html):
// onestore's opfs backend next to the official @sqlite.org/sqlite-wasm on
// its opfs-sahpool VFS doing the same SQL, in one dedicated Worker of one
// Chromium run. Posts { ok, rows: [...], env } or { ok: false, error }.
//
// The workloads and sizes are those of the Node columns (bench/lib/common.mjs
// plan(quick), ROW, recordedOps; bench/lib/onestore-column.mjs and
// sql-column.mjs): commit, bulk, rename, page, get, replay, commitAt, open.
// The message "go" or { quick } starts it.
//
// Workloads 1 and 2 run interleaved across the rows (`interleaved`), the
// others row by row. Each figure is a mean over a batch (performance.now()
// is coarse outside a cross-origin-isolated page), the median of `runs`
// batches.
import { deleteStore, openStore, prefix, query, replacePrefix } from "../../js/browser.js";
import sqlite3InitModule from "../../node_modules/@sqlite.org/sqlite-wasm/dist/index.mjs";

// The work of every column, shared with the Node and workerd benches.
import * as work from "../lib/work.mjs";
import * as api from "../../js/browser.js";

const { OWNER, TABLE, COLUMNS, DIRS, keyOf, ROW, ROW_SQL, MIDDLE_ROW, getKeys, recordedOps, median, figure, na } = work;
const Edits = work.editsTable(api);

// The Node plan, with the file columns' counts (OPFS is a file) and 100
// one-row commits per batch in a full run: a mean over more commits than
// Node's 60, because performance.now() is coarse here.
function plan(quick) {
  const p = work.plan(quick);
  return { ...p, commits: quick ? p.fileCommits : 100, replayCommits: p.fileReplayCommits };
}

// Runs fn(run) `runs` times; each returns its figure. { value, runs }.
async function repeat(runs, fn) {
  const out = [];
  for (let r = 0; r < runs; r++) out.push(await fn(r));
  return { value: median(out), runs: out };
}
const bytesOf = (s) => new TextEncoder().encode(s).length;

const DIR_FROM = "src/dir3/";
const DIR_TO = "src/moved3/";
const OPEN_BATCH = 5;      // opens (each timed to its first get, not its close) per batch
const CHUNK = 100000;      // puts per transaction while building a table
const BUDGET_MS = 300000;  // past this, a full run skips the 1M-row stage
let started = 0;
let log = () => {};

// ---- onestore ----

// Opens the OPFS store `name`, its owner and table, with the table's
// declaration committed.
async function openOnestore(name, durability) {
  const store = await openStore({ backend: "opfs", name, durability });
  const owner = store.object({ type: OWNER });
  const edits = owner.table(Edits);
  await edits.get("none");  // the table's declaration has committed
  return { store, owner, edits, name };
}

// Workloads 1 and 2 on a fresh store of their own (see `interleaved`).
async function onestoreFirst(durability) {
  const name = `bench-${durability}-first`;
  await deleteStore({ backend: "opfs", name });
  const { store, owner, edits } = await openOnestore(name, durability);
  let n = 0;
  return {
    async commits(p) {
      const t0 = performance.now();
      for (let i = 0; i < p.commits; i++) await owner.tx(async (tx) => { await tx.put(edits, ROW(n++)); });
      return (performance.now() - t0) / p.commits;
    },
    async bulk(p) {
      const t0 = performance.now();
      await owner.tx(async (tx) => { for (let i = 0; i < p.bulk; i++) await tx.put(edits, ROW(n++)); });
      return performance.now() - t0;
    },
    async close() {
      await store.close();
      await deleteStore({ backend: "opfs", name });
    },
  };
}

// The other workloads (3 to 8); `first` holds the figures of 1 and 2.
async function onestore(label, durability, p, first) {
  let files = 0;
  const names = [];
  const fresh = async () => {
    const name = `bench-${durability}-${files++}`;
    names.push(name);
    await deleteStore({ backend: "opfs", name });
    return open(name);
  };
  const open = (name, d = durability) => openOnestore(name, d);
  const fill = async (owner, edits, from, to) => {
    for (let at = from; at < to; at += CHUNK) {
      const end = Math.min(to, at + CHUNK);
      await owner.tx(async (tx) => { for (let i = at; i < end; i++) await tx.put(edits, ROW(i)); });
    }
  };
  const lastRecord = async (store) => (await store.outbox.read(store.head - 1, 1)).commits[0];
  const f = { ...first };
  try {
    {
      const { store, owner, edits } = await fresh();
      await fill(owner, edits, 0, p.readRows);
      await store.outbox.trim(store.head);
      let bytes = 0;
      let renamed = 0;
      const rename = await repeat(p.runs, async (r) => {
        const [from, to] = r % 2 ? [DIR_TO, DIR_FROM] : [DIR_FROM, DIR_TO];
        const t0 = performance.now();
        await owner.tx(async (tx) => { await tx.updateWhere(edits, (e) => prefix(e.path, from), { path: replacePrefix(from, to) }); });
        const ms = performance.now() - t0;
        const rec = await lastRecord(store);
        bytes = bytesOf(JSON.stringify(rec));
        renamed = rec.ops[0].count;
        return ms;
      });
      if (p.runs % 2) await owner.tx(async (tx) => { await tx.updateWhere(edits, (e) => prefix(e.path, DIR_TO), { path: replacePrefix(DIR_TO, DIR_FROM) }); });
      f.rename = figure(rename.value, "ms", { per: `rename of ${renamed} rows`, runs: rename.runs, rows: renamed, outboxBytes: bytes });

      const q = query(Edits).orderBy((e) => e.path).orderBy((e) => e.at);
      const pages = await repeat(p.runs, async () => {
        let after;
        let rows = 0;
        const t0 = performance.now();
        for (let i = 0; i < p.pages; i++) {
          const page = await edits.page(q, p.pageSize, undefined, after ? { after } : undefined);
          rows += page.rows.length;
          after = page.next;
        }
        const ms = performance.now() - t0;
        if (rows !== p.pages * p.pageSize) throw new Error(`${label}: ${rows} rows paged, expected ${p.pages * p.pageSize}`);
        return ms / p.pages;
      });
      f.page = figure(pages.value, "ms", { per: `page of ${p.pageSize} rows`, runs: pages.runs });

      const keys = getKeys(p.gets, p.readRows);
      const gets = await repeat(p.runs, async () => {
        const t0 = performance.now();
        for (const k of keys) if ((await edits.get(k)) === undefined) throw new Error(`${label}: ${k} not found`);
        return (performance.now() - t0) / keys.length;
      });
      f.get = figure(gets.value, "ms", { per: "get", runs: gets.runs });
      await store.close();
      log(`${label}: rename ${rename.value.toFixed(2)} ms, page ${pages.value.toFixed(3)} ms, get ${(gets.value * 1000).toFixed(1)} µs`);
    }
    {
      const batches = recordedOps(p.replayCommits, p.replayOpsPerCommit);
      const changes = batches.reduce((s, b) => s + b.length, 0);
      const replay = await repeat(p.runs, async () => {
        const { store, name } = await fresh();
        const t0 = performance.now();
        for (const ops of batches) await store.commit(ops);
        const ms = performance.now() - t0;
        await store.close();
        await deleteStore({ backend: "opfs", name });
        return ms / changes;
      });
      f.replay = figure(replay.value, "ms", { per: "row change", runs: replay.runs, rowChangesPerSecond: 1000 / replay.value, commits: batches.length, changes });
      log(`${label}: replay ${(1000 / replay.value).toFixed(0)} row changes/s`);
    }
    {
      // Workload 8: one store grown through the sizes (the outbox trimmed
      // after each stage, as bench/lib/fixture.mjs does); then workload 7
      // on it once it also holds openOutbox records.
      f.commitAt = {};
      let { store, owner, edits, name } = await fresh();
      let have = 0;
      for (const size of p.commitAt) {
        if (!p.quick && size >= 1000000 && performance.now() - started > BUDGET_MS) {
          f.commitAt[size] = na(`skipped: building ${size} rows in OPFS would pass the run's time budget`);
          continue;
        }
        // Built in a relaxed session, as bench/lib/fixture.mjs builds its file.
        await store.close();
        ({ store, owner, edits } = await open(name, "relaxed"));
        await fill(owner, edits, have, size);
        await store.outbox.trim(store.head);
        await store.close();
        ({ store, owner, edits } = await open(name));
        have = size;
        let i = 0;
        const salt = 1;
        await owner.tx(async (tx) => { await tx.put(edits, MIDDLE_ROW(i++, size, salt)); });  // warm-up
        const r = await repeat(p.runs, async () => {
          const t0 = performance.now();
          for (let k = 0; k < p.commitAtCommits; k++) await owner.tx(async (tx) => { await tx.put(edits, MIDDLE_ROW(i++, size, salt)); });
          return (performance.now() - t0) / p.commitAtCommits;
        });
        f.commitAt[size] = figure(r.value, "ms", { per: "commit", runs: r.runs, rows: size });
        log(`${label}: commit at ${size} rows ${r.value.toFixed(3)} ms`);
      }
      // openOutbox one-put commits (relaxed, as the fixture's): the outbox
      // then holds exactly that many records.
      await store.close();
      ({ store, owner, edits } = await open(name, "relaxed"));
      await store.outbox.trim(store.head);
      for (let i = 0; i < p.openOutbox; i++) await owner.tx(async (tx) => { await tx.put(edits, ROW((i * 48271) % have)); });
      await store.close();
      const runs = await timeOpens(p, have, label, async (key) => {
        ({ store, edits } = await open(name));
        const found = (await edits.get(key)) !== undefined;
        return { found, close: () => store.close() };
      });
      f.open = figure(median(runs), "ms", { per: "open + first get", runs, rows: have, outbox: p.openOutbox });
      log(`${label}: open ${median(runs).toFixed(1)} ms (${have} rows)`);
    }
  } finally {
    for (const name of names) await deleteStore({ backend: "opfs", name }).catch(() => {});
  }
  return { label, engine: "onestore", durability, commit: f.commit.value, get: f.get.value, bulk: f.bulk.value, figures: f };
}

// Workloads 1 (one-row commits) and 2 (a transaction of p.bulk puts) of
// every row, interleaved as the Node columns' are (bench/run.mjs): each row
// works on a fresh store of its own (`starts[i]()` opens it and returns {
// commits(p): ms per commit over a batch of p.commits, bulk(p): ms for one
// transaction, close() }); each round runs one batch of every row, in an
// order rotated round by round; one batch of every row before the rounds
// is not counted. Run one row after another, whichever came first paid the
// first seconds of a new Chromium (its own start-up work beside the
// worker's, on a 2-core machine): about twice its commit time
// (docs/performance.md, "Session 53"). Returns, per row, { commit, bulk }.
async function interleaved(starts, p) {
  const subjects = [];
  const commits = starts.map(() => []);
  const bulks = starts.map(() => []);
  const rounds = async (fn) => {
    for (let r = 0; r < p.runs; r++) {
      for (let k = 0; k < subjects.length; k++) await fn((k + r) % subjects.length);
    }
  };
  try {
    for (const start of starts) subjects.push(await start());
    for (const s of subjects) await s.commits(p);  // warm-up, not counted
    await rounds(async (i) => { commits[i].push(await subjects[i].commits(p)); });
    await rounds(async (i) => { bulks[i].push(await subjects[i].bulk(p)); });
  } finally {
    for (const s of subjects) await s.close();
  }
  return subjects.map((_, i) => {
    const bulk = median(bulks[i]);
    return {
      commit: figure(median(commits[i]), "ms", { per: "commit", runs: commits[i] }),
      bulk: figure(bulk, "ms", { per: `tx of ${p.bulk} puts`, runs: bulks[i], putsPerSecond: p.bulk / (bulk / 1000) }),
    };
  });
}

// Workload 7 for either engine: `openAndGet(key)` opens the fixture and reads
// one key (timed up to the get), and returns { found, close } (not timed).
// Batches of OPEN_BATCH opens, p.openRuns + 1 of them; the first batch only
// warms what a reopen reuses. Returns the batch means, ms per open.
async function timeOpens(p, have, label, openAndGet) {
  const keys = getKeys(p.openRuns + 1, have);
  const runs = [];
  for (let run = 0; run <= p.openRuns; run++) {
    let ms = 0;
    for (let b = 0; b < OPEN_BATCH; b++) {
      const t0 = performance.now();
      const { found, close } = await openAndGet(keys[run]);
      ms += performance.now() - t0;
      await close();
      if (!found) throw new Error(`${label}: ${keys[run]} not in the fixture`);
    }
    if (run > 0) runs.push(ms / OPEN_BATCH);
  }
  return runs;
}

// ---- sqlite-wasm opfs-sahpool: the statements of bench/lib/sql-column.mjs ----

const T = `"${TABLE}"`;
const SCHEMA = `CREATE TABLE ${T} (id TEXT NOT NULL, path TEXT NOT NULL, entry INTEGER NOT NULL, at INTEGER NOT NULL, meta TEXT NOT NULL, PRIMARY KEY (id)) STRICT;
  CREATE INDEX "${TABLE}/byPath" ON ${T} (path, at, id);
  CREATE TABLE _outbox (seq INTEGER PRIMARY KEY, record TEXT NOT NULL) STRICT;`;
const PUT = `INSERT OR REPLACE INTO ${T} (${COLUMNS.join(", ")}) VALUES (?, ?, ?, ?, ?)`;
const OUT = "INSERT INTO _outbox (seq, record) VALUES (?, ?)";
const SELECT = `SELECT ${COLUMNS.join(", ")} FROM ${T}`;
const FIRST_PAGE = `${SELECT} ORDER BY path, at, id LIMIT ?`;
const NEXT_PAGE = `${SELECT} WHERE (path, at, id) > (?, ?, ?) ORDER BY path, at, id LIMIT ?`;
const GET = `${SELECT} WHERE id = ?`;
const RENAME = `UPDATE ${T} SET path = ? || substr(path, ?) WHERE path >= ? AND path < ?`;
const UPDATE_AT = `UPDATE ${T} SET at = ? WHERE id = ?`;
const DELETE = `DELETE FROM ${T} WHERE id = ?`;
const putParams = (r) => [r.id, r.path, r.entry, r.at, JSON.stringify(r.meta)];
const asRow = (a) => ({ id: a[0], path: a[1], entry: a[2], at: a[3], meta: JSON.parse(a[4]) });
const upper = (s) => s.slice(0, -1) + String.fromCharCode(s.charCodeAt(s.length - 1) + 1);

let sqlite3;
let pool;
async function installSahpool() {
  sqlite3 ??= await sqlite3InitModule();
  pool ??= await sqlite3.installOpfsSAHPoolVfs({ name: "bench-sahpool", directory: ".bench-sahpool", clearOnInit: true, initialCapacity: 12 });
}

// A connection to `file` in the pool, `pragmas` run, its statements cached.
function conn(file, pragmas) {
  const db = new pool.OpfsSAHPoolDb(file);
  if (pragmas) db.exec(pragmas);
  const cache = new Map();
  const stmt = (sql) => { let s = cache.get(sql); if (!s) cache.set(sql, (s = db.prepare(sql))); return s; };
  return {
    db,
    exec: (sql) => db.exec(sql),
    run(sql, bind) { const s = stmt(sql); s.bind(bind); s.step(); s.reset(); return db.changes(); },
    all(sql, bind) { const s = stmt(sql); s.bind(bind); const out = []; while (s.step()) out.push(s.get([])); s.reset(); return out; },
    close() { for (const s of cache.values()) s.finalize(); db.close(); },
  };
}

// One commit, as sql-column.mjs: BEGIN IMMEDIATE, the row statements, the
// JSON outbox record, COMMIT.
function commit(c, state, ops, body) {
  c.exec("BEGIN IMMEDIATE");
  const counts = body();
  const seq = ++state.seq;
  if (counts !== undefined) ops = ops.map((op, i) => (counts[i] === undefined ? op : { ...op, count: counts[i] }));
  const record = JSON.stringify({ seq, from: seq - 1, at: Date.now(), owner: OWNER, ops });
  c.run(OUT, [seq, record]);
  c.exec("COMMIT");
  return record;
}
const putOne = (c, state, row) => commit(c, state, [{ op: "put", table: TABLE, row }], () => { c.run(PUT, putParams(row)); });
const fileBase = (label) => label.replace(/[^a-z0-9]+/gi, "-");

// Workloads 1 and 2 on a fresh database of their own (see `interleaved`).
async function sahpoolFirst(label, pragmas) {
  await installSahpool();
  const file = `/${fileBase(label)}-first.db`;
  const c = conn(file, pragmas);
  c.exec(SCHEMA);
  const state = { seq: 0 };
  let n = 0;
  return {
    async commits(p) {
      const t0 = performance.now();
      for (let i = 0; i < p.commits; i++) putOne(c, state, ROW(n++));
      return (performance.now() - t0) / p.commits;
    },
    async bulk(p) {
      const t0 = performance.now();
      const ops = [];
      commit(c, state, ops, () => {
        for (let i = 0; i < p.bulk; i++) {
          const row = ROW(n++);
          c.run(PUT, putParams(row));
          ops.push({ op: "put", table: TABLE, row });
        }
      });
      return performance.now() - t0;
    },
    async close() {
      c.close();
      pool.unlink(file);
    },
  };
}

// The other workloads (3 to 8); `first` holds the figures of 1 and 2.
async function sahpool(label, pragmas, durability, p, first) {
  await installSahpool();
  const base = fileBase(label);
  let files = 0;
  const paths = [];
  const connect = (file) => conn(file, pragmas);
  const fresh = () => {
    const file = `/${base}-${files++}.db`;
    paths.push(file);
    const c = connect(file);
    c.exec(SCHEMA);
    c.file = file;
    return c;
  };
  const f = { ...first };
  try {
    {
      const c = fresh();
      const state = { seq: 0 };
      c.exec(`INSERT INTO ${T} (${COLUMNS.join(", ")}) ${ROW_SQL(0, p.readRows)}`);
      let bytes = 0;
      let renamed = 0;
      const renameOnce = (from, to) => commit(c, state, [{ op: "update", table: TABLE, where: { prefix: ["path", from] }, set: { path: { replacePrefix: [from, to] } } }], () => {
        renamed = Number(c.run(RENAME, [to, from.length + 1, from, upper(from)]));
        return [renamed];
      });
      const rename = await repeat(p.runs, (r) => {
        const [from, to] = r % 2 ? [DIR_TO, DIR_FROM] : [DIR_FROM, DIR_TO];
        const t0 = performance.now();
        const record = renameOnce(from, to);
        const ms = performance.now() - t0;
        bytes = bytesOf(record);
        return ms;
      });
      if (p.runs % 2) renameOnce(DIR_TO, DIR_FROM);
      f.rename = figure(rename.value, "ms", { per: `rename of ${renamed} rows`, runs: rename.runs, rows: renamed, outboxBytes: bytes });

      const pages = await repeat(p.runs, () => {
        let last = null;
        let rows = 0;
        const t0 = performance.now();
        for (let i = 0; i < p.pages; i++) {
          const page = (last ? c.all(NEXT_PAGE, [last.path, last.at, last.id, p.pageSize]) : c.all(FIRST_PAGE, [p.pageSize])).map(asRow);
          rows += page.length;
          last = page[page.length - 1];
        }
        const ms = performance.now() - t0;
        if (rows !== p.pages * p.pageSize) throw new Error(`${label}: ${rows} rows paged, expected ${p.pages * p.pageSize}`);
        return ms / p.pages;
      });
      f.page = figure(pages.value, "ms", { per: `page of ${p.pageSize} rows`, runs: pages.runs });

      const keys = getKeys(p.gets, p.readRows);
      const gets = await repeat(p.runs, () => {
        const t0 = performance.now();
        for (const k of keys) {
          const rows = c.all(GET, [k]);
          if (rows.length !== 1) throw new Error(`${label}: ${k} not found`);
          asRow(rows[0]);
        }
        return (performance.now() - t0) / keys.length;
      });
      f.get = figure(gets.value, "ms", { per: "get", runs: gets.runs });
      c.close();
      log(`${label}: rename ${rename.value.toFixed(2)} ms, page ${pages.value.toFixed(3)} ms, get ${(gets.value * 1000).toFixed(1)} µs`);
    }
    {
      const batches = recordedOps(p.replayCommits, p.replayOpsPerCommit);
      const changes = batches.reduce((s, b) => s + b.length, 0);
      const replay = await repeat(p.runs, () => {
        const c = fresh();
        const state = { seq: 0 };
        const t0 = performance.now();
        for (const ops of batches) {
          commit(c, state, ops, () => {
            for (const op of ops) {
              if (op.op === "put") c.run(PUT, putParams(op.row));
              else if (op.op === "update") {
                if (Number(c.run(UPDATE_AT, [op.set.at.value, op.key[0]])) !== 1) throw new Error(`${label}: update of a missing row`);
              } else c.run(DELETE, [op.key[0]]);
            }
          });
        }
        const ms = performance.now() - t0;
        c.close();
        pool.unlink(c.file);
        return ms / changes;
      });
      f.replay = figure(replay.value, "ms", { per: "row change", runs: replay.runs, rowChangesPerSecond: 1000 / replay.value, commits: batches.length, changes });
      log(`${label}: replay ${(1000 / replay.value).toFixed(0)} row changes/s`);
    }
    {
      f.commitAt = {};
      let c = fresh();
      const file = c.file;
      const state = { seq: 0 };
      let have = 0;
      for (const size of p.commitAt) {
        if (!p.quick && size >= 1000000 && performance.now() - started > BUDGET_MS) {
          f.commitAt[size] = na(`skipped: building ${size} rows in OPFS would pass the run's time budget`);
          continue;
        }
        if (size > have) c.exec(`INSERT INTO ${T} (${COLUMNS.join(", ")}) ${ROW_SQL(have, size)}`);
        have = size;
        let i = 0;
        const salt = label.length + 100;
        putOne(c, state, MIDDLE_ROW(i++, size, salt));  // warm-up
        const r = await repeat(p.runs, () => {
          const t0 = performance.now();
          for (let k = 0; k < p.commitAtCommits; k++) putOne(c, state, MIDDLE_ROW(i++, size, salt));
          return (performance.now() - t0) / p.commitAtCommits;
        });
        f.commitAt[size] = figure(r.value, "ms", { per: "commit", runs: r.runs, rows: size });
        log(`${label}: commit at ${size} rows ${r.value.toFixed(3)} ms`);
      }
      // The outbox of workload 7: openOutbox one-put records, written in one
      // transaction (their content is what an open sees, not how they came).
      c.exec("DELETE FROM _outbox; BEGIN IMMEDIATE");
      for (let i = 0; i < p.openOutbox; i++) {
        const row = ROW((i * 48271) % have);
        const seq = ++state.seq;
        c.run(PUT, putParams(row));
        c.run(OUT, [seq, JSON.stringify({ seq, from: seq - 1, at: Date.now(), owner: OWNER, ops: [{ op: "put", table: TABLE, row }] })]);
      }
      c.exec("COMMIT");
      c.close();
      const runs = await timeOpens(p, have, label, async (key) => {
        c = connect(file);
        const found = c.all(GET, [key]).length === 1;
        return { found, close: () => c.close() };
      });
      f.open = figure(median(runs), "ms", { per: "open + first get", runs, rows: have, outbox: p.openOutbox,
        note: "new OpfsSAHPoolDb on the installed pool (its access handles stay open; installOpfsSAHPoolVfs is not counted) + first get" });
      log(`${label}: open ${median(runs).toFixed(1)} ms (${have} rows)`);
    }
  } finally {
    for (const file of paths) { try { pool.unlink(file); } catch {} }
  }
  return { label, engine: "opfs-sahpool", durability, commit: f.commit.value, get: f.get.value, bulk: f.bulk.value, figures: f };
}

self.onmessage = async (e) => {
  try {
    const quick = !!e.data?.quick;
    const p = plan(quick);
    started = performance.now();
    log = (m) => self.postMessage({ log: `[${((performance.now() - started) / 1000).toFixed(1)} s] ${m}` });
    const ROWS = [
      { label: "onestore opfs (full)", engine: "onestore", durability: "full" },
      { label: "onestore opfs (relaxed)", engine: "onestore", durability: "relaxed" },
      { label: "sahpool, defaults", engine: "sahpool", pragmas: "", durability: "full" },
      { label: "sahpool, exclusive lock", engine: "sahpool", pragmas: "PRAGMA locking_mode=EXCLUSIVE", durability: "full" },
      { label: "sahpool, exclusive + WAL, synchronous=NORMAL", engine: "sahpool", pragmas: "PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL", durability: "relaxed" },
    ];
    const firsts = await interleaved(ROWS.map((r) => () => (r.engine === "onestore" ? onestoreFirst(r.durability) : sahpoolFirst(r.label, r.pragmas))), p);
    ROWS.forEach((r, i) => log(`${r.label}: commit ${firsts[i].commit.value.toFixed(3)} ms, bulk ${firsts[i].bulk.value.toFixed(1)} ms`));
    const rows = [];
    for (const [i, r] of ROWS.entries()) {
      rows.push(r.engine === "onestore" ? await onestore(r.label, r.durability, p, firsts[i]) : await sahpool(r.label, r.pragmas, r.durability, p, firsts[i]));
    }
    self.postMessage({ ok: true, quick, rows, env: { userAgent: navigator.userAgent, sqliteWasm: sqlite3.version.libVersion, hardwareConcurrency: navigator.hardwareConcurrency } });
  } catch (err) {
    self.postMessage({ ok: false, error: String(err?.stack ?? err) });
  }
};
