// The Worker of tests/edge/snapshots.test.js: snapshots of a durable store
// (copies of its tables inside the Durable Object's SQLite,
// js/snapshots-durable.js). POST /<object>/<op> with a JSON body runs <op>
// on the Durable Object named <object> (class TestSession, SQLite storage)
// and answers { ok, result } or { ok: false, code, message } (the plumbing
// of ./object-ops.js).

import * as api from "../../js/workerd.js";
import { objectRouter, runOp } from "./object-ops.js";

const { openStore, importStore, defineTable, int, json, str } = api;

const Items = defineTable("items", {
  columns: { id: str(), n: int(), tags: json().optional() },
  key: ["id"],
  indexes: { byN: ["n"] },
});
const Other = defineTable("other", { columns: { id: int(), v: str() }, key: ["id"] });

// The same ops as tests/js/snapshots.test.js's seed and change.
async function seed(notes, items) {
  await notes.tx(async (tx) => {
    for (let i = 0; i < 20; i++) await tx.put(items, { id: `i${i}`, n: i, tags: i % 2 ? ["odd"] : null });
    await tx.documents.create({ kind: "note", key: "k" }, { text: "one" });
  });
}

async function change(notes, items) {
  await notes.tx(async (tx) => {
    await tx.put(items, { id: "new", n: 99 });
    await tx.update(items, ["i3"], { n: 300 });
    await tx.delete(items, ["i4"]);
    await tx.deleteWhere(items);
  });
  await notes.tx(async (tx) => {
    await tx.put(items, { id: "again", n: 1, tags: { a: 1 } });
    const doc = await notes.documents.find({ kind: "note", key: "k" });
    await tx.documents.change(doc.id, [{ op: "replace", path: "/text", value: "two" }]);
  });
}

async function all(iterable) {
  const out = [];
  for await (const row of iterable) out.push(row);
  return out;
}

// The entry names of a tar, and the manifest's text (the first entry).
function readTar(bytes) {
  const names = [];
  let manifest = null;
  const text = (h, at, n) => new TextDecoder().decode(h.subarray(at, at + n)).replace(/\0[\s\S]*$/, "");
  for (let at = 0; at + 512 <= bytes.length;) {
    const h = bytes.subarray(at, at + 512);
    if (h.every((b) => b === 0)) break;
    const size = parseInt(text(h, 124, 12).trim() || "0", 8);
    const prefix = text(h, 345, 155);
    const name = prefix ? `${prefix}/${text(h, 0, 100)}` : text(h, 0, 100);
    names.push(name);
    if (name.endsWith("manifest.json")) manifest = JSON.parse(new TextDecoder().decode(bytes.subarray(at + 512, at + 512 + size)));
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return { names, manifest };
}

async function codeOf(promise) {
  try {
    await promise;
    return "none";
  } catch (e) {
    return e.code ?? String(e);
  }
}

export class TestSession {
  constructor(ctx) {
    this.ctx = ctx;
    this.store = null;
  }

  // The object's tables that hold snapshots: the catalogue and the copies.
  snapshotTables() {
    return this.ctx.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND (name = '_snapshots' OR name LIKE '\\_snap\\_%' ESCAPE '\\') ORDER BY name")
      .toArray().map((r) => r.name);
  }

  catalogue() {
    if (!this.snapshotTables().includes("_snapshots")) return [];
    return this.ctx.storage.sql.exec("SELECT id, seq FROM _snapshots ORDER BY n").toArray().map((r) => ({ id: r.id, seq: Number(r.seq) }));
  }

  // Snapshot, change, restore, restore again (undo), restore the first again,
  // on a durable store and on a memory store given the same ops; what the
  // owners' adopt hooks, a watch and the outbox saw of the restore.
  async op_cycle() {
    const run = async (options) => {
      const store = await openStore(options);
      const seen = [];
      const notes = store.object({ type: "notes" }, { adopt(seq, ops) { seen.push({ seq, ops }); } });
      const items = notes.table(Items);
      const others = store.object({ type: "others" }, { adopt(seq, ops) { seen.push({ seq, ops, others: true }); } });
      others.table(Other);
      await seed(notes, items);
      const before = await store.fingerprint();
      const snap = await store.snapshot({ label: "seeded" });
      const afterSnapshot = await store.fingerprint();
      await change(notes, items);
      const changed = await store.fingerprint();
      const watched = [];
      notes.watch(items, (ops, seq) => watched.push({ seq, count: ops.length }));
      seen.length = 0;
      const headBefore = store.head;
      const restore = await store.restore();
      const restored = await store.fingerprint();
      const rows = await all(items.rows());
      const note = (await notes.documents.find({ kind: "note", key: "k" }))?.value ?? null;
      // The documents' history: as it was at the snapshot's seq, and gone
      // (not_found, naming the restore) at a seq the restore took back.
      const noteAtSnap = (await notes.documents.find({ kind: "note", key: "k" }, { at: snap.seq }))?.value ?? null;
      const noteTakenBack = await notes.documents.find({ kind: "note", key: "k" }, { at: headBefore }).then(
        (d) => `answered ${JSON.stringify(d?.value ?? null)}`, (e) => `${e.code}: ${e.message}`);
      const adopted = seen.map((s) => ({ seq: s.seq, others: !!s.others, first: s.ops[0], count: s.ops.length }));
      await new Promise((r) => setTimeout(r, 0));
      const watchedRestore = [...watched];
      const record = (await store.outbox.read(restore.seq - 1, 1)).commits[0];
      const undo = await store.restore();
      const undone = await store.fingerprint();
      const noteUndone = (await notes.documents.find({ kind: "note", key: "k" }))?.value ?? null;
      await store.restore(snap.id);
      const again = await store.fingerprint();
      const list = await store.snapshots();
      await store.close();
      return {
        snap, before, afterSnapshot, changed, headBefore, restore, restored, rows, note, noteAtSnap, noteTakenBack, adopted, watched: watchedRestore,
        record: { seq: record.seq, owner: record.owner, first: record.ops[0], count: record.ops.length },
        undo, undone, noteUndone, again, list,
      };
    };
    const durable = await run({ backend: "durable", storage: this.ctx.storage });
    const memory = await run({ backend: "memory" });
    return { durable, memory, tables: this.snapshotTables(), catalogue: this.catalogue() };
  }

  // keepSnapshots: 2 and snapshotEvery: 3, as tests/js/snapshots.test.js.
  async op_keep() {
    const store = await openStore({ backend: "durable", storage: this.ctx.storage, keepSnapshots: 2, snapshotEvery: 3 });
    const notes = store.object({ type: "notes" });
    const items = notes.table(Items);
    await items.count();  // seq 1: the table's record
    const tablesAt = [];
    for (let i = 0; i < 7; i++) {
      await notes.tx(async (tx) => { await tx.put(items, { id: `k${i}`, n: i }); });
      if (store.head === 3) { await store.snapshots(); tablesAt.push({ head: 3, tables: this.snapshotTables() }); }
    }
    const every = await store.snapshots();
    const everyTables = this.snapshotTables();
    await store.snapshot({ label: "mine" });
    const kept = await store.snapshots();
    const keptTables = this.snapshotTables();
    const catalogue = this.catalogue();
    await store.restore(kept[1].id);
    const count = await items.count();
    const afterRestore = await store.snapshots();
    const afterRestoreTables = this.snapshotTables();
    await store.close();
    return { every, everyTables, tablesAt, kept, keptTables, catalogue, count, afterRestore, afterRestoreTables };
  }

  // A store with a snapshot and a change after it; the object is then
  // closed (and workerd restarted over the same persist folder).
  async op_before() {
    const store = await openStore({ backend: "durable", storage: this.ctx.storage });
    const notes = store.object({ type: "notes" });
    const items = notes.table(Items);
    await seed(notes, items);
    const before = await store.fingerprint();
    const snap = await store.snapshot({ label: "kept" });
    await change(notes, items);
    const changed = await store.fingerprint();
    await store.close();
    return { snap, before, changed };
  }

  // After the restart: the list, a restore, its undo and store.at at the
  // snapshot's seq after the outbox below it was trimmed.
  async op_after({ id }) {
    const store = await openStore({ backend: "durable", storage: this.ctx.storage });
    const notes = store.object({ type: "notes" });
    notes.table(Items);
    const listed = await store.snapshots();
    const opened = await store.fingerprint();
    const snap = listed.find((s) => s.id === id);
    await store.outbox.trim(store.head);
    const view = await store.at(snap.seq);
    const atSnapshot = await view.fingerprint();
    const viewRows = await all(view.table("notes/items").rows());
    await view.close();
    await store.restore(id);
    const restored = await store.fingerprint();
    await store.restore();
    const undone = await store.fingerprint();
    await store.close();
    return { listed, opened, atSnapshot, viewRows: viewRows.length, restored, undone };
  }

  // A snapshot changes neither the fingerprint nor the archive: the export
  // names none of its tables, and its import has the same fingerprint.
  async op_exclusion() {
    const store = await openStore({ backend: "durable", storage: this.ctx.storage });
    const notes = store.object({ type: "notes" });
    const items = notes.table(Items);
    await seed(notes, items);
    const exportBefore = readTar(new Uint8Array(await new Response(store.export()).arrayBuffer()));
    const before = await store.fingerprint();
    await store.snapshot({ label: "one" });
    await store.snapshot({ label: "two" });
    const after = await store.fingerprint();
    const bytes = new Uint8Array(await new Response(store.export()).arrayBuffer());
    const exportAfter = readTar(bytes);
    const imported = await importStore(new Blob([bytes]).stream(), { backend: "memory" });
    const importedFingerprint = await imported.fingerprint();
    const importedSnapshots = await imported.snapshots();
    await imported.close();
    await store.close();
    return {
      before, after, importedFingerprint, importedSnapshots,
      exportBefore: { names: exportBefore.names, tables: exportBefore.manifest?.tables },
      exportAfter: { names: exportAfter.names, tables: exportAfter.manifest?.tables },
      tables: this.snapshotTables(),
    };
  }

  // Bad ids and options: the codes on a durable store and on a memory store.
  // A table of 99 columns (the key and 98 ints): snapshot, change one
  // column of one row, restore; the row's values before and after.
  async op_wide() {
    const columns = { id: int() };
    for (let i = 1; i <= 98; i++) columns[`c${i}`] = int();
    const Wide = defineTable("wide", { columns, key: ["id"] });
    const store = await openStore({ backend: "durable", storage: this.ctx.storage });
    try {
      const owner = store.object({ type: "w" });
      const wide = owner.table(Wide);
      const row = { id: 1 };
      for (let i = 1; i <= 98; i++) row[`c${i}`] = i;
      await owner.tx(async (tx) => { await tx.put(wide, row); await tx.put(wide, { ...row, id: 2 }); });
      const snap = await store.snapshot();
      await owner.tx(async (tx) => { await tx.update(wide, [1], { c50: -50 }); await tx.delete(wide, [2]); });
      const changed = await wide.get([1]);
      const restore = await store.restore(snap.id);
      return { changed: changed.c50, restored: (await wide.get([1])).c50, second: (await wide.get([2]))?.c98 ?? null, seq: restore.seq };
    } finally {
      await store.close();
    }
  }

  async op_bad() {
    const codes = async (options) => {
      const store = await openStore(options);
      const notes = store.object({ type: "notes" });
      const items = notes.table(Items);
      await notes.tx((tx) => tx.put(items, { id: "a", n: 1 }));
      const out = {
        none: await codeOf(store.restore()),
      };
      await store.snapshot();
      Object.assign(out, {
        unknown: await codeOf(store.restore("nope")),
        number: await codeOf(store.restore(42)),
        empty: await codeOf(store.restore("")),
        label: await codeOf(store.snapshot({ label: 3 })),
        options: await codeOf(store.snapshot(null)),
        marker: await codeOf(store.commit([{ op: "restore", snapshot: "x", seq: 0 }])),
        view: await codeOf(store.at(store.head + 5)),
        listed: (await store.snapshots()).length,
      });
      await store.close();
      out.closed = await codeOf(store.snapshot());
      return out;
    };
    const openCodes = {};
    for (const [k, v] of Object.entries({ keep: { keepSnapshots: 0 }, every: { snapshotEvery: -1 } })) {
      openCodes[k] = await codeOf(openStore({ backend: "durable", storage: this.ctx.storage, ...v }));
    }
    return { durable: await codes({ backend: "durable", storage: this.ctx.storage }), memory: await codes({ backend: "memory" }), openCodes };
  }

  async fetch(request) {
    return runOp(this, request);
  }
}

export default objectRouter;
