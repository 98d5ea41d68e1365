// Snapshots of OPFS stores in real Chromium (pages/opfs.html's worker): a
// snapshot is a copy of the database in the store's OPFS folder
// (snapshots/<id>.sqlite and .json); snapshot, change, restore and restore
// again give back each fingerprint; the list survives a reopen (and a
// restore after it reads the copy); keepSnapshots removes the files of the
// snapshots it drops; a restore from a copy found empty fails and changes
// nothing; an empty .json a crash left is removed at the next open; snapshotEvery takes one at each K-th seq exactly, with commits
// queued behind it, and keepSnapshots prunes them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { startHarness, openTab, call, callFails } from "./harness.js";

const fp = async (page) => (await call(page, "fingerprint")).fingerprint;

test("an OPFS store's snapshot, change, restore and restore again give back each fingerprint, and a reopen keeps the list", async () => {
  const h = await startHarness();
  try {
    const a = await openTab(h);
    await call(a, "open", { name: "snaps" });
    await call(a, "put", { id: "x", n: 1 });
    await call(a, "put", { id: "y", n: 2 });
    const first = await fp(a);
    const snap = await call(a, "snapshot", { label: "two rows" });
    assert.equal(snap.seq, 3);
    assert.equal(snap.label, "two rows");

    await call(a, "put", { id: "x", n: 10 });
    await call(a, "put", { id: "z", n: 3 });
    const changed = await fp(a);
    assert.notEqual(changed, first);

    const r1 = await call(a, "restore", { id: snap.id });
    assert.equal(r1.snapshot, snap.id);
    assert.equal(await fp(a), first);
    assert.deepEqual((await call(a, "rows")).sort(), ["x", "y"]);

    // The restore took a snapshot of the changed state first: back to it.
    const r2 = await call(a, "restore", { id: r1.undo });
    assert.equal(await fp(a), changed);
    assert.deepEqual((await call(a, "rows")).sort(), ["x", "y", "z"]);

    // A view at a seq at or after the snapshot starts from its copy.
    const rowsAtSnapshot = await call(a, "rowsAt", { seq: snap.seq });
    assert.deepEqual(rowsAtSnapshot, [["x", 1], ["y", 2]]);
    assert.deepEqual(await call(a, "rowsAt", { seq: snap.seq + 2 }), [["x", 10], ["y", 2], ["z", 3]]);
    assert.deepEqual(await call(a, "rowsAt", { seq: snap.seq - 1 }), [["x", 1]]);

    const listed = await call(a, "snapshots");
    assert.deepEqual(listed.map((s) => s.id), [r2.undo, r1.undo, snap.id]);
    await call(a, "close");
    const files = await call(a, "snapshotFiles", { name: "snaps" });
    for (const s of listed) {
      assert.ok(files.includes(`${s.id}.sqlite`) && files.includes(`${s.id}.json`), `${s.id} in ${files}`);
    }

    // Reopened (in another tab): the same list, and a restore reads the copy.
    const b = await openTab(h);
    await call(b, "open", { name: "snaps" });
    assert.deepEqual(await call(b, "snapshots"), listed);
    await call(b, "restore", { id: snap.id });
    assert.equal(await fp(b), first);
    await call(b, "restore");  // the newest: the state before that restore
    assert.equal(await fp(b), changed);
  } finally {
    await h.close();
  }
});

test("keepSnapshots removes the OPFS files of the snapshots it drops, and a restore from an emptied copy fails and changes nothing", async () => {
  const h = await startHarness();
  try {
    const a = await openTab(h);
    await call(a, "open", { name: "kept", keepSnapshots: 2 });
    const ids = [];
    for (let i = 0; i < 4; i++) {
      await call(a, "put", { id: `r${i}` });
      ids.push((await call(a, "snapshot")).id);
    }
    assert.deepEqual((await call(a, "snapshots")).map((s) => s.id), [ids[3], ids[2]]);
    await call(a, "close");
    const files = await call(a, "snapshotFiles", { name: "kept" });
    assert.deepEqual(files.filter((f) => f.endsWith(".json")), [`${ids[2]}.json`, `${ids[3]}.json`]);
    assert.ok(!files.some((f) => f.startsWith(ids[0]) || f.startsWith(ids[1])), String(files));

    // A copy emptied outside onestore is not read as an empty store.
    await call(a, "open", { name: "kept", keepSnapshots: 2 });
    const kept = await fp(a);
    await call(a, "snapshotFileEmpty", { name: "kept", file: `${ids[2]}.sqlite` });
    const bad = await callFails(a, "restore", { id: ids[2] });
    assert.equal(bad.code, "storage_failed");
    assert.match(bad.message, /empty/);
    assert.equal(await fp(a), kept);
    assert.deepEqual((await call(a, "rows")).sort(), ["r0", "r1", "r2", "r3"]);
    assert.deepEqual((await call(a, "snapshots")).map((s) => s.id), [ids[3], ids[2]]);
    await call(a, "close");
    // ...and the files it made for the "before" snapshot it never took went.
    assert.deepEqual((await call(a, "snapshotFiles", { name: "kept" })).filter((f) => f.endsWith(".sqlite")), [`${ids[2]}.sqlite`, `${ids[3]}.sqlite`]);

    // A .json a crash left empty (its file made, its write never closed),
    // and the copy it was for, are removed at the next open.
    await call(a, "snapshotFileEmpty", { name: "kept", file: "20261207-000000.000.json" });
    await call(a, "snapshotFileEmpty", { name: "kept", file: "20261207-000000.000.sqlite" });
    await call(a, "open", { name: "kept", keepSnapshots: 2 });
    assert.deepEqual((await call(a, "snapshots")).map((s) => s.id), [ids[3], ids[2]]);
    await call(a, "close");
    const left = await call(a, "snapshotFiles", { name: "kept" });
    assert.deepEqual(left.filter((f) => f.endsWith(".json")), [`${ids[2]}.json`, `${ids[3]}.json`]);
    assert.ok(!left.some((f) => f.startsWith("20261207-000000.000")), String(left));

  } finally {
    await h.close();
  }
});

test("snapshotEvery on OPFS takes one exactly at seqs K, 2K, ... even with commits queued behind, and keepSnapshots prunes them with their files", async () => {
  const h = await startHarness();
  try {
    const a = await openTab(h);
    await call(a, "open", { name: "every", snapshotEvery: 3, keepSnapshots: 2 });  // seq 1: the table
    assert.equal(await call(a, "putAll", { ids: ["a", "b", "c", "d", "e"] }), 6);  // seqs 2 to 6
    const early = await call(a, "snapshots");
    assert.deepEqual(early.map((s) => s.seq), [6, 3], "taken at seqs 3 and 6, though seqs 4 to 6 were already queued");
    assert.match(early[0].label, /every 3 commits/);
    const atThree = early[1];
    assert.equal(await call(a, "putAll", { ids: ["f", "g", "h"] }), 9);
    const listed = await call(a, "snapshots");
    assert.deepEqual(listed.map((s) => s.seq), [9, 6]);

    // The one at seq 6 restores the rows committed up to it.
    const r = await call(a, "restore", { id: listed[1].id });
    assert.deepEqual((await call(a, "rows")).sort(), ["a", "b", "c", "d", "e"]);
    await call(a, "close");
    const files = await call(a, "snapshotFiles", { name: "every" });
    assert.ok(!files.some((f) => f.startsWith(atThree.id)), `the pruned snapshot's files are gone: ${files}`);
    const jsons = files.filter((f) => f.endsWith(".json"));
    assert.equal(jsons.length, 2);
    assert.ok(jsons.includes(`${r.undo}.json`), "the restore's own snapshot is kept");

    // Reopened: the list is the same, and snapshotEvery goes on from the head.
    await call(a, "open", { name: "every", snapshotEvery: 3, keepSnapshots: 2 });
    const reopened = await call(a, "snapshots");
    assert.equal(reopened.length, 2);
    await call(a, "putAll", { ids: ["i", "j"] });  // the restore was seq 10: seqs 11, 12
    const before = await call(a, "snapshots");
    assert.equal(before[0].seq, 12);
    // The worker killed right after snapshots() answered: the list it gave
    // is the one a reopen reads. Before, snapshots() answered before the
    // newest one's list write, and the reopen had lost seq 12 and brought
    // the pruned one back.
    await a.evaluate(() => window.restartWorker());
    await call(a, "open", { name: "every", snapshotEvery: 3, keepSnapshots: 2 });
    assert.deepEqual((await call(a, "snapshots")).map((x) => x.seq), before.map((x) => x.seq));
  } finally {
    await h.close();
  }
});
