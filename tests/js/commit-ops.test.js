// Checks that a commit has one representation: the ops the core recorded in
// the outbox (defaults filled in, bulk counts set, table records, exact ints)
// are the ops that adopt hooks, watches, link holds and derives see, on the
// memory and sqlite backends; that a commit nobody listens to never asks the
// core for them; that `store.commit([])` takes no seq; that a row is stored as
// its own data, read once; and which user errors are wrapped (docs/api.md).

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { MessageChannel } from "node:worker_threads";

import { connect, defineTable, eq, int, json, lt, openStore, serve, str, StoreError } from "../../js/index.js";
import { openStoreWith } from "../../js/store.js";
import { nodeRuntime } from "../../js/loader-node.js";
import { rejectsWith, tempDir } from "./helpers.js";

const Edits = defineTable("edits", {
  columns: { id: str(), path: str(), n: int({ default: 7 }), meta: json().optional() },
  key: ["id"],
});

async function until(cond, what) {
  for (let i = 0; i < 2000; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  assert.fail(`timed out waiting for ${typeof what === "function" ? what() : what}`);
}

const backends = {
  memory: () => openStore({ backend: "memory" }),
  "sqlite file": () => openStore({ backend: "sqlite", path: join(tempDir(), "s.sqlite") }),
};

for (const [name, open] of Object.entries(backends)) {
  describe(`on the ${name} backend`, () => {
    // A store with every kind of listener on one table: the owner's adopt
    // hook, a watch, a held derive and a link hold over a MessageChannel.
    async function listening() {
      const store = await open();
      const adopted = [];
      const owner = store.object({ type: "fh" }, { adopt: (seq, ops) => adopted.push({ seq, ops }) });
      const edits = owner.table(Edits);
      await edits.count();
      const watched = [];
      owner.watch(edits, (ops, seq) => { watched.push({ seq, ops }); });
      const derived = [];
      store.derive("e1", (read) => read.get(edits, "e1")).hold((r) => derived.push(r));
      const { port1, port2 } = new MessageChannel();
      const server = serve(store, { port: port1, methods: {} });
      const link = connect(port2);
      const linked = [];
      let held = false;
      link.hold(edits.name, (m) => {
        if (m.rows) held = true;
        if (m.ops) linked.push({ seq: m.seq, ops: m.ops });
      });
      await until(() => derived.length > 0 && held, "the derive's first value and the link's first rows");
      const lastRecord = async () => (await store.outbox.read(store.head - 1, 1)).commits[0];
      const done = async () => { link.close(); server.close(); port1.close(); port2.close(); await store.close(); };
      return { store, owner, edits, adopted, watched, derived, linked, lastRecord, done };
    }

    test("a put that leaves out a column with a default reaches adopt, watch, a link hold and the outbox as one op, default filled in", async () => {
      const t = await listening();
      const seq = await t.owner.tx(async (tx) => { await tx.put(t.edits, { id: "e1", path: "p" }); }).then(() => t.store.head);
      const record = await t.lastRecord();
      assert.equal(record.seq, seq);
      assert.deepEqual(record.ops, [{ op: "put", table: "fh/edits", row: { id: "e1", path: "p", n: 7, meta: null } }]);
      assert.deepEqual(t.adopted.at(-1), { seq, ops: record.ops });
      await until(() => t.watched.length === 1 && t.linked.length === 1 && t.derived.length === 2, () => `watch, link and derive: ${JSON.stringify([t.watched, t.linked, t.derived])}`);
      assert.deepEqual(t.watched[0], { seq, ops: record.ops });
      assert.deepEqual(t.linked[0], { seq, ops: record.ops });
      assert.deepEqual(t.derived[1], { seq, value: record.ops[0].row }, "the derive reads the row the op holds");
      await t.done();
    });

    test("bulk ops carry the same row count everywhere, from a tx and from store.commit", async () => {
      const t = await listening();
      await t.owner.tx(async (tx) => {
        for (let i = 0; i < 5; i++) await tx.put(t.edits, { id: `e${i}`, path: "p", n: i });
      });
      await t.owner.tx(async (tx) => {
        await tx.put(t.edits, { id: "z", path: "z" });  // n: 7 by default, not < 3
        await tx.updateWhere(t.edits, (e) => lt(e.n, 3), { path: "q" });
      });
      const fromTx = await t.lastRecord();
      assert.equal(fromTx.ops[0].row.n, 7);
      assert.equal(fromTx.ops[1].count, 3);
      assert.deepEqual(t.adopted.at(-1).ops, fromTx.ops);
      await t.store.commit([{ op: "delete", table: "fh/edits", where: { eq: ["path", "q"] } }]);
      const fromCommit = await t.lastRecord();
      assert.equal(fromCommit.ops[0].count, 3);
      await until(() => t.watched.length === 3 && t.linked.length === 3, "the watch and the link");
      assert.deepEqual(t.watched.map((w) => w.ops), t.linked.map((l) => l.ops));
      assert.deepEqual(t.watched[1].ops, fromTx.ops);
      assert.deepEqual(t.watched[2].ops, fromCommit.ops);
      await t.done();
    });

    test("a table declaration reaches the adopt hook as the table record the outbox holds", async () => {
      const store = await open();
      const adopted = [];
      const owner = store.object({ type: "fh" }, { adopt: (seq, ops) => adopted.push({ seq, ops }) });
      await owner.table(Edits).count();
      const record = (await store.outbox.read(0, 1)).commits[0];
      assert.equal(record.ops[0].op, "table");
      assert.deepEqual(adopted, [{ seq: record.seq, ops: record.ops }]);
      await store.close();
    });

    test("an int beyond 2^53 reaches the adopt hook exactly, as a BigInt", async () => {
      const t = await listening();
      const big = 2n ** 60n + 1n;
      await t.owner.tx(async (tx) => { await tx.put(t.edits, { id: "e1", path: "p", n: big }); });
      assert.equal(t.adopted.at(-1).ops[0].row.n, big);
      assert.equal((await t.lastRecord()).ops[0].row.n, big);
      await t.done();
    });

    test("store.commit([]) takes no seq, writes no record, calls no adopt and resolves to the head", async () => {
      const store = await open();
      const owner = store.object({ type: "fh" });
      const edits = owner.table(Edits);
      await edits.count();
      const head = store.head;
      let adopted = false;
      assert.equal(await store.commit([], () => { adopted = true; }), head);
      assert.equal(store.head, head);
      assert.equal(adopted, false);
      assert.equal((await store.outbox.read(head, 10)).commits.length, 0);
      // Queued behind a real commit, it resolves to that commit's seq.
      const put = store.commit([{ op: "put", table: "fh/edits", row: { id: "e1", path: "p" } }]);
      const empty = store.commit([]);
      assert.deepEqual([await put, await empty], [head + 1, head + 1]);
      await store.close();
    });
  });
}

/** A store whose core counts its lastOps calls. */
async function counted() {
  const calls = { lastOps: 0 };
  const runtime = {
    ...nodeRuntime,
    attach: (core) => new Proxy(core, {
      get(target, k) {
        const v = Reflect.get(target, k);
        if (k === "lastOps") return (...a) => { calls.lastOps++; return v.apply(target, a); };
        return typeof v === "function" ? v.bind(target) : v;
      },
    }),
  };
  return { store: await openStoreWith(runtime, { backend: "memory" }), calls };
}

// The core read the fields it knows and dropped the rest: a misspelt
// `optinal: true` declared a column that is not optional, and a put's stray
// field went unsaid.
test("store.commit refuses an op or a column with a field the format does not have, naming it; nothing is committed", async () => {
  const store = await openStore({ backend: "memory" });
  const table = { op: "table", table: "o/x", version: 1, columns: { id: { type: "int" }, note: { type: "str", optional: true } }, key: ["id"], indexes: {} };
  await rejectsWith(store.commit([{ ...table, columns: { ...table.columns, note: { type: "str", optinal: true } } }]), "invalid/args", ["ops[0]", 'column "note"', '"optinal"']);
  await rejectsWith(store.commit([{ ...table, zz: 1 }]), "invalid/args", ["ops[0]", "table op", '"zz"']);
  assert.equal(store.head, 0, "nothing committed");
  await store.commit([table]);
  await rejectsWith(store.commit([{ op: "put", table: "o/x", row: { id: 1 }, zz: 1 }]), "invalid/args", ["put op", '"zz"']);
  await rejectsWith(store.commit([{ op: "alter", table: "o/x", version: 2, add: { n: { type: "int", defualt: 0 } } }]), "invalid/args", ['column "n"', '"defualt"']);
  // What the format has still commits: a delete's count (an outbox record's op fed back), an alter's add.
  await store.commit([{ op: "put", table: "o/x", row: { id: 1 } }, { op: "delete", table: "o/x", where: null, count: 1 }]);
  await store.commit([{ op: "alter", table: "o/x", version: 2, add: { n: { type: "int", default: 0 } } }]);
  assert.equal(store.head, 3);
  await store.close();
});

test("a commit nobody listens to never asks the core for its ops; one with listeners asks once", async () => {
  const { store, calls } = await counted();
  const quiet = store.object({ type: "quiet" });
  const t = quiet.table(Edits);
  await t.count();
  await quiet.tx(async (tx) => { await tx.put(t, { id: "e1", path: "p" }); });
  await store.commit([{ op: "put", table: "quiet/edits", row: { id: "e2", path: "p" } }], () => {});
  assert.equal(calls.lastOps, 0);
  const seen = [];
  const loud = store.object({ type: "loud" }, { adopt: (seq, ops) => seen.push(ops) });
  const u = loud.table(Edits);
  await u.count();
  loud.watch(u, (ops) => seen.push(ops));
  store.derive("n", (read) => read.count(u)).hold(() => {});
  const before = calls.lastOps;
  await loud.tx(async (tx) => { await tx.put(u, { id: "e1", path: "p" }); });
  assert.equal(calls.lastOps - before, 1, "adopt, watch and derive share one crossing");
  await until(() => seen.length === 3, "the watch");
  assert.equal(seen[1][0], seen[2][0], "adopt and watch get the same parsed op, not two parses");
  await store.close();
});

describe("a row is stored as its own data, read once", () => {
  async function setup() {
    const store = await openStore({ backend: "memory" });
    const adopted = [];
    const owner = store.object({ type: "fh" }, { adopt: (seq, ops) => adopted.push(ops) });
    const edits = owner.table(Edits);
    await edits.count();
    return { store, owner, edits, adopted };
  }

  test("a row with a toJSON method is refused with invalid/args and nothing is committed", async () => {
    const { store, owner, edits } = await setup();
    const head = store.head;
    const row = { id: "e1", path: "p", toJSON: () => ({ id: "other", path: "q" }) };
    await rejectsWith(owner.tx(async (tx) => { await tx.put(edits, row); }), "invalid/args", ["toJSON"]);
    await rejectsWith(owner.tx(async (tx) => { await tx.put(edits, { id: "e1", path: "p", meta: { at: new Date(0) } }); }), "invalid/args", ["meta.at", "class Date"]);
    await rejectsWith(store.commit([{ op: "put", table: "fh/edits", row }]), "invalid/args", ["toJSON"]);
    assert.equal(store.head, head);
    await store.close();
  });

  test("a getter with a different answer each time is read once: the store, adopt and the outbox hold that one answer", async () => {
    const { store, owner, edits, adopted } = await setup();
    let calls = 0;
    const row = { id: "e1", get path() { calls++; return `p${calls}`; }, meta: { get k() { calls++; return calls; } } };
    await owner.tx(async (tx) => { await tx.put(edits, row); });
    assert.equal(calls, 2);
    const stored = await edits.get("e1");
    assert.deepEqual([stored.path, stored.meta], ["p1", { k: 2 }]);
    assert.deepEqual(adopted.at(-1)[0].row, stored);
    await store.close();
  });

  test("a Proxy row, and a Proxy json value inside it, are read through their traps once per property", async () => {
    const { store, owner, edits } = await setup();
    const gets = [];
    const counting = (target) => new Proxy(target, { get(t, k, r) { if (typeof k === "string") gets.push(k); return Reflect.get(t, k, r); } });
    const row = counting({ id: "e1", path: "p", meta: counting({ k: 1 }) });
    await owner.tx(async (tx) => { await tx.put(edits, row); });
    assert.deepEqual(gets.sort(), ["id", "k", "meta", "path"]);
    assert.equal((await edits.get("e1")).path, "p");
    await store.close();
  });

  test("a getter or Proxy trap that throws gives invalid/args with the user's error as cause; nothing is committed", async () => {
    const { store, owner, edits } = await setup();
    const head = store.head;
    const mine = new Error("not now");
    const e1 = await rejectsWith(owner.tx(async (tx) => { await tx.put(edits, { id: "e1", get path() { throw mine; } }); }), "invalid/args", ["row", "not now"]);
    assert.equal(e1.cause, mine);
    const e2 = await rejectsWith(owner.tx(async (tx) => { await tx.put(edits, new Proxy({}, { ownKeys() { throw mine; } })); }), "invalid/args");
    assert.equal(e2.cause, mine);
    assert.equal(store.head, head);
    await store.close();
  });
});

describe("errors of the user's own code", () => {
  test("a where callback that throws gives invalid/args with the callback's error as cause", async () => {
    const store = await openStore({ backend: "memory" });
    const owner = store.object({ type: "fh" });
    const edits = owner.table(Edits);
    const mine = new TypeError("oops in where");
    const e = await rejectsWith(owner.tx(async (tx) => { await tx.deleteWhere(edits, () => { throw mine; }); }), "invalid/args", ["where callback", "oops in where"]);
    assert.equal(e.cause, mine);
    await store.close();
  });

  test("a bulk write's where callback that returns nothing is refused, not taken for every row", async () => {
    const store = await openStore({ backend: "memory" });
    const owner = store.object({ type: "fh" });
    const edits = owner.table(Edits);
    await owner.tx(async (tx) => {
      await tx.put(edits, { id: "a", path: "a/1" });
      await tx.put(edits, { id: "b", path: "b/1" });
    });
    const head = store.head;
    // Braces and no return: the callback gives undefined.
    await rejectsWith(owner.tx(async (tx) => { await tx.deleteWhere(edits, (e) => { eq(e.path, "a/1"); }); }), "invalid/args", ["tx.deleteWhere(fh/edits)", "returned undefined", "no where"]);
    await rejectsWith(owner.tx(async (tx) => { await tx.updateWhere(edits, () => null, { n: 1 }); }), "invalid/args", ["tx.updateWhere(fh/edits)", "returned null"]);
    assert.equal(store.head, head, "nothing committed");
    assert.equal(await edits.count(), 2, "no row deleted");
    // No where at all still means every row, as documented.
    await owner.tx(async (tx) => { await tx.deleteWhere(edits); });
    assert.equal(await edits.count(), 0);
    await store.close();
  });

  test("a tx callback's own error and an adopt hook's error reach the caller as they are", async () => {
    const store = await openStore({ backend: "memory" });
    const hookError = new RangeError("view broke");
    let fail = false;
    const owner = store.object({ type: "fh" }, { adopt: () => { if (fail) throw hookError; } });
    const edits = owner.table(Edits);
    await edits.count();
    const mine = new Error("my own");
    await assert.rejects(owner.tx(async () => { throw mine; }), (e) => e === mine && !(e instanceof StoreError));
    fail = true;
    await assert.rejects(owner.tx(async (tx) => { await tx.put(edits, { id: "e1", path: "p" }); }), (e) => e === hookError);
    assert.equal((await edits.get("e1")).path, "p", "the commit stands");
    await store.close();
  });
});
