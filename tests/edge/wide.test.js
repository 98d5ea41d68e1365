// Checks wide writes on the durable backend inside real workerd: a Durable
// Object binds at most 100 parameters per statement, and an update by key
// and an updateWhere of a table of 100 columns whose statements bind more
// than that (148 and 101 values) commit (the backend writes the statement's
// small literals into its text; nums stay bound) and read back exactly,
// quotes, nums and an expression reading the row as it was included.
// Before, both failed with `limit` ("the statement binds N values").

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { startWorkerd } from "./harness.js";

let workerd;
before(async () => { workerd = await startWorkerd(); });
after(async () => { await workerd?.dispose(); });

test("an update by key and an updateWhere binding more than 100 values commit on a Durable Object and read back exactly", async () => {
  const r = await workerd.call("wide", "wideWrites", {});
  assert.deepEqual(r.afterKey, r.expected1);
  assert.deepEqual(r.afterWhere, r.expected2);
  assert.equal(r.record.ops.length, 1);
  assert.equal(r.record.ops[0].op, "update");
  assert.equal(r.record.ops[0].count, 1, "the updateWhere matched the row");
});
