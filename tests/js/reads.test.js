// Checks js/reads.js on a fake core (no wasm): rows come back decoded in
// column order (an int beyond 2^53 as a BigInt), a page's cursor is passed
// on, a cursor that is not a string is invalid/cursor before any crossing,
// the rows iterator reads page after page, and the async reads wait for the
// handle's declaration and throw its failure.

import { test } from "node:test";
import assert from "node:assert/strict";

import { makeGate } from "../../js/core-calls.js";
import { makeReads } from "../../js/reads.js";
import { defineTable, int, str, StoreError } from "../../js/index.js";
import { fakeCore } from "./fake-core.js";
import { rejectsWith, throwsWith } from "./helpers.js";

const Notes = defineTable("notes", { columns: { id: str(), n: int() }, key: ["id"] });
const handle = (extra = {}) => ({ name: "x/notes", def: Notes, settled: true, pending: null, failed: null, decode: null, ...extra });

test("get decodes the core's row array into an object; a missing row is undefined", () => {
  const { core } = fakeCore({ get: (t, key) => (key === '["a"]' ? '["a","1152921504606846977"]' : "null") });
  const reads = makeReads(makeGate(core, 0));
  assert.deepEqual(reads.getNow(handle(), "a"), { id: "a", n: 2n ** 60n + 1n });
  assert.equal(reads.getNow(handle(), ["b"]), undefined);
  throwsWith(() => reads.getNow(handle(), undefined), "invalid/args", ["a key is needed"]);
});

test("rows() reads page after page, passing each page's cursor as the next one's start", async () => {
  const afters = [];
  const { core } = fakeCore({
    page: (t, q, limit, after) => {
      afters.push(after);
      return after === "" ? '{"rows":[["a",1]],"next":"c1"}' : '{"rows":[["b",2]]}';
    },
  });
  const reads = makeReads(makeGate(core, 0));
  const got = [];
  for await (const r of reads.rows(handle())) got.push(r.id);
  assert.deepEqual(got, ["a", "b"]);
  assert.deepEqual(afters, ["", "c1"]);
});

test("a cursor that is not a string and a bad limit are refused before crossing into the core", () => {
  const f = fakeCore();
  const reads = makeReads(makeGate(f.core, 0));
  throwsWith(() => reads.pageNow(handle(), undefined, 10, { after: 5 }), "invalid/cursor");
  throwsWith(() => reads.pageNow(handle(), undefined, 0), "invalid/args", ["limit"]);
  assert.deepEqual(f.names(), []);
});

test("the async reads wait for the handle's declaration, and throw its failure", async () => {
  const f = fakeCore({ count: () => "3" });
  const reads = makeReads(makeGate(f.core, 0));
  let settle;
  const h = handle({ settled: false });
  h.pending = new Promise((r) => { settle = r; });
  const n = reads.count(h);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(f.names(), [], "nothing read before the declaration commits");
  h.settled = true;
  settle();
  assert.equal(await n, 3);
  const failed = handle({ failed: new StoreError("schema/newer", "newer") });
  await rejectsWith(reads.get(failed, "a"), "schema/newer");
});
