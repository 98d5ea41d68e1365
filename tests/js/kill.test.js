// Checks that a Node process killed with SIGKILL in the middle of a stream
// of commits (single puts, bulk updates, blobs, edges, vectors and a
// document, 25k-put transactions) on a
// sqlite store file loses nothing it acknowledged and leaves no partial
// commit: after each kill the file as left passes `sqlite3`'s
// integrity_check, and the reopened store has every acknowledged commit
// (durability full) or lost only a suffix (relaxed), each commit whole, the
// outbox contiguous. The long form is tests/torture/kill-node.mjs.
import assert from "node:assert/strict";
import { test } from "node:test";

import { runNodeKills } from "../kill/node-loop.js";

for (const [durability, tries] of [["full", 14], ["relaxed", 8]]) {
  test(`a child killed ${tries} times while it commits (durability ${durability}) loses no acknowledged commit and leaves no partial one`, { timeout: 600_000 }, async () => {
    const f = await runNodeKills({ durability, tries, seconds: 1e9, seed: durability === "full" ? 14 : 41 });
    console.log(`kill-node ${durability}: ${f.tries} tries, ${f.kills} kills (${f.killedBeforeOpen} before open), ${f.acked} acknowledged, ${f.lost} lost, ${f.partial} partial`);
    assert.deepEqual(f.problems, []);
    assert.equal(f.kills, tries);
    assert.ok(f.acked > 0, "the children acknowledged commits before they were killed");
    if (durability === "full") assert.equal(f.lost, 0);
  });
}

// The check itself: on a memory store given commits that no real crash
// should leave, it names each one (so the loops above cannot pass by
// checking nothing).
test("the check names a lost acknowledged commit, a partial commit (of rows, vectors and a document), a hole in the stream and a commit at another seq", async () => {
  const api = await import("../../js/index.js");
  const { commitOne, checkStore, tablesOf } = await import("../kill/workload.js");
  const store = await api.openStore({ backend: "memory" });
  const seqs = [];
  for (let c = 0; c < 12; c++) seqs.push(await commitOne(api, store, c));
  const clean = await checkStore(api, store, { acked: new Map(seqs.map((seq, c) => [c, seq])) });
  assert.deepEqual(clean.problems, []);
  assert.equal(clean.next, 12);

  const lost = await checkStore(api, store, { acked: new Map([[12, 13]]) });
  assert.deepEqual(lost.problems, ["acknowledged commit 12 (durability full) is missing"]);
  assert.equal((await checkStore(api, store, { acked: new Map([[12, 13]]), durability: "relaxed" })).problems.length, 0);
  assert.deepEqual((await checkStore(api, store, { acked: new Map([[3, seqs[3] + 1]]) })).problems, [`commit 3 was acknowledged with seq ${seqs[3] + 1}, the outbox has it at ${seqs[3]}`]);

  const { Ledger, Single, Groups, Vecs } = tablesOf(api);
  const owner = store.object({ type: "kill" });
  // Half a bulk update (group 1's first row only), a single row without its
  // ledger row, a ledger row past a hole, a vector row without its ledger
  // row and a tally document that missed a graph commit.
  const tally = await owner.documents.find({ kind: "tally", key: "graph" });
  assert.deepEqual(tally.value, { last: 3, n: 1 });
  await owner.tx(async (tx) => {
    await tx.put(owner.table(Vecs), { c: 33, v: [33, -33, 16.5, 1] });
    await tx.documents.change(tally.id, [{ op: "replace", path: "/n", value: 0 }]);
    await tx.update(owner.table(Groups), [1], { v: 99 });
    await tx.put(owner.table(Single), { id: "s-30", c: 30, pad: "" });
    await tx.put(owner.table(Ledger), { c: 20, kind: "single", n: 0 });
  });
  const bad = (await checkStore(api, store, { acked: new Map() })).problems.join("\n");
  assert.match(bad, /group 1 has v 99,0, its last bulk commit is 0: a partial commit/);
  assert.match(bad, /row s-30 \(c 30\) without its ledger row/);
  assert.match(bad, /ledger has commit 20 but only 13 rows: a hole before it/);
  assert.match(bad, /commit 20 \(single\) has its ledger row but no data row/);
  assert.match(bad, /vector row 33 without its ledger row: a partial commit/);
  assert.match(bad, /the tally document is \{"last":3,"n":0\}, the ledger's graph commits make it \{"last":3,"n":1\}/);
  await store.close();
});
