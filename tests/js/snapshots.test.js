// Snapshots and restore through the public package in Node (memory and a
// sqlite file): snapshot -> change -> restore -> restore again (undo) gives
// back the same fingerprints; a restore is one commit that owners' adopt
// hooks, watches and a replica following the outbox all see; documents come
// back too; keepSnapshots and snapshotEvery; the list survives a reopen; bad
// ids and a hand-made restore op are refused.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";

import { defineTable, deleteStore, importStore, int, json, openReplica, openStore, str } from "../../js/index.js";
import { rejectsWith, tempDir } from "./helpers.js";

const Items = defineTable("items", {
  columns: { id: str(), n: int(), tags: json().optional() },
  key: ["id"],
});
const Other = defineTable("other", { columns: { id: int(), v: str() }, key: ["id"] });

let dir;
let counter = 0;
function sqliteOptions() {
  dir ??= tempDir("onestore-snapshots-");
  return { backend: "sqlite", path: join(dir, `s${counter++}.sqlite`) };
}

const backends = [
  ["memory", () => ({ backend: "memory" })],
  ["a sqlite file", sqliteOptions],
];

async function seed(store) {
  const notes = store.object({ type: "notes" });
  const items = notes.table(Items);
  await notes.tx(async (tx) => {
    for (let i = 0; i < 20; i++) await tx.put(items, { id: `i${i}`, n: i, tags: i % 2 ? ["odd"] : null });
  });
  return { notes, items };
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
  });
}

for (const [label, options] of backends) {
  describe(`snapshots on ${label}`, () => {
    // A call's place in the commit order is where it was called, however
    // long its files take: on a sqlite file a tx asked for right after
    // restore() committed first and was then undone by the restore (its
    // promise resolved), and a snapshot() held a tx asked for after it.
    test("a tx asked for right after snapshot() or restore() comes after it in the commit order", async () => {
      const store = await openStore(options());
      const { notes, items } = await seed(store);
      const snapping = store.snapshot();
      const b = notes.tx(async (tx) => { await tx.put(items, { id: "b", n: 2 }); });
      const [snap] = await Promise.all([snapping, b]);
      const view = await store.at(snap.seq);
      assert.equal(await view.table(items.name).get(["b"]), undefined, "the snapshot is from before b");
      await view.close();
      const restoring = store.restore(snap.id);
      const c = notes.tx(async (tx) => { await tx.put(items, { id: "c", n: 3 }); });
      const [r] = await Promise.all([restoring, c]);
      assert.equal(r.seq, store.head - 1, "the restore, then c");
      assert.deepEqual(await items.get(["c"]), { id: "c", n: 3, tags: null });
      assert.equal(await items.get(["b"]), undefined);
      await store.close();
    });

    // A restore takes its place in the commit order at its call, then
    // prepares its files; an export or a store.read begun meanwhile holds
    // the queue. The restore's commit ran anyway: the export's manifest had
    // the digests of before it and its pages the rows of after it (an
    // archive its own import refused), and one store.read saw both states.
    test("a restore asked for before an export or a store.read commits after them: both see one state", async () => {
      const store = await openStore(options());
      const { notes, items } = await seed(store);
      const snap = await store.snapshot();
      await notes.tx(async (tx) => {
        for (let i = 0; i < 20; i++) await tx.update(items, [`i${i}`], { n: 1000 + i });
      });
      const before = await store.fingerprint();
      const restoring = store.restore(snap.id);
      const reader = store.export().getReader();
      const chunks = [];
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
        await new Promise((r) => setTimeout(r, 1));  // a slow reader: the restore's files are ready long before the end
      }
      const r = await restoring;
      assert.equal(r.seq, store.head, "the restore committed after the export");
      const copy = await importStore(new Uint8Array(Buffer.concat(chunks)), { backend: "memory" });
      assert.equal(await copy.fingerprint(), before, "the archive is the store at the export's call, before the restore");
      await copy.close();
      assert.equal((await items.get(["i3"])).n, 3, "the restore then took effect");

      // The same with a store.read that spans a macrotask.
      await notes.tx(async (tx) => { await tx.update(items, ["i3"], { n: 77 }); });
      const snap2 = await store.snapshot();
      await notes.tx(async (tx) => { await tx.update(items, ["i3"], { n: 88 }); });
      const restoring2 = store.restore(snap2.id);
      const seen = await store.read(async (rd) => {
        const first = (await rd.get(items, ["i3"])).n;
        await new Promise((res) => setTimeout(res, 50));
        return [first, (await rd.get(items, ["i3"])).n];
      });
      assert.deepEqual(seen, [88, 88], "one store.read sees one state");
      await restoring2;
      assert.equal((await items.get(["i3"])).n, 77);
      await store.close();
    });

    // The documents' tables, made after the snapshot, stay (emptied) after
    // the restore: their table lines changed the fingerprint, against the
    // promise that a restore gives back the snapshot's.
    test("a restore to a snapshot from before the first document gives back its fingerprint", async () => {
      const store = await openStore(options());
      const { notes, items } = await seed(store);
      const snap = await store.snapshot();
      const fingerprint = await store.fingerprint();
      const id = await notes.tx((tx) => tx.documents.create({ kind: "note" }, { text: "later" }));
      await change(notes, items);
      await store.restore(snap.id);
      assert.equal(await store.fingerprint(), fingerprint);
      assert.equal(await notes.documents.load(id), undefined);
      // Documents go on from there, and the fingerprint with them.
      await notes.tx((tx) => tx.documents.create({ kind: "note" }, { text: "again" }));
      assert.notEqual(await store.fingerprint(), fingerprint);
      await store.close();
    });

    // restore() means the newest snapshot when it is called; a snapshot
    // asked for just before it, taken first, may drop that one
    // (keepSnapshots): the refusal names it, where it said the store had
    // no snapshot yet while snapshots() listed one.
    test("a restore() whose newest snapshot was dropped before its turn names that snapshot", async () => {
      const store = await openStore({ ...options(), keepSnapshots: 1 });
      const { notes, items } = await seed(store);
      const a = await store.snapshot({ label: "A" });
      await change(notes, items);
      const b = store.snapshot({ label: "B" });
      const restoring = store.restore();
      assert.equal((await b).label, "B");
      await rejectsWith(restoring, "invalid/args", [a.id, "dropped by keepSnapshots (1)"]);
      assert.deepEqual((await store.snapshots()).map((s) => s.label), ["B"]);
      assert.equal((await store.restore()).snapshot, (await b).id, "called now, restore() takes B");
      await store.close();
    });

    // Within one millisecond, an id that keepSnapshots let go was given
    // again to a later snapshot of another state (memory).
    test("snapshot ids taken in one millisecond are never given twice, even once keepSnapshots dropped one", async () => {
      const store = await openStore({ ...options(), keepSnapshots: 1 });
      const { notes, items } = await seed(store);
      const realNow = Date.now;
      const at = realNow();
      Date.now = () => at;  // every snapshot below in one millisecond
      try {
        const a = await store.snapshot();
        const b = await store.snapshot();  // a is dropped
        await notes.tx((tx) => tx.put(items, { id: "x", n: 1 }));
        const c = await store.snapshot();  // b is dropped
        assert.equal(new Set([a.id, b.id, c.id]).size, 3, `${a.id} ${b.id} ${c.id}`);
        assert.deepEqual((await store.snapshots()).map((x) => x.id), [c.id]);
      } finally {
        Date.now = realNow;
      }
      await store.close();
    });

    test("snapshot, change, restore and restore again give back each fingerprint", async () => {
      const store = await openStore(options());
      const { notes, items } = await seed(store);
      const before = await store.fingerprint();
      const snap = await store.snapshot({ label: "seeded" });
      assert.equal(snap.seq, store.head);
      assert.equal(snap.label, "seeded");
      assert.equal(typeof snap.id, "string");
      assert.ok(Number.isSafeInteger(snap.at));

      await change(notes, items);
      const changed = await store.fingerprint();
      assert.notEqual(changed, before);
      const headBefore = store.head;

      const r = await store.restore();  // the newest: "seeded"
      assert.equal(r.snapshot, snap.id);
      assert.equal(r.seq, headBefore + 1, "a restore is a commit with the next seq");
      assert.equal(store.head, headBefore + 1);
      assert.equal(await store.fingerprint(), before);
      assert.deepEqual(await items.get(["i3"]), { id: "i3", n: 3, tags: ["odd"] });
      assert.equal(await items.get(["new"]), undefined);
      assert.equal(await items.count(), 20);

      const undo = await store.restore();  // the newest now: taken before the restore
      assert.equal(undo.snapshot, r.undo);
      assert.equal(await store.fingerprint(), changed);
      assert.equal(await items.count(), 1);

      await store.restore(snap.id);
      assert.equal(await store.fingerprint(), before);
      await store.close();
    });

    test("snapshots() lists them newest first, with the restores' own", async () => {
      const store = await openStore(options());
      const { notes, items } = await seed(store);
      const a = await store.snapshot({ label: "a" });
      await notes.tx(async (tx) => { await tx.put(items, { id: "x", n: 1 }); });
      const b = await store.snapshot();
      const list = await store.snapshots();
      assert.deepEqual(list.map((s) => s.id), [b.id, a.id]);
      assert.deepEqual(list[1], a);
      assert.equal(list[0].label, null);
      const { undo } = await store.restore(a.id);
      const after = await store.snapshots();
      assert.equal(after[0].id, undo);
      assert.equal(after[0].seq, a.seq + 1, "taken at the head before the restore");
      assert.match(after[0].label, /before restore/);
      await store.close();
    });

    test("a restore is one commit that adopt hooks and watches see, with a marker op first", async () => {
      const store = await openStore(options());
      const seen = [];
      const notes = store.object({ type: "notes" }, { adopt(seq, ops) { seen.push({ seq, ops }); } });
      const items = notes.table(Items);
      const others = store.object({ type: "others" }, { adopt(seq, ops) { seen.push({ seq, ops, others: true }); } });
      others.table(Other);
      await notes.tx(async (tx) => { await tx.put(items, { id: "a", n: 1 }); await tx.put(items, { id: "b", n: 2 }); });
      const snap = await store.snapshot();
      await notes.tx(async (tx) => { await tx.put(items, { id: "c", n: 3 }); await tx.update(items, ["a"], { n: 10 }); });
      const watched = [];
      notes.watch(items, (ops, seq) => watched.push({ seq, ops }));
      seen.length = 0;

      const { seq } = await store.restore(snap.id);
      const mine = seen.find((s) => !s.others);
      assert.equal(mine.seq, seq);
      assert.deepEqual(mine.ops[0], { op: "restore", snapshot: snap.id, seq: snap.seq, undo: mine.ops[0].undo });
      const rest = mine.ops.slice(1).sort((x, y) => x.op.localeCompare(y.op));
      assert.deepEqual(rest, [
        { op: "delete", table: "notes/items", key: ["c"] },
        { op: "put", table: "notes/items", row: { id: "a", n: 1, tags: null } },
      ]);
      const theirs = seen.find((s) => s.others);
      assert.deepEqual(theirs.ops, [mine.ops[0]], "every owner's hook sees the restore, with its own tables' ops");
      await new Promise((r) => setTimeout(r, 0));
      assert.equal(watched.length, 1);
      assert.equal(watched[0].seq, seq);
      assert.equal(watched[0].ops.length, 2);

      const batch = await store.outbox.read(seq - 1, 1);
      assert.equal(batch.commits[0].seq, seq);
      assert.equal(batch.commits[0].owner, "store");
      assert.equal(batch.commits[0].ops[0].op, "restore");
      await store.close();
    });

    test("a replica that follows the outbox matches after a restore and its undo", async () => {
      const store = await openStore(options());
      const { notes, items } = await seed(store);
      await notes.tx(async (tx) => { await tx.documents.create({ kind: "note", key: "k" }, { text: "one" }); });
      const snap = await store.snapshot();
      await change(notes, items);
      await notes.tx(async (tx) => {
        const doc = await notes.documents.find({ kind: "note", key: "k" });
        await tx.documents.change(doc.id, [{ op: "replace", path: "/text", value: "two" }]);
        await tx.documents.create({ kind: "note", key: "later" }, 2);
      });
      const replica = await openReplica({ backend: "memory" });
      const follow = async () => {
        const batch = await store.outbox.read(replica.head, 1000);
        if (batch.commits.length > 0) await replica.applyBatch(batch);
        assert.equal(await replica.fingerprint(), await store.fingerprint());
      };
      await follow();
      await store.restore(snap.id);
      assert.deepEqual((await notes.documents.find({ kind: "note", key: "k" })).value, { text: "one" });
      assert.equal(await notes.documents.find({ kind: "note", key: "later" }), undefined);
      await follow();
      await store.restore();
      assert.deepEqual((await notes.documents.find({ kind: "note", key: "k" })).value, { text: "two" });
      await follow();
      await replica.close();
      await store.close();
    });

    test("a replica takes a document's creation and a later restore in one batch", async () => {
      // The first document op of a batch creates _documents and _deltas in
      // the replica; a restore later in the same batch puts their rows back
      // before the replica's catalog has the tables (it had none before).
      const store = await openStore(options());
      const notes = store.object({ type: "notes" });
      let id;
      await notes.tx(async (tx) => { id = await tx.documents.create({ kind: "note" }, { v: 1 }); });
      const snap = await store.snapshot();
      await notes.tx(async (tx) => { await tx.documents.change(id, [{ op: "replace", path: "/v", value: 2 }]); });
      await store.restore(snap.id);
      const batch = await store.outbox.read(0, 100);
      assert.equal(batch.commits.length, 3);
      for (const replicaOptions of [{ backend: "memory" }, sqliteOptions()]) {
        const replica = await openReplica(replicaOptions);
        assert.deepEqual(await replica.applyBatch(batch), { head: 3, applied: 3 });
        assert.equal(await replica.fingerprint(), await store.fingerprint());
        await replica.close();
      }
      await store.close();
    });

    test("keepSnapshots keeps the newest N and snapshotEvery takes one every K commits", async () => {
      const store = await openStore({ ...options(), keepSnapshots: 2, snapshotEvery: 3 });
      const notes = store.object({ type: "notes" });
      const items = notes.table(Items);  // seq 1
      for (let i = 0; i < 7; i++) await notes.tx(async (tx) => { await tx.put(items, { id: `k${i}`, n: i }); });
      // head 8: taken after seqs 3 and 6
      const list = await store.snapshots();
      assert.deepEqual(list.map((s) => s.seq), [6, 3]);
      await store.snapshot({ label: "mine" });
      const kept = await store.snapshots();
      assert.deepEqual(kept.map((s) => s.seq), [8, 6]);
      assert.equal(kept[0].label, "mine");
      await store.restore(kept[1].id);
      assert.equal(await items.count(), 5);
      assert.equal((await store.snapshots()).length, 2);
      await store.close();
    });

    test("a restore across an added column fills its default; across a renamed or dropped one it is refused and changes nothing", async () => {
      const table = { op: "table", table: "a/t", version: 1, key: ["id"], indexes: {}, columns: { id: { type: "str" }, x: { type: "int", optional: true } } };
      for (const [label, alter] of [["rename", { rename: { x: "x2" } }], ["drop", { drop: ["x"] }], ["add", { add: { y: { type: "str", default: "d" } } }]]) {
        const store = await openStore(options());
        await store.commit([table, { op: "put", table: "a/t", row: { id: "p", x: 1 } }]);
        const snap = await store.snapshot();
        await store.commit([{ op: "alter", table: "a/t", version: 2, ...alter }]);
        await store.commit([{ op: "delete", table: "a/t", key: ["p"] }]);
        const head = store.head;
        const fingerprint = await store.fingerprint();
        const count = (await store.snapshots()).length;
        if (label === "add") {
          await store.restore(snap.id);
          assert.deepEqual((await store.log({ seq: store.head })).ops.at(-1).row, { id: "p", x: 1, y: "d" });
        } else {
          await rejectsWith(store.restore(snap.id), "invalid/args", ['"a/t" (version 1) has column "x"', "renamed or dropped", "Nothing was changed"]);
          assert.equal(store.head, head, label);
          assert.equal(await store.fingerprint(), fingerprint);
          assert.equal((await store.snapshots()).length, count, "no undo snapshot is left behind");
        }
        await store.close();
      }
    });

    test("bad ids, a store without snapshots and a hand-made restore op are refused", async () => {
      const store = await openStore(options());
      await rejectsWith(store.restore(), "invalid/args", ["no snapshot yet"]);
      await rejectsWith(store.restore("nope"), "invalid/args", ['"nope"', "store.snapshots()"]);
      await rejectsWith(store.restore(42), "invalid/args", ["42"]);
      await rejectsWith(store.snapshot({ label: 3 }), "invalid/args", ["label"]);
      await rejectsWith(store.snapshot(null), "invalid/args", ["label"]);
      await rejectsWith(store.commit([{ op: "restore", snapshot: "x", seq: 0 }]), "invalid/args", ["store.restore only"]);
      await store.close();
      await rejectsWith(store.snapshot(), "closed");
      await rejectsWith(openStore({ ...options(), keepSnapshots: 0 }), "invalid/args", ["keepSnapshots"]);
      await rejectsWith(openStore({ ...options(), snapshotEvery: -1 }), "invalid/args", ["snapshotEvery"]);
    });
  });
}

describe("snapshots of a sqlite file", () => {
  test("are files in <file>.snapshots/, removed when no longer kept and by deleteStore", async () => {
    const o = sqliteOptions();
    const store = await openStore({ ...o, keepSnapshots: 1 });
    await seed(store);
    const a = await store.snapshot();
    const folder = `${o.path}.snapshots`;
    assert.deepEqual(readdirSync(folder).sort(), [`${a.id}.json`, `${a.id}.sqlite`]);
    const b = await store.snapshot();
    assert.deepEqual(readdirSync(folder).sort(), [`${b.id}.json`, `${b.id}.sqlite`]);
    await store.close();
    await deleteStore(o);
    assert.ok(!existsSync(folder));
  });

  test("what a crash leaves in the folder (a copy with no .json, a .json cut in its write) is removed at the next open", async () => {
    const o = sqliteOptions();
    const store = await openStore(o);
    await seed(store);
    const a = await store.snapshot();
    await store.close();
    const folder = `${o.path}.snapshots`;
    // A kill between the copy and its .json, and one inside the .json's
    // write (save() writes .tmp-<id>.json, then renames it).
    copyFileSync(join(folder, `${a.id}.sqlite`), join(folder, "20261207-010101.001.sqlite"));
    writeFileSync(join(folder, ".tmp-20261207-010101.002.json"), '{"id":"20261207-010101.002","se');
    const again = await openStore(o);
    try {
      assert.deepEqual(await again.snapshots(), [a]);
      assert.deepEqual(readdirSync(folder).sort(), [`${a.id}.json`, `${a.id}.sqlite`]);
    } finally {
      await again.close();
    }
  });

  test("snapshotEvery's snapshots are listed as each is taken: keepSnapshots holds in a loop of commits, and they survive a close and a SIGKILL", { timeout: 60_000 }, async () => {
    const Rows = defineTable("rows", { columns: { id: int(), pad: str() }, key: ["id"] });
    const o = sqliteOptions();
    const folder = `${o.path}.snapshots`;
    let store = await openStore({ ...o, snapshotEvery: 5, keepSnapshots: 2 });
    let owner = store.object({ type: "w" });
    for (let i = 0; i < 40; i++) await owner.tx(async (tx) => { await tx.put(owner.table(Rows), { id: i, pad: "x".repeat(2000) }); });
    // Read at once, with no turn of the event loop: before, the folder held
    // every copy taken (8, past keepSnapshots) and no .json yet.
    const names = readdirSync(folder).sort();
    assert.equal(names.filter((n) => n.endsWith(".sqlite")).length, 2, names.join(" "));
    assert.equal(names.filter((n) => n.endsWith(".json")).length, 2, names.join(" "));
    const kept = (await store.snapshots()).map((snap) => snap.seq);
    assert.equal(kept.length, 2);
    // Closed right after its commits: before, the reopen listed none and
    // deleted the copies (their .json were still being written).
    for (let i = 40; i < 43; i++) await owner.tx(async (tx) => { await tx.put(owner.table(Rows), { id: i, pad: "" }); });
    const listed = (await store.snapshots()).map((snap) => snap.seq);
    await store.close();
    store = await openStore({ ...o, snapshotEvery: 5, keepSnapshots: 2 });
    assert.deepEqual((await store.snapshots()).map((snap) => snap.seq), listed);
    await store.close();
    // A process killed while it commits keeps every snapshot it took.
    const child = spawn(process.execPath, ["--input-type=module", "-e", `
      import { defineTable, int, openStore, str } from ${JSON.stringify(new URL("../../js/index.js", import.meta.url).href)};
      const Rows = defineTable("rows", { columns: { id: int(), pad: str() }, key: ["id"] });
      const store = await openStore({ backend: "sqlite", path: ${JSON.stringify(o.path)}, snapshotEvery: 7, keepSnapshots: 3 });
      const owner = store.object({ type: "w" });
      for (let i = 1000; ; i++) {
        await owner.tx(async (tx) => { await tx.put(owner.table(Rows), { id: i, pad: "y" }); });
        process.stdout.write(store.head + "\\n");
      }`], { stdio: ["ignore", "pipe", "inherit"] });
    let last = 0;
    await new Promise((resolve) => {
      child.stdout.on("data", (d) => {
        last = Number(String(d).trim().split("\n").at(-1));
        if (last >= 100) resolve();
      });
      child.on("exit", resolve);
    });
    child.kill("SIGKILL");
    await new Promise((resolve) => child.on("exit", resolve));
    store = await openStore(o);
    const after = await store.snapshots();
    assert.ok(after.length >= 2, `snapshots after the kill at head ${last}: ${JSON.stringify(after)}`);
    for (const snap of after) {
      const view = await store.at(snap.seq);
      assert.equal(view.seq, snap.seq);
      await view.close();
    }
    await store.close();
  });

  test("the list survives a reopen, and a table declared after the snapshot comes back empty", async () => {
    const o = sqliteOptions();
    const store = await openStore(o);
    const notes = store.object({ type: "notes" });
    const items = notes.table(Items);
    await notes.tx(async (tx) => { await tx.put(items, { id: "x", n: 1 }); });
    const fp = await store.fingerprint();
    const snap = await store.snapshot({ label: "one" });
    await store.close();
    const again = await openStore(o);
    assert.deepEqual(await again.snapshots(), [snap], "read back from <file>.snapshots/");
    const notes2 = again.object({ type: "notes" });
    const items2 = notes2.table(Items);
    const later = notes2.table(Other);
    await notes2.tx(async (tx) => { await tx.put(items2, { id: "x", n: 5 }); await tx.put(later, { id: 1, v: "v" }); });
    await again.restore(snap.id);
    assert.deepEqual(await items2.get(["x"]), { id: "x", n: 1, tags: null });
    assert.equal(await later.count(), 0);
    assert.notEqual(await again.fingerprint(), fp, "the later table stays (empty): its schema is in the fingerprint");
    await again.close();
  });

  test("restore after reopening the store, from the snapshot's file", async () => {
    const o = sqliteOptions();
    let store = await openStore(o);
    const { notes, items } = await seed(store);
    const fp = await store.fingerprint();
    const snap = await store.snapshot();
    await change(notes, items);
    await store.close();
    store = await openStore(o);
    await store.restore(snap.id);
    assert.equal(await store.fingerprint(), fp);
    await store.close();
  });

  test("a snapshot whose copy was deleted by hand is not restored from an empty store: not_found, and no row changes", async () => {
    const { rmSync } = await import("node:fs");
    const o = sqliteOptions();
    let store = await openStore(o);
    const { notes, items } = await seed(store);
    const snap = await store.snapshot();
    await change(notes, items);
    await store.close();
    const copy = join(`${o.path}.snapshots`, `${snap.id}.sqlite`);
    assert.ok(existsSync(copy));
    rmSync(copy);
    store = await openStore(o);
    const head = store.head;
    const fp = await store.fingerprint();
    await rejectsWith(store.restore(snap.id), "not_found", [snap.id, copy, "is gone"]);
    await rejectsWith(store.at(snap.seq), "not_found", [copy]);
    assert.equal(store.head, head, "nothing was committed");
    assert.equal(await store.fingerprint(), fp);
    assert.ok(!existsSync(copy), "no empty store was made in its place");
    await store.close();
  });

  // A store made where an earlier store's file was removed by hand (its
  // folders left) listed that store's snapshots as its own: store.at read
  // the other store's rows as its past.
  test("a new store where an earlier store's file was removed by hand does not take its snapshots: they are set aside, kept", async () => {
    const { rmSync } = await import("node:fs");
    const { listStores } = await import("../../js/index.js");
    const o = sqliteOptions();
    const old = await openStore(o);
    const { items } = await seed(old);
    const snap = await old.snapshot();
    await old.close();
    rmSync(o.path);
    const fresh = await openStore(o);
    assert.deepEqual(await fresh.snapshots(), [], "none of the earlier store's is listed");
    const aside = readdirSync(join(o.path, "..")).filter((n) => n.startsWith(`${o.path.split("/").pop()}.snapshots.orphaned-`));
    assert.equal(aside.length, 1, "the folder was set aside");
    assert.ok(existsSync(join(o.path, "..", aside[0], `${snap.id}.sqlite`)), "with its copy");
    const t = fresh.object({ type: "notes" }).table(items.def);
    await fresh.object({ type: "notes" }).tx(async (tx) => { await tx.put(t, { id: "mine", n: 1 }); });
    const view = await fresh.at(snap.seq);
    assert.deepEqual((await view.table(t.name).page(undefined, 100)).rows.map((r) => r.id), ["mine"], "its past is its own");
    await view.close();
    assert.ok((await listStores({ backend: "sqlite", dir: join(o.path, "..") })).some((st) => st.path === o.path));
    await fresh.close();
  });

  // SQLite opens a file of 0 bytes as an empty database: the restore took
  // it for a snapshot with no rows and deleted every row of the store.
  test("a snapshot whose copy was cut to 0 bytes outside the store is refused with storage_failed, and no row changes", async () => {
    const { truncateSync } = await import("node:fs");
    const o = sqliteOptions();
    const store = await openStore(o);
    const { notes, items } = await seed(store);
    const snap = await store.snapshot();
    await change(notes, items);
    truncateSync(join(`${o.path}.snapshots`, `${snap.id}.sqlite`), 0);
    const head = store.head;
    const fp = await store.fingerprint();
    await rejectsWith(store.restore(snap.id), "storage_failed", [`holds seq 0, not seq ${snap.seq}`, "outside the store"]);
    await rejectsWith(store.at(snap.seq), "storage_failed", [snap.id, `holds seq 0, not seq ${snap.seq}`]);
    assert.equal(store.head, head, "nothing was committed");
    assert.equal(await store.fingerprint(), fp);
    await notes.tx(async (tx) => { await tx.put(items, { id: "after", n: 1 }); });
    assert.equal(store.head, head + 1, "the store goes on committing");
    await store.close();
  });
});
