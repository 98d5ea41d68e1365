// A diverged replica answers every batch it is handed with sync/diverged, a
// malformed one too (not JSON, not a batch, an object the package cannot
// encode), on a memory replica and on a sqlite file replica, also after
// reopening: the fuzz finding batch-0ae46b65 (docs/reliability.md), where a
// malformed batch got invalid/args and told the sync driver to fetch it again.

import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";

import { openReplica } from "../../js/index.js";
import { rejectsWith, tempDir } from "./helpers.js";

const table = { op: "table", table: "t/items", columns: { id: { type: "str" }, n: { type: "int", optional: true } }, key: ["id"] };
// Seq 2 updates a row the replica does not hold: the replica diverges there.
const diverging = {
  from: 0,
  to: 2,
  commits: [
    { seq: 1, from: 0, at: 1, owner: "t", ops: [table] },
    { seq: 2, from: 1, at: 1, owner: "t", ops: [{ op: "update", table: "t/items", key: ["nope"], set: { n: { value: 1 } } }] },
  ],
};

function cyclic() {
  const batch = { from: 0, to: 1, commits: [] };
  batch.commits.push(batch);
  return batch;
}

const malformed = [
  ["text that is not JSON", '{"from":0,"to":1,"commits":['],
  ["JSON that is not a batch", "[1,2]"],
  ["a batch whose length is not to - from", '{"from":2,"to":3,"commits":[]}'],
  ["an object that cannot be encoded", cyclic()],
  // A getter or toJSON of the caller's that throws: it came out as the raw
  // Error, on a diverged replica too.
  ["a batch whose getter throws", { from: 0, to: 1, get commits() { throw new Error("getter"); } }],
  ["a batch whose toJSON throws", { toJSON() { throw new RangeError("toJSON"); } }],
];

for (const backend of ["memory", "sqlite"]) {
  test(`a ${backend} replica refuses a malformed batch with invalid/args until it diverges, and with sync/diverged after, also after reopening`, async () => {
    const options = backend === "memory" ? { backend } : { backend, path: join(tempDir(), "replica.sqlite") };
    let replica = await openReplica(options);
    for (const [, batch] of malformed) await rejectsWith(replica.applyBatch(batch), "invalid/args");
    await rejectsWith(replica.applyBatch(diverging), "sync/diverged", ["seq 2"]);
    assert.match(replica.diverged, /seq 2/);
    for (const [what, batch] of malformed) {
      await rejectsWith(replica.applyBatch(batch), "sync/diverged", ["a new one"]).catch((e) => {
        throw new Error(`${what}: ${e.message}`);
      });
    }
    assert.equal(replica.head, 0);
    if (backend === "sqlite") {
      await replica.close();
      replica = await openReplica(options);
      assert.match(replica.diverged, /seq 2/);
      for (const [, batch] of malformed) await rejectsWith(replica.applyBatch(batch), "sync/diverged");
      assert.equal(replica.head, 0);
    }
    await replica.close();
  });
}

// formats.md, "Batches": a batch is checked whole before any of it applies,
// every bulk op carrying its count included. A later record's bulk op
// without one was found only while applying, after an earlier record had
// diverged: the replica stopped for good over a batch it should have refused.
for (const backend of ["memory", "sqlite"]) {
  test(`a ${backend} replica refuses a batch whose later bulk op has no count with invalid/args, before an earlier record can diverge`, async () => {
    const options = backend === "memory" ? { backend } : { backend, path: join(tempDir(), "replica.sqlite") };
    const replica = await openReplica(options);
    const batch = {
      from: 0,
      to: 3,
      commits: [...diverging.commits, { seq: 3, from: 2, at: 1, owner: "t", ops: [{ op: "delete", table: "t/items", where: null }] }],
    };
    await rejectsWith(replica.applyBatch(batch), "invalid/args", ["commits[2].ops[0]", "carries its count"]);
    assert.equal(replica.diverged, undefined, "not diverged: the batch may be fetched again");
    assert.equal(replica.head, 0);
    // The same batch as JSON text takes the core's fast reader first.
    await rejectsWith(replica.applyBatch(JSON.stringify(batch)), "invalid/args", ["carries its count"]);
    assert.equal(replica.diverged, undefined);
    await replica.close();
  });
}
