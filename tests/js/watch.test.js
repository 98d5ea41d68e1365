// Checks owner.watch: listeners run after the flush of each commit that
// touched their table, in seq order, with that commit's ops for the table,
// never inside the commit step, one call at a time per watch.

import { test } from "node:test";
import assert from "node:assert/strict";

import { defineTable, int, openStore, prefix, replacePrefix, str } from "../../js/index.js";
import { rejectsWith, throwsWith } from "./helpers.js";

const Notes = defineTable("notes", { columns: { id: str(), text: str(), n: int({ default: 0 }) }, key: ["id"] });
const Tags = defineTable("tags", { columns: { id: str() }, key: ["id"] });

async function setup() {
  const store = await openStore({ backend: "memory" });
  const owner = store.object({ type: "notes" });
  const notes = owner.table(Notes);
  const tags = owner.table(Tags);
  await notes.count();
  await tags.count();
  return { store, owner, notes, tags };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

test("a watch gets each commit's ops for its table, in seq order, and nothing for other tables", async () => {
  const { store, owner, notes, tags } = await setup();
  const seen = [];
  owner.watch(notes, (ops, seq) => { seen.push({ seq, ops }); });
  await owner.tx(async (tx) => { await tx.put(notes, { id: "a", text: "one" }); await tx.put(tags, { id: "t" }); });
  const s1 = store.head;
  await owner.tx(async (tx) => { await tx.put(tags, { id: "u" }); });  // not notes: no call
  await owner.tx(async (tx) => {
    await tx.update(notes, ["a"], { text: "two" });
    await tx.updateWhere(notes, (n) => prefix(n.id, "a"), { text: replacePrefix("t", "T") });
  });
  const s3 = store.head;
  const s4 = await store.commit([{ op: "delete", table: "notes/notes", key: ["a"] }]);
  await tick();
  assert.deepEqual(seen.map((c) => c.seq), [s1, s3, s4]);
  // The ops as the outbox records them: the default of n filled in.
  assert.deepEqual(seen[0].ops, [{ op: "put", table: "notes/notes", row: { id: "a", text: "one", n: 0 } }]);
  assert.equal(seen[1].ops.length, 2);
  assert.equal(seen[1].ops[1].op, "update");
  assert.equal(seen[1].ops[1].count, 1);  // the bulk op carries its affected-row count
  assert.deepEqual(seen[2].ops, [{ op: "delete", table: "notes/notes", key: ["a"] }]);
  await store.close();
});

test("a watch runs after the step, never inside it, and sees a complete prefix of the log", async () => {
  const { store, owner, notes } = await setup();
  const calls = [];
  owner.watch(notes, (ops, seq) => { calls.push({ seq, head: store.head }); });
  let adoptedFirst = false;
  const p = store.commit([{ op: "put", table: "notes/notes", row: { id: "x", text: "x" } }], () => { adoptedFirst = calls.length === 0; });
  assert.equal(adoptedFirst, true);
  assert.equal(calls.length, 0, "the listener must not run inside the commit step");
  const seq = await p;
  await tick();
  assert.deepEqual(calls, [{ seq, head: seq }]);
  await store.close();
});

test("an async watch listener finishes before its next call starts", async () => {
  const { store, owner, notes } = await setup();
  const log = [];
  owner.watch(notes, async (ops, seq) => {
    log.push(`start ${seq}`);
    await new Promise((r) => setTimeout(r, 5));
    log.push(`end ${seq}`);
  });
  await owner.tx(async (tx) => { await tx.put(notes, { id: "1", text: "a" }); });
  const a = store.head;
  await owner.tx(async (tx) => { await tx.put(notes, { id: "2", text: "b" }); });
  const b = store.head;
  for (let i = 0; i < 1000 && log.length < 4; i++) await new Promise((r) => setTimeout(r, 5));
  assert.deepEqual(log, [`start ${a}`, `end ${a}`, `start ${b}`, `end ${b}`]);
  await store.close();
});

test("a throwing watch listener fails neither the commit nor its own later calls nor other watches", async () => {
  const { store, owner, notes } = await setup();
  const reported = [];
  const original = console.error;
  console.error = (...args) => reported.push(args);
  try {
    const seqs = [];
    const other = [];
    owner.watch(notes, (ops, seq) => { seqs.push(seq); throw new Error(`boom at ${seq}`); });
    owner.watch(notes, (ops, seq) => { other.push(seq); });
    await owner.tx(async (tx) => { await tx.put(notes, { id: "1", text: "a" }); });
    const a = store.head;
    await owner.tx(async (tx) => { await tx.put(notes, { id: "2", text: "b" }); });
    const b = store.head;
    await tick();
    assert.deepEqual(seqs, [a, b]);
    assert.deepEqual(other, [a, b]);
    assert.equal(reported.length, 2);
    assert.match(String(reported[0][1]), /boom at/);
    assert.equal(await notes.count(), 2);
  } finally {
    console.error = original;
  }
  await store.close();
});

test("unsubscribe stops a watch", async () => {
  const { store, owner, notes } = await setup();
  const seqs = [];
  const off = owner.watch(notes, (ops, seq) => { seqs.push(seq); });
  await owner.tx(async (tx) => { await tx.put(notes, { id: "1", text: "a" }); });
  const a = store.head;
  off();
  await owner.tx(async (tx) => { await tx.put(notes, { id: "2", text: "b" }); });
  await tick();
  assert.deepEqual(seqs, [a]);
  await store.close();
});

test("watch refuses another owner's table, a non-function listener, and a closed store", async () => {
  const { store, owner, notes } = await setup();
  const other = store.object({ type: "other" });
  throwsWith(() => other.watch(notes, () => {}), "invalid/args", ["notes/notes", "other"]);
  throwsWith(() => owner.watch(notes, "nope"), "invalid/args", ["listener"]);
  await store.close();
  throwsWith(() => owner.watch(notes, () => {}), "closed");
  await rejectsWith(notes.count(), "closed");
});

// Before, close() marked every watch and holder dead at once, and a call
// still queued (two microtasks a call on its line) was dropped: a
// synchronous listener missed the last commit acknowledged before close.
test("calls queued for commits acknowledged before close() are still made: a watch and a derive's holder see every one", async () => {
  const store = await openStore({ backend: "memory" });
  const owner = store.object({ type: "notes" });
  const notes = owner.table(Notes);
  const watched = [];
  const held = [];
  owner.watch(notes, (ops, seq) => { watched.push(seq); });
  store.derive("count", (r) => r.count(notes)).hold(({ seq }) => { held.push(seq); });
  await tick();
  watched.length = 0;
  held.length = 0;
  const seqs = await Promise.all([1, 2, 3, 4].map((i) => store.commit([{ op: "put", table: notes.name, row: { id: `k${i}`, text: "t" } }])));
  await store.close();
  await tick();
  assert.deepEqual(watched, seqs);
  assert.deepEqual(held, seqs);
  // Nothing is queued after the close.
  await rejectsWith(store.commit([{ op: "put", table: notes.name, row: { id: "later", text: "t" } }]), "closed");
  await tick();
  assert.deepEqual(watched, seqs);
});
