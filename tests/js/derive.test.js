// Checks store.derive: a value computed synchronously from committed tables,
// marked dirty only by commits that touch what it read, recomputed in the
// flush when held, and failing alone when it throws.

import { test } from "node:test";
import assert from "node:assert/strict";

import { defineTable, eq, int, openStore, query, str } from "../../js/index.js";
import { throwsWith } from "./helpers.js";

const Notes = defineTable("notes", { columns: { id: str(), text: str(), done: int({ default: 0 }) }, key: ["id"] });
const Tags = defineTable("tags", { columns: { id: str() }, key: ["id"] });

async function setup() {
  const store = await openStore({ backend: "memory" });
  const owner = store.object({ type: "notes" });
  const notes = owner.table(Notes);
  const tags = owner.table(Tags);
  await notes.count();
  await tags.count();
  const put = async (t, row) => { await owner.tx(async (tx) => { await tx.put(t, row); }); return store.head; };
  return { store, owner, notes, tags, put };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

test("a derive reads committed tables synchronously: get, page, count, all, head", async () => {
  const { store, notes, put } = await setup();
  await put(notes, { id: "a", text: "A" });
  await put(notes, { id: "b", text: "B", done: 1 });
  const d = store.derive("summary", (read) => ({
    a: read.get(notes, ["a"])?.text,
    open: read.count(notes, query(Notes).where((n) => eq(n.done, 0))),
    first: read.page("notes/notes", query(Notes), 1).rows.map((r) => r.id),
    all: read.all(notes).map((r) => r.id),
    head: read.head,
  }));
  assert.deepEqual(d.value, { a: "A", open: 1, first: ["a"], all: ["a", "b"], head: store.head });
  await store.close();
});

test("a held derive is recomputed in the flush of each commit that touched what it read, and only then", async () => {
  const { store, notes, tags, put } = await setup();
  let runs = 0;
  const count = store.derive("count", (read) => { runs++; return read.count(notes); });
  const events = [];
  count.hold((e) => events.push(e));
  assert.equal(runs, 1);
  const s1 = await put(notes, { id: "a", text: "A" });
  assert.equal(runs, 2);
  await put(tags, { id: "t" });  // not read by the derive
  assert.equal(runs, 2);
  const s3 = await put(notes, { id: "b", text: "B" });
  assert.equal(runs, 3);
  // With an idle queue the whole step, flush included, runs inside the call.
  const p = store.commit([{ op: "put", table: "notes/notes", row: { id: "c", text: "C" } }]);
  assert.equal(runs, 4);
  const s4 = await p;
  await tick();
  assert.deepEqual(events, [{ seq: s1 - 1, value: 0 }, { seq: s1, value: 1 }, { seq: s3, value: 2 }, { seq: s4, value: 3 }]);
  await store.close();
});

test("the flush recomputes a derive before the next commit starts, so its value belongs to exactly that seq", async () => {
  const { store, notes } = await setup();
  const base = store.head;
  const count = store.derive("count", (read) => ({ n: read.count(notes), head: read.head }));
  const seen = [];
  count.hold((e) => seen.push(e));
  // Three commits queued in one turn run back to back; each flush sees its own state.
  await Promise.all([1, 2, 3].map((i) => store.commit([{ op: "put", table: "notes/notes", row: { id: `n${i}`, text: "x" } }])));
  await tick();
  const h = base;
  assert.deepEqual(seen.slice(1).map((e) => [e.seq, e.value.head, e.value.n]), [[h + 1, h + 1, 1], [h + 2, h + 2, 2], [h + 3, h + 3, 3]]);
  await store.close();
});

test("a derive nobody holds is not recomputed in the flush; reading its value computes it once", async () => {
  const { store, notes, put } = await setup();
  let runs = 0;
  const count = store.derive("count", (read) => { runs++; return read.count(notes); });
  assert.equal(count.value, 0);
  await put(notes, { id: "a", text: "A" });
  await put(notes, { id: "b", text: "B" });
  assert.equal(runs, 1);
  assert.equal(count.value, 2);
  assert.equal(count.value, 2);
  assert.equal(runs, 2);
  await store.close();
});

test("a throwing derive fails only itself: the commit lands, other derives go on, it recovers", async () => {
  const { store, notes, put } = await setup();
  const fragile = store.derive("fragile", (read) => {
    const n = read.count(notes);
    if (n === 1) throw new TypeError("one note is not allowed");
    return n;
  });
  const count = store.derive("count", (read) => read.count(notes));
  const bad = [];
  const good = [];
  fragile.hold((e) => bad.push(e));
  count.hold((e) => good.push(e));
  const s1 = await put(notes, { id: "a", text: "A" });
  const s2 = await put(notes, { id: "b", text: "B" });
  await tick();
  assert.equal(await notes.count(), 2);
  assert.deepEqual(good.map((e) => e.value), [0, 1, 2]);
  assert.equal(bad[1].seq, s1);
  assert.ok(bad[1].error instanceof TypeError);
  assert.equal(bad[1].error.message, "one note is not allowed");
  assert.deepEqual(bad[2], { seq: s2, value: 2 });
  await store.close();
});

test("value rethrows the derive's error", async () => {
  const { store, notes, put } = await setup();
  await put(notes, { id: "a", text: "A" });
  const d = store.derive("d", (read) => { if (read.count(notes) > 0) throw new RangeError("too many"); return 0; });
  assert.throws(() => d.value, RangeError);
  await store.close();
});

test("a derive that reads the head or the outbox is recomputed after every commit", async () => {
  const { store, notes, tags, put } = await setup();
  const last = store.derive("last", (read) => read.outbox(read.head - 1, 1).commits.map((c) => c.seq));
  const seen = [];
  last.hold((e) => seen.push(e.value));
  const s1 = await put(tags, { id: "t" });
  const s2 = await put(notes, { id: "a", text: "A" });
  await tick();
  assert.deepEqual(seen.slice(1), [[s1], [s2]]);
  await store.close();
});

test("unsubscribed derives stop being recomputed in the flush", async () => {
  const { store, notes, put } = await setup();
  let runs = 0;
  const d = store.derive("d", (read) => { runs++; return read.count(notes); });
  const off = d.hold(() => {});
  await put(notes, { id: "a", text: "A" });
  assert.equal(runs, 2);
  off();
  await put(notes, { id: "b", text: "B" });
  assert.equal(runs, 2);
  await store.close();
});

test("derive refuses bad names, duplicates, non-functions, promises and late reads", async () => {
  const { store, notes } = await setup();
  throwsWith(() => store.derive("", () => 1), "invalid/args", ["name"]);
  throwsWith(() => store.derive("a/b", () => 1), "invalid/args", ["\"a/b\""]);
  throwsWith(() => store.derive("x", 3), "invalid/args", ["function"]);
  store.derive("dup", () => 1);
  throwsWith(() => store.derive("dup", () => 2), "invalid/args", ["dup"]);
  const asyncDerive = store.derive("async", async (read) => read.count(notes));
  throwsWith(() => asyncDerive.value, "invalid/args", ["promise"]);
  let kept;
  const leak = store.derive("leak", (read) => { kept = read; return 1; });
  assert.equal(leak.value, 1);
  throwsWith(() => kept.count(notes), "invalid/args", ["after the derive returned"]);
  const unknown = store.derive("unknown", (read) => read.count("nobody/nothing"));
  throwsWith(() => unknown.value, "invalid/args", ["nobody/nothing"]);
  const closing = store.derive("closing", () => 1);
  closing.close();
  throwsWith(() => closing.value, "closed");
  store.derive("closing", () => 2);  // the name is free again
  await store.close();
  throwsWith(() => store.derive("late", () => 1), "closed");
});
