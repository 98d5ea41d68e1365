// Checks js/reads.js on a fake core (no wasm): rows come back decoded in
// column order (an int beyond 2^53 as a BigInt), a page's cursor is passed
// on, a cursor that is not a string is invalid/cursor before any crossing,
// the rows iterator reads page after page, and the async reads wait for the
// handle's declaration and throw its failure. Then store.read on a memory
// store: its turn in the commit queue, reads inside reads, and close().

import { test } from "node:test";
import assert from "node:assert/strict";

import { makeGate } from "../../js/core-calls.js";
import { makeReads } from "../../js/reads.js";
import { defineTable, int, openStore, str, StoreError } from "../../js/index.js";
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

// store.read on a memory store: its turn in the commit queue, and close().
async function openNotes() {
  const store = await openStore({ backend: "memory" });
  const owner = store.object({ type: "reads-test" });
  const notes = owner.table(Notes);
  await notes.count();
  return { store, owner, notes };
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test("overlapping store.read calls do not keep a commit waiting: it waits for the reads running when it was asked for, not for later ones", async () => {
  const { store, owner, notes } = await openNotes();
  let stop = false;
  const poller = async (offset) => {
    await sleep(offset);
    while (!stop) await store.read(async (r) => { await r.count(notes); await sleep(20); });
  };
  const pollers = [poller(0), poller(10)];
  await sleep(30);
  const committed = Promise.all([
    store.commit([{ op: "put", table: "reads-test/notes", row: { id: "a", n: 1 } }]),
    owner.tx(async (tx) => { await tx.put(Notes, { id: "b", n: 2 }); }),
  ]).then(() => "committed");
  // Before, both stayed pending until the pollers stopped.
  const settled = await Promise.race([committed, sleep(1500).then(() => "still waiting")]);
  stop = true;
  await Promise.all(pollers);
  assert.equal(settled, "committed");
  assert.equal(await notes.count(), 2);
  await store.close();
});

test("a store.read inside another, or an export inside one, runs beside it though a commit waits between them", async () => {
  const { store, notes } = await openNotes();
  const answer = await store.read(async (r) => {
    const commit = store.commit([{ op: "put", table: "reads-test/notes", row: { id: "a", n: 1 } }]);
    const inner = await store.read(async (r2) => r2.count(notes));
    const later = await sleep(5).then(() => store.read(async (r2) => r2.count(notes)));
    const archive = await new Response(store.export()).arrayBuffer();
    return { inner, later, outer: await r.count(notes), archived: archive.byteLength > 0, commit };
  });
  assert.deepEqual([answer.inner, answer.later, answer.outer, answer.archived], [0, 0, 0, true]);
  await answer.commit;
  assert.equal(await notes.count(), 1);
  await store.close();
});

test("a store.read running when close() is asked for ends as it would have; the store closes after it", async () => {
  const { store, notes } = await openNotes();
  const read = store.read(async (r) => {
    const a = await r.count(notes);
    await sleep(20);
    const b = await r.count(notes);  // before: refused with closed
    const rows = [];
    for await (const row of r.rows(notes)) rows.push(row);
    return [a, b, rows.length];
  });
  const closed = store.close();
  assert.deepEqual(await read, [0, 0, 0]);
  await closed;
  await rejectsWith(store.read(async () => 1), "closed");
});
