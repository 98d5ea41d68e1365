// The onestore columns: the workloads through the public package, on the
// memory backend or on a sqlite file (durability full or relaxed).

import { join } from "node:path";

import { openReplica, openStore, prefix, query, replacePrefix } from "../../js/index.js";
import { DIRS, Edits, EditsAltered, MIDDLE_ROW, OWNER, ROW, figure, getKeys, median, na, recordedOps, repeat, replicaBatches } from "./common.mjs";

const CHUNK = 100000;  // puts per transaction while building a table

export async function fill(owner, edits, from, to) {
  for (let at = from; at < to; at += CHUNK) {
    const end = Math.min(to, at + CHUNK);
    await owner.tx(async (tx) => {
      for (let i = at; i < end; i++) await tx.put(edits, ROW(i));
    });
  }
}

// The byte length of the outbox record of the store's last commit.
async function lastRecordBytes(store) {
  const { commits } = await store.outbox.read(store.head - 1, 1);
  return Buffer.byteLength(JSON.stringify(commits[0]));
}

/**
 * A column: { id, label, kind, settings, anchors, main(), commitAt..., open() }.
 * `backend` is "memory" or "sqlite" (a file in `dir`, `durability`).
 */
export function onestoreColumn({ id, label, backend, durability, dir, anchors }) {
  let files = 0;
  const options = () => (backend === "memory" ? { backend } : { backend, path: join(dir, `${id}-${files++}.sqlite`), durability });
  // Workloads 7 and 14: open a store file, read one row by key, close; the
  // time is the open and the get.
  async function openAndGet(path, def, key) {
    const t0 = performance.now();
    const store = await openStore({ backend, path, durability });
    const edits = store.object({ type: OWNER }).table(def);
    if ((await edits.get(key)) === undefined) throw new Error(`${id}: ${key} not in ${path}`);
    const ms = performance.now() - t0;
    await store.close();
    return ms;
  }

  async function open(opts = options()) {
    const store = await openStore(opts);
    const owner = store.object({ type: OWNER });
    const edits = owner.table(Edits);
    await edits.get("none");  // the table's declaration has committed
    return { store, owner, edits };
  }
  const settings = backend === "memory"
    ? { backend: "memory" }
    : { backend: "sqlite file (Node fs)", durability, journal_mode: "WAL", synchronous: durability === "full" ? "FULL" : "NORMAL", locking_mode: "EXCLUSIVE", lock: "the cross-process lock, held while the store is open" };

  return {
    id, label, kind: "onestore", group: "node", settings, anchors,
    memory: backend === "memory",
    backend, durability,

    // Workloads 1 to 6.
    async main(p, log) {
      const f = {};
      {
        const { store, owner, edits } = await open();
        let n = 0;
        const count = backend === "memory" ? p.commits : p.fileCommits;
        const one = await repeat(p.runs, async () => {
          const t0 = performance.now();
          for (let i = 0; i < count; i++) await owner.tx(async (tx) => { await tx.put(edits, ROW(n++)); });
          return (performance.now() - t0) / count;
        });
        f.commit = figure(one.value, "ms", { per: "commit", runs: one.runs });
        log(`${id}: one-put commit ${one.value.toFixed(3)} ms`);
        const bulk = await repeat(p.runs, async () => {
          await owner.tx(async (tx) => {
            for (let i = 0; i < p.bulk; i++) await tx.put(edits, ROW(n++));
          });
        });
        // For scale (memory only): the same loop in plain JS, in this
        // process right after. `callerLoop`: the caller's own part (a row
        // built by ROW and an await of an empty async put); `jsMap`: a
        // store in plain JS (each row copied into a Map and onto the ops,
        // the outbox record one JSON.stringify at the end). 1M puts/s is
        // 25 ms for the 25,000. One run a round (p.runs is 1 in npm run
        // bench): run.mjs's mergeRun takes the medians over the rounds.
        // Logged before the plain-JS loops: bench/bulk-wall.mjs's window is
        // the span between this column's log lines around the transaction.
        log(`${id}: ${p.bulk} puts in one tx ${bulk.value.toFixed(1)} ms`);
        const plainJs = backend !== "memory" ? {} : await plainBulk(p);
        f.bulk = figure(bulk.value, "ms", { per: `tx of ${p.bulk} puts`, runs: bulk.runs, putsPerSecond: p.bulk / (bulk.value / 1000), ...plainJs });
        await store.close();
      }
      {
        const { store, owner, edits } = await open();
        await fill(owner, edits, 0, p.readRows);
        let bytes = 0;
        let renamed = 0;
        const dirFrom = "src/dir3/";
        const dirTo = "src/moved3/";
        const rename = await repeat(p.runs, async (r) => {
          const [from, to] = r % 2 ? [dirTo, dirFrom] : [dirFrom, dirTo];
          const t0 = performance.now();
          await owner.tx(async (tx) => { await tx.updateWhere(edits, (e) => prefix(e.path, from), { path: replacePrefix(from, to) }); });
          const ms = performance.now() - t0;
          bytes = await lastRecordBytes(store);
          renamed = (await store.outbox.read(store.head - 1, 1)).commits[0].ops[0].count;
          return ms;
        });
        if (p.runs % 2) await owner.tx(async (tx) => { await tx.updateWhere(edits, (e) => prefix(e.path, dirTo), { path: replacePrefix(dirTo, dirFrom) }); });
        f.rename = figure(rename.value, "ms", { per: `rename of ${renamed} rows`, runs: rename.runs, rows: renamed, outboxBytes: bytes });
        log(`${id}: rename ${renamed} rows ${rename.value.toFixed(2)} ms, ${bytes} outbox bytes`);

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
          if (rows !== p.pages * p.pageSize) throw new Error(`${id}: ${rows} rows paged, expected ${p.pages * p.pageSize}`);
          return ms / p.pages;
        });
        f.page = figure(pages.value, "ms", { per: `page of ${p.pageSize} rows`, runs: pages.runs });
        log(`${id}: page(${p.pageSize}) ${pages.value.toFixed(3)} ms`);

        const keys = getKeys(p.gets, p.readRows);
        const gets = await repeat(p.runs, async () => {
          const t0 = performance.now();
          for (const k of keys) if ((await edits.get(k)) === undefined) throw new Error(`${id}: ${k} not found`);
          return (performance.now() - t0) / keys.length;
        });
        f.get = figure(gets.value, "ms", { per: "get", runs: gets.runs });
        log(`${id}: get ${(gets.value * 1000).toFixed(1)} µs`);
        await store.close();
      }
      {
        const batches = recordedOps(backend === "memory" ? p.replayCommits : p.fileReplayCommits, p.replayOpsPerCommit);
        const changes = batches.reduce((s, b) => s + b.length, 0);
        const replay = await repeat(p.runs, async () => {
          const { store } = await open();
          const t0 = performance.now();
          for (const ops of batches) await store.commit(ops);
          const ms = performance.now() - t0;
          await store.close();
          return ms / changes;
        });
        f.replay = figure(replay.value, "ms", { per: "row change", runs: replay.runs, rowChangesPerSecond: 1000 / replay.value, commits: batches.length, changes });
        log(`${id}: replay ${(1000 / replay.value).toFixed(0)} row changes/s`);
      }
      {
        // Workload 10: a replica applying the recorded batches, each one
        // backend transaction (its rows, records and head).
        const { batches, changes } = await replicaBatches(p);
        const apply = await repeat(p.runs, async () => {
          const replica = await openReplica(options());
          const t0 = performance.now();
          for (const b of batches) await replica.applyBatch(b);
          const ms = performance.now() - t0;
          await replica.close();
          return ms / changes;
        });
        f.replica = figure(apply.value, "ms", { per: "row change", runs: apply.runs, rowChangesPerSecond: 1000 / apply.value, batches: batches.length, changes });
        log(`${id}: replica apply ${(1000 / apply.value).toFixed(0)} row changes/s`);
      }
      {
        // Workload 13: loading a document with p.docChanges changes (50 a
        // commit; the owner's default checkpointWhen), now and at an old seq.
        const { store } = await open();
        const notes = store.object({ type: "bench-notes" });
        let docId;
        await notes.tx(async (tx) => { docId = await tx.documents.create({ kind: "note", key: "bench" }, { title: "Bench", n: 0, log: [] }); });
        const middle = { seq: 0 };
        for (let done = 0; done < p.docChanges; done += 50) {
          await notes.tx(async (tx) => {
            for (let i = done; i < Math.min(p.docChanges, done + 50); i++) {
              await tx.documents.change(docId, [{ op: "replace", path: "/n", value: i + 1 }, { op: "add", path: "/log/-", value: `change ${i + 1}` }]);
            }
          });
          if (done < p.docChanges / 2) middle.seq = store.head;
        }
        const last = await notes.documents.load(docId);
        if (last.version !== p.docChanges + 1 || last.value.n !== p.docChanges) throw new Error(`${id}: the document has version ${last.version}, expected ${p.docChanges + 1}`);
        const loads = await repeat(p.runs, async () => {
          const t0 = performance.now();
          for (let i = 0; i < p.docLoads; i++) await notes.documents.load(docId);
          return (performance.now() - t0) / p.docLoads;
        });
        const past = await repeat(p.runs, async () => {
          const t0 = performance.now();
          for (let i = 0; i < p.docLoads; i++) await notes.documents.load(docId, { at: middle.seq });
          return (performance.now() - t0) / p.docLoads;
        });
        f.docLoad = figure(loads.value, "ms", { per: `load of a document with ${p.docChanges} changes`, runs: loads.runs, pastLoadMs: past.value, pastSeq: middle.seq, bytes: JSON.stringify(last.value).length });
        log(`${id}: document load ${(loads.value * 1000).toFixed(1)} µs (at a past seq ${(past.value * 1000).toFixed(1)} µs)`);
        await store.close();
      }
      return f;
    },

    // Workload 8 for the memory backend: one table grown through the sizes.
    async commitAtAll(p, log) {
      const out = {};
      const { store, owner, edits } = await open();
      let have = 0;
      for (const size of p.commitAt) {
        await fill(owner, edits, have, size);
        have = size;
        out[size] = await measureCommits(owner, edits, size, p, 1, p.commitAtMemoryCommits);
        log(`${id}: commit at ${size} rows ${out[size].value.toFixed(3)} ms`);
      }
      await store.close();
      return out;
    },

    // Workload 8 for a file: the shared fixture at `size` rows.
    async commitAt(size, fixture, p, log) {
      const { store, owner, edits } = await open({ backend, path: fixture.path, durability });
      const f = await measureCommits(owner, edits, size, p, id.length, p.commitAtCommits);
      await store.close();
      log(`${id}: commit at ${size} rows ${f.value.toFixed(3)} ms`);
      return f;
    },

    // Workload 7: open the fixture (1M rows, 20k outbox records) and read one row.
    async open(fixture, p, log) {
      if (backend === "memory") return na("a memory store cannot be reopened: its rows live only in the process");
      const keys = getKeys(p.openRuns + 1, fixture.rows);
      const runs = [];
      for (let run = 0; run <= p.openRuns; run++) runs.push(await openAndGet(fixture.path, Edits, keys[run]));
      runs.shift();  // the first open also reads the file into the page cache
      const value = median(runs);
      log(`${id}: open ${value.toFixed(1)} ms`);
      return figure(value, "ms", { per: "open + first get", runs });
    },
    // Workload 15: store.snapshot() of the fixture file (its rows and 20k
    // outbox records): SQLite's backup API into <file>.snapshots/, one kept.
    async snapshot(fixture, p, log) {
      if (backend === "memory") return na("the fixture is a store file; a memory store's snapshot copies its maps inside the core (not measured here)");
      const store = await openStore({ backend, path: fixture.path, durability, keepSnapshots: 1 });
      try {
        await store.object({ type: OWNER }).table(Edits).get("none");
        const r = await repeat(p.openRuns, async () => {
          const t0 = performance.now();
          await store.snapshot({ label: "bench" });
          return performance.now() - t0;
        });
        const { statSync } = await import("node:fs");
        const [newest] = await store.snapshots();
        const bytes = statSync(`${fixture.path}.snapshots/${newest.id}.sqlite`).size;
        log(`${id}: snapshot ${r.value.toFixed(1)} ms (${fixture.rows} rows, ${bytes} bytes)`);
        return figure(r.value, "ms", { per: "snapshot", runs: r.runs, rows: fixture.rows, bytes });
      } finally {
        await store.close();
        const { rmSync } = await import("node:fs");
        rmSync(`${fixture.path}.snapshots`, { recursive: true, force: true });
      }
    },
    // Workload 14: the fixture after its table's version 2 added a column,
    // opened alternately with a copy of the file taken before the alter
    // (the plain open), so that the ratio compares opens made at the same
    // moments: a lone run of a few opens a minute after workload 7's is at
    // the mercy of what the disk is doing then (the snapshots of workload 15
    // were just deleted).
    async openAltered(fixture, p, log) {
      if (backend === "memory") return na("a memory store cannot be reopened: its rows live only in the process");
      const n = 3 * p.openRuns;
      const keys = getKeys(n + 1, fixture.rows);
      const altered = [], plain = [];
      for (let run = 0; run <= n; run++) {
        const alteredOnce = () => openAndGet(fixture.path, EditsAltered, keys[run]);
        const plainOnce = () => openAndGet(fixture.beforeAlter, Edits, keys[run]);
        if (run % 2) {  // the order alternates too
          plain.push(await plainOnce());
          altered.push(await alteredOnce());
        } else {
          altered.push(await alteredOnce());
          plain.push(await plainOnce());
        }
      }
      altered.shift();  // the first opens also read the files into the page cache
      plain.shift();
      const value = median(altered), before = median(plain);
      log(`${id}: open after an alter add ${value.toFixed(2)} ms, a copy from before it ${before.toFixed(2)} ms (interleaved)`);
      return figure(value, "ms", { per: "open + first get", runs: altered, plain: figure(before, "ms", { per: "open + first get of the copy from before the alter, interleaved", runs: plain }) });
    },
  };
}

async function measureCommits(owner, edits, size, p, salt, count) {
  let i = 0;
  const commit = () => owner.tx(async (tx) => { await tx.put(edits, MIDDLE_ROW(i++, size, salt)); });
  for (let k = 0; k < count; k++) await commit();  // warm-up: a run's worth
  const r = await repeat(p.runs, async () => {
    const t0 = performance.now();
    for (let k = 0; k < count; k++) await commit();
    return (performance.now() - t0) / count;
  });
  return figure(r.value, "ms", { per: "commit", runs: r.runs, rows: size });
}

export { DIRS };

// The plain-JS figures beside the memory backend's bulk transaction (see
// main()): medians in ms of p.runs runs each, alternated run by run.
async function plainBulk(p) {
  let n = 0;
  const loop = [];
  const map = [];
  for (let r = 0; r < p.runs; r++) {
    let t0 = performance.now();
    await (async () => {
      const put = async (_t, row) => row;
      for (let i = 0; i < p.bulk; i++) await put(null, ROW(n++));
    })();
    loop.push(performance.now() - t0);
    t0 = performance.now();
    const rows = new Map();
    const ops = [];
    await (async () => {
      const put = async (_t, row) => {
        const copy = { ...row, meta: { ...row.meta } };
        rows.set(copy.id, copy);
        ops.push({ op: "put", table: "bench/edits", row: copy });
      };
      for (let i = 0; i < p.bulk; i++) await put(null, ROW(n++));
    })();
    const record = JSON.stringify({ seq: r + 1, from: r, at: Date.now(), owner: OWNER, ops });
    map.push(performance.now() - t0);
    if (rows.size !== p.bulk || record.length < p.bulk) throw new Error("plainBulk: the plain-JS store lost rows");
  }
  return { callerLoopMs: median(loop), callerLoopRuns: loop, jsMapMs: median(map), jsMapRuns: map };
}
