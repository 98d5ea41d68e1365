// Wheres of 2,000 terms on the durable backend inside real workerd (and an
// inArray of 150,003 values, 3.5 MB of JSON, bound in parts): an `or`
// of equalities on one column (sent to SQLite as one IN list), an `or` and
// an `and` of comparisons that do not fold (written as balanced groups).
// A Durable Object's SQLite refuses an expression tree deeper than 100,
// which a flat list of 2,000 terms was ("Expression tree is too large"): now
// each answers the rows and counts a Node memory store answers.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import * as api from "../../js/index.js";
import { wheres } from "./big-wheres.js";
import { startWorkerd } from "./harness.js";

let workerd;
before(async () => { workerd = await startWorkerd({ script: "big-where-worker.js" }); });
after(async () => { await workerd?.dispose(); });

const ROWS = 400;
const TERMS = 2000;
const { defineTable, int, openStore, query, str } = api;

test("wheres of 2,000 terms answer on a durable store as on a memory store", async () => {
  const got = await workerd.call("big", "wheres", { rows: ROWS, terms: TERMS });

  const Items = defineTable("items", { columns: { id: int(), n: int().optional(), name: str() }, key: ["id"] });
  const store = await openStore({ backend: "memory" });
  const owner = store.object({ type: "t" });
  const items = owner.table(Items);
  await owner.tx(async (tx) => {
    for (let i = 0; i < ROWS; i++) await tx.put(items, { id: i, n: i % 13 === 0 ? null : i * 3, name: `name-${i % 50}` });
  });
  for (const [label, where] of Object.entries(wheres(api, TERMS))) {
    const q = query(Items).where(where);
    const ids = [];
    for await (const r of items.rows(q)) ids.push(r.id);
    assert.ok(ids.length > 0 && ids.length < ROWS, `${label}: a where that tells rows apart`);
    assert.deepEqual(got[label].ids, ids, label);
    assert.equal(got[label].count, ids.length, `${label}: count`);
  }
  await store.close();
});
