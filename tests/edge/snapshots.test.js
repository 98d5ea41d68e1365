// Snapshots of a durable store inside real workerd (copies of its tables in
// the Durable Object's own SQLite, js/snapshots-durable.js): snapshot ->
// change -> restore -> restore again (undo) gives back each fingerprint, the
// same as a memory store given the same ops, and the restore is one commit
// that adopt hooks, watches and the outbox see; keepSnapshots drops the
// oldest with their copies; snapshotEvery takes one every K commits; the
// snapshots survive a restart of workerd over the same storage (restore and
// store.at from them); they are in neither the fingerprint nor an export;
// bad ids and options get the codes a memory store gives.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { startWorkerd } from "./harness.js";

const script = "snapshots-worker.js";
let workerd;
before(async () => { workerd = await startWorkerd({ script }); });
after(async () => { await workerd?.dispose(); });

let counter = 0;
const fresh = (label) => `${label}-${counter++}`;

describe("snapshots of a durable store", () => {
  test("snapshot, change, restore and restore again give back each fingerprint, as on a memory store", async () => {
    const { durable: d, memory: m, tables, catalogue } = await workerd.call(fresh("cycle"), "cycle");
    assert.equal(d.snap.seq, d.headBefore - 2, "taken at the head after the seed");
    assert.equal(d.snap.label, "seeded");
    assert.equal(d.afterSnapshot, d.before, "a snapshot changes no fingerprint");
    assert.notEqual(d.changed, d.before);
    assert.equal(d.restore.snapshot, d.snap.id);
    assert.equal(d.restore.seq, d.headBefore + 1, "a restore is a commit with the next seq");
    assert.equal(d.restored, d.before);
    assert.equal(d.rows.length, 20);
    assert.deepEqual(d.rows.find((r) => r.id === "i3"), { id: "i3", n: 3, tags: ["odd"] });
    assert.deepEqual(d.note, { text: "one" }, "the documents come back too");
    for (const s of [d, m]) {
      assert.deepEqual(s.noteAtSnap, { text: "one" });
      assert.match(s.noteTakenBack, new RegExp(`^not_found: .*at seq ${s.headBefore} is gone: the restore at seq ${s.restore.seq} took it back to its snapshot of seq ${s.snap.seq}`));
    }
    assert.equal(d.undo.snapshot, d.restore.undo, "restore() again restores the snapshot taken before the first");
    assert.equal(d.undone, d.changed);
    assert.deepEqual(d.noteUndone, { text: "two" });
    assert.equal(d.again, d.before);
    // Equal content, equal fingerprints: the durable store's states are the memory store's.
    for (const k of ["before", "changed", "restored", "undone", "again"]) assert.equal(d[k], m[k], k);
    assert.deepEqual(d.rows, m.rows);

    // Every owner's adopt hook saw the restore, the marker op first.
    assert.deepEqual(d.adopted.map((a) => [a.seq, a.others]), [[d.restore.seq, false], [d.restore.seq, true]]);
    assert.deepEqual(d.adopted[0].first, { op: "restore", snapshot: d.snap.id, seq: d.snap.seq, undo: d.restore.undo });
    assert.equal(d.adopted[1].count, 1, "an owner with no changed table sees the marker only");
    assert.deepEqual(d.adopted.map((a) => a.count), m.adopted.map((a) => a.count));
    assert.deepEqual(d.watched, [{ seq: d.restore.seq, count: d.adopted[0].count - 1 }]);
    assert.equal(d.record.seq, d.restore.seq);
    assert.equal(d.record.owner, "store");
    assert.deepEqual(d.record.first, d.adopted[0].first);
    assert.equal(d.record.count, m.record.count, "the outbox record holds the same ops as on memory");

    // seeded + the three taken before each restore, each with a row and copies.
    assert.equal(d.list.length, 4);
    assert.deepEqual(catalogue.map((c) => c.id).sort(), d.list.map((s) => s.id).sort());
    for (const { id } of d.list) assert.ok(tables.some((t) => t.startsWith(`_snap_${id}_`)), `copies of ${id}`);
  });

  test("keepSnapshots drops the oldest with their copies; snapshotEvery takes one every K commits", async () => {
    const r = await workerd.call(fresh("keep"), "keep");
    // head 8: taken after seqs 3 and 6
    assert.deepEqual(r.every.map((s) => s.seq), [6, 3]);
    assert.match(r.every[0].label, /every 3 commits/);
    assert.deepEqual(r.kept.map((s) => s.seq), [8, 6]);
    assert.equal(r.kept[0].label, "mine");
    const copiesOf = (tables, id) => tables.filter((t) => t.startsWith(`_snap_${id}_`));
    const oldest = r.every[1].id;
    assert.ok(copiesOf(r.tablesAt[0].tables, oldest).length > 0, "the first one's copies existed");
    assert.ok(copiesOf(r.everyTables, oldest).length > 0);
    assert.deepEqual(copiesOf(r.keptTables, oldest), [], "the dropped one's copies are gone");
    assert.deepEqual(r.catalogue.map((c) => c.id), r.kept.map((s) => s.id).reverse());
    assert.deepEqual(r.keptTables.filter((t) => t !== "_snapshots").map((t) => t.replace(/_\d+$/, "")).sort(),
      r.kept.map((s) => `_snap_${s.id}`).sort(), "copies of exactly the kept two");
    assert.equal(r.count, 5, "the restore gave back the rows at seq 6");
    assert.equal(r.afterRestore.length, 2);
    for (const t of r.afterRestoreTables.filter((x) => x !== "_snapshots")) {
      assert.ok(r.afterRestore.some((s) => t.startsWith(`_snap_${s.id}_`)), `${t} belongs to a kept snapshot`);
    }
  });

  test("the snapshots survive a restart of workerd: listed, read by store.at past a trimmed outbox, restored and undone", async () => {
    const persist = mkdtempSync(join(tmpdir(), "onestore-edge-snap-"));
    try {
      const first = await startWorkerd({ persist, script });
      let b;
      try {
        b = await first.call("kept", "before");
      } finally {
        await first.dispose();
      }
      const second = await startWorkerd({ persist, script });
      try {
        const a = await second.call("kept", "after", { id: b.snap.id });
        assert.deepEqual(a.listed, [b.snap]);
        assert.equal(a.opened, b.changed);
        assert.equal(a.atSnapshot, b.before, "store.at(the snapshot's seq) reads the copies");
        assert.equal(a.viewRows, 20);
        assert.equal(a.restored, b.before);
        assert.equal(a.undone, b.changed);
      } finally {
        await second.dispose();
      }
    } finally {
      rmSync(persist, { recursive: true, force: true });
    }
  });

  test("snapshots are in neither the fingerprint nor an export", async () => {
    const r = await workerd.call(fresh("exclusion"), "exclusion");
    assert.equal(r.after, r.before);
    assert.equal(r.importedFingerprint, r.before);
    assert.deepEqual(r.importedSnapshots, []);
    assert.ok(r.tables.filter((t) => t.startsWith("_snap_")).length >= 2, "the copies exist");
    assert.deepEqual(r.exportAfter.names, r.exportBefore.names, "no entry more after two snapshots");
    assert.deepEqual(r.exportAfter.tables.map((t) => t.name), r.exportBefore.tables.map((t) => t.name));
    assert.ok(!r.exportAfter.tables.some((t) => t.name.startsWith("_snap")));
  });

  test("a table of 99 columns restores (its rows compared with their copies inside an SQLite that allows an expression depth of 100)", async () => {
    const r = await workerd.call(fresh("wide"), "wide");
    assert.deepEqual({ changed: r.changed, restored: r.restored, second: r.second }, { changed: -50, restored: 50, second: 98 });
  });

  test("bad ids and options get the codes a memory store gives", async () => {
    const r = await workerd.call(fresh("bad"), "bad");
    assert.deepEqual(r.durable, r.memory);
    assert.deepEqual(r.durable, {
      none: "invalid/args", unknown: "invalid/args", number: "invalid/args", empty: "invalid/args",
      label: "invalid/args", options: "invalid/args", marker: "invalid/args", view: "invalid/args",
      listed: 1, closed: "closed",
    });
    assert.deepEqual(r.openCodes, { keep: "invalid/args", every: "invalid/args" });
  });
});
