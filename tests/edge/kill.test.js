// Checks that workerd killed with SIGKILL while a Durable Object commits a
// stream (single puts, bulk updates, blobs, 25k-put transactions) on the
// durable backend loses no acknowledged commit and leaves no partial one:
// after each kill the object's SQLite as left passes `sqlite3`'s
// integrity_check, and workerd restarted over the same persist folder finds
// every acknowledged commit whole, the outbox contiguous. The long form is
// tests/torture/kill-workerd.mjs.
import assert from "node:assert/strict";
import { test } from "node:test";

import { runWorkerdKills } from "../kill/workerd-loop.js";

test("workerd killed 4 times while a Durable Object commits loses no acknowledged commit and leaves no partial one", { timeout: 900_000 }, async () => {
  const f = await runWorkerdKills({ tries: 4, seed: 14 });
  console.log(`kill-workerd: ${f.tries} tries, ${f.kills} kills, ${f.acked} acknowledged, ${f.lost} lost, ${f.partial} partial`);
  assert.deepEqual(f.problems, []);
  assert.equal(f.kills, 4);
  assert.ok(f.acked > 0, "the object acknowledged commits before workerd was killed");
  assert.equal(f.lost, 0);
});
