// Checks the numeric commit (wasm/ABI.md, "The numeric commit") through the
// public API on a memory store and a Node store file, with the real core
// behind a spy: a commit without an actor crosses as commitAs/txCommitAs (its
// owner registered once per core, the seq back as a number), a commit with an
// actor as commit's text; every owner's name reaches its outbox records; a
// failed numeric commit rejects with its own StoreError code and leaves
// nothing behind; and the core's numeric calls refuse an owner number it did
// not give and a time that is no integer.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";

import { defineTable, int, str } from "../../js/index.js";
import { withRawCalls } from "../../js/core-calls.js";
import { OpsBuffer } from "../../js/ops-buffer.js";
import { nodeRuntime } from "../../js/loader-node.js";
import { openStoreWith } from "../../js/store.js";
import { rejectsWith } from "./helpers.js";

const Notes = defineTable("notes", { columns: { id: str(), n: int() }, key: ["id"] });

const dir = mkdtempSync(join(tmpdir(), "onestore-commit-as-"));
after(() => rmSync(dir, { recursive: true, force: true }));

// openStore through a runtime whose cores log the name of every commit call
// and owner registration.
async function spiedStore(options) {
  const calls = [];
  const watchedNames = new Set(["commit", "txCommit", "commitAs", "txCommitAs", "ownerId"]);
  const runtime = {
    ...nodeRuntime,
    attach(core, wire) {
      const inner = nodeRuntime.attach ? nodeRuntime.attach(core, wire) : core;
      return new Proxy(inner, {
        get(target, prop) {
          const v = target[prop];
          if (typeof v !== "function") return v;
          if (!watchedNames.has(prop)) return v.bind(target);
          return (...args) => {
            calls.push(prop === "ownerId" ? `ownerId(${args[0]})` : prop);
            return v.apply(target, args);
          };
        },
      });
    },
  };
  return { store: await openStoreWith(runtime, options), calls };
}

let files = 0;
const backends = {
  memory: () => ({ backend: "memory" }),
  "a Node file": () => ({ backend: "sqlite", path: join(dir, `s${files++}.sqlite`) }),
};

for (const [label, options] of Object.entries(backends)) {
  test(`${label}: two owners commit as numbers, each registered once, and keep their names in the outbox; an actor's commit crosses as text`, async () => {
    const { store, calls } = await spiedStore(options());
    const a = store.object({ type: "a" });
    const b = store.object({ type: "b" });
    const ta = a.table(Notes);
    const tb = b.table(Notes);
    await ta.count();
    await tb.count();
    for (let i = 0; i < 20; i++) {
      await a.tx(async (tx) => { await tx.put(ta, { id: `a${i}`, n: i }); });
      await b.tx(async (tx) => { await tx.get(tb, "none"); await tx.put(tb, { id: `b${i}`, n: i }); });
    }
    await a.tx(async (tx) => { await tx.put(ta, { id: "by-ana", n: 0 }); }, { actor: { kind: "person", id: "ana" } });
    const seq = await store.commit([{ op: "put", table: ta.name, row: { id: "raw", n: 1 } }]);
    assert.equal(seq, store.head);

    // Each owner's name crossed once; only the actor's commit crossed as text.
    assert.deepEqual(calls.filter((c) => c.startsWith("ownerId")), ["ownerId(a)", "ownerId(b)", "ownerId(store)"]);
    assert.deepEqual(calls.filter((c) => c === "commit" || c === "txCommit"), ["commit"]);
    assert.equal(calls.filter((c) => c === "commitAs").length, 2 + 20 + 1);
    assert.equal(calls.filter((c) => c === "txCommitAs").length, 20);

    const { commits } = await store.outbox.read(0, 1000);
    assert.equal(commits.length, store.head);
    const owners = commits.map((c) => c.owner);
    assert.deepEqual(owners.slice(0, 2), ["a", "b"]);
    for (let i = 0; i < 20; i++) assert.deepEqual(owners.slice(2 + 2 * i, 4 + 2 * i), ["a", "b"], `commits of round ${i}`);
    assert.deepEqual(commits.at(-2).actor, { kind: "person", id: "ana" });
    assert.deepEqual(owners.slice(-2), ["a", "store"]);
    for (const c of commits) {
      assert.equal(typeof c.at, "number");
      if (c !== commits.at(-2)) assert.equal(c.actor, undefined);
    }
    assert.deepEqual(commits[5].ops, [{ op: "put", table: tb.name, row: { id: "b1", n: 1 } }]);
    await store.close();
  });

  test(`${label}: a failed numeric commit rejects with its own code and leaves nothing behind; the store goes on`, async () => {
    const { store, calls } = await spiedStore(options());
    const a = store.object({ type: "a" });
    const notes = a.table(Notes);
    await a.tx(async (tx) => { await tx.put(notes, { id: "x", n: 1 }); });
    const head = store.head;
    const before = calls.length;
    // Refused inside the core's transaction (after BEGIN)...
    await rejectsWith(a.tx(async (tx) => { await tx.put(notes, { id: "y", n: 2 }); await tx.update(notes, "missing", { n: 3 }); }), "not_found");
    // ...and before it (the put's value), in a transaction the core staged.
    await rejectsWith(a.tx(async (tx) => { await tx.get(notes, "x"); await tx.put(notes, { id: "z", n: 1.5 }); }), "invalid/args", ["n"]);
    await rejectsWith(store.commit([{ op: "put", table: notes.name, row: { id: "w", n: "no" } }]), "invalid/args");
    assert.deepEqual(calls.slice(before).filter((c) => !c.startsWith("ownerId")), ["commitAs", "txCommitAs", "commitAs"]);
    assert.equal(store.head, head);
    assert.equal(await notes.get("y"), undefined);
    assert.equal(await notes.count(), 1);
    await a.tx(async (tx) => { await tx.put(notes, { id: "after", n: 4 }); });
    assert.equal(store.head, head + 1);
    assert.equal((await store.outbox.read(head, 10)).commits[0].owner, "a");
    await store.close();
  });
}

test("the core's numeric commit refuses an owner number it did not give and a time that is no integer, and answers 0 with lastError", async () => {
  const mod = await nodeRuntime.load();
  const core = new mod.Core();
  try {
    assert.equal(core.commitAs("[]", 1, 1), 0);
    assert.match(core.lastError(), /^!invalid\/args the store is not open/);
    assert.equal(core.ownerId("a"), 0, "no store: no owner numbers");
    core.open('{"backend":"memory"}');
    const a = core.ownerId("a");
    assert.equal(a, 1);
    assert.equal(core.ownerId("b"), 2);
    assert.equal(core.ownerId("a"), a);
    const table = '[{"op":"table","table":"t/t","version":1,"columns":{"id":{"type":"str"}},"key":["id"]}]';
    assert.equal(core.commitAs(table, a, 1000), 1);
    const put = '[{"op":"put","table":"t/t","row":{"id":"k"}}]';
    assert.equal(core.commitAs(put, 3, 1000), 0);
    assert.match(core.lastError(), /^!invalid\/args commit: owner 3 is not an owner number/);
    assert.equal(core.commitAs(put, 0, 1000), 0);
    assert.match(core.lastError(), /owner 0/);
    for (const at of [1.5, NaN, Infinity, 1e19]) {
      assert.equal(core.commitAs(put, a, at), 0, `at ${at}`);
      assert.match(core.lastError(), /^!invalid\/args commit context: at .* is not a time in milliseconds/);
    }
    const tx = core.txOpen();
    assert.equal(core.txCommitAs(tx, put, 2, 1234), 2);
    assert.equal(core.txCommitAs(tx, put, 2, 1234), 0, "the transaction is closed by its commit");
    assert.match(core.lastError(), /^!invalid\/args transaction \d+ is not open/);
    const { commits } = JSON.parse(core.outboxRead(0, 10));
    assert.deepEqual(commits.map((c) => [c.seq, c.owner, c.at]), [[1, "a", 1000], [2, "b", 1234]]);
    assert.equal(core.head(), 2);
  } finally {
    core.close();
    core.delete();
  }
});

// The module as withRawCalls sees it, with the export `name` counting its
// calls (counted.calls).
function counting(loaded, name) {
  const counted = { calls: 0 };
  counted.mod = new Proxy(loaded, {
    get(target, prop) {
      const v = target[prop];
      if (prop !== name) return v;
      return (...args) => {
        counted.calls++;
        return v(...args);
      };
    },
  });
  return counted;
}

test("the raw commit (Core.address, onestore_ops_room, onestore_commit_room) commits a binary batch and ASCII text ops as commitAs does; text that is not ASCII goes through the Core's own commitAs; a closed core and a deleted one answer as that commitAs", async () => {
  const loaded = await nodeRuntime.load();
  assert.equal(typeof loaded._onestore_ops_room, "function");
  assert.equal(typeof loaded._onestore_commit_room, "function");
  const counted = counting(loaded, "_onestore_commit_room");
  const core = withRawCalls(counted.mod, new loaded.Core());
  assert.equal(typeof core.address(), "number");
  core.open('{"backend":"memory"}');
  const a = core.ownerId("a");
  const table = '[{"op":"table","table":"t/t","version":1,"columns":{"id":{"type":"str"},"n":{"type":"int"}},"key":["id"]}]';
  assert.equal(core.commitAs(table, a, 1000), 1);  // ASCII text: the room
  assert.equal(counted.calls, 1);
  const ops = new OpsBuffer();
  // A batch over the room's 64 KiB (given back after its commit), then small ones.
  for (let i = 0; i < 3000; i++) assert.ok(ops.putValues("t/t", ["id", "n"], [`k${i}`.padEnd(40, "x"), i]));
  assert.ok(ops.batch().length > 64 << 10);
  assert.equal(core.commitAs(ops.batch(), a, 1001), 2);
  assert.equal(JSON.parse(core.lastOps()).length, 3000);
  for (let s = 3; s < 6; s++) {
    ops.empty();
    ops.putValues("t/t", ["id", "n"], [`s${s}`, s]);
    assert.equal(core.commitAs(ops.batch(), a, 1000 + s), s);
    assert.deepEqual(JSON.parse(core.lastOps()), [{ op: "put", table: "t/t", row: { id: `s${s}`, n: s } }]);
  }
  assert.equal(counted.calls, 5);
  const tx = core.txOpen();
  ops.empty();
  ops.putValues("t/t", ["id", "n"], ["in-tx", 7]);
  assert.equal(core.txCommitAs(tx, ops.batch(), a, 2000), 6);
  assert.deepEqual(JSON.parse(core.get("t/t", '["in-tx"]')), ["in-tx", 7]);
  // Text ops: ASCII through the room (a put, an update and a delete by key,
  // in a transaction and not), the rest through the Core's own commitAs.
  const text = [
    ['[{"op":"put","table":"t/t","row":{"id":"txt","n":1}},{"op":"update","table":"t/t","key":["s3"],"set":{"n":{"value":30}}},{"op":"delete","table":"t/t","key":["s4"]}]', 1],
    ['[{"op":"put","table":"t/t","row":{"id":"clé","n":2}}]', 0],
  ];
  let seq = 6;
  for (const [t, rawCalls] of text) {
    const before = counted.calls;
    const tx2 = core.txOpen();
    assert.equal(core.txCommitAs(tx2, t, a, 2100), ++seq);
    assert.equal(core.commitAs(t.replace(/"n":(\d)/, '"n":$1$1'), a, 2200), ++seq);
    assert.equal(counted.calls - before, 2 * rawCalls, t);
  }
  assert.deepEqual(JSON.parse(core.get("t/t", '["txt"]')), ["txt", 11]);
  assert.deepEqual(JSON.parse(core.get("t/t", '["clé"]')), ["clé", 22]);
  assert.deepEqual(JSON.parse(core.get("t/t", '["s3"]')), ["s3", 30]);
  assert.equal(core.get("t/t", '["s4"]'), "null");
  assert.equal(core.commitAs('[{"op":"put","table":"t/t","row":{"id":"bad","n":"no"}}]', a, 2300), 0);
  assert.match(core.lastError(), /^!invalid\/args .*"no"/);
  assert.deepEqual(JSON.parse(core.get("t/t", `["${"k2999".padEnd(40, "x")}"]`)), ["k2999".padEnd(40, "x"), 2999]);
  // A bad batch fails inside the core, as the Core's own commitAs fails.
  assert.equal(core.commitAs(Uint8Array.of(1, 2, 3), a, 3000), 0);
  assert.match(core.lastError(), /^!invalid\/args/);
  core.close();
  assert.equal(core.commitAs(ops.batch(), a, 3001), 0);
  assert.match(core.lastError(), /^!closed/);
  core.delete();
  const before = counted.calls;
  assert.throws(() => core.commitAs(ops.batch(), a, 3002), /deleted/);
  assert.throws(() => core.commitAs(table, a, 3003), /deleted/);
  assert.equal(counted.calls, before);
});

test("the raw get (onestore_get_room) answers as the Core's own get: rows of any size and text, a missing key, an unknown table, a closed core; text that is not ASCII goes through the Core's own get", async () => {
  const loaded = await nodeRuntime.load();
  const counted = counting(loaded, "_onestore_get_room");
  const core = withRawCalls(counted.mod, new loaded.Core());
  const ownGet = (table, key) => loaded.Core.prototype.get.call(core, table, key);
  core.open('{"backend":"memory"}');
  const a = core.ownerId("a");
  const table = '[{"op":"table","table":"t/t","version":1,"columns":{"id":{"type":"str"},"s":{"type":"str"}},"key":["id"]}]';
  assert.equal(core.commitAs(table, a, 1000), 1);
  const big = "é😀x".repeat(70000);  // 490,000 bytes of UTF-8: the length's third byte is used
  const ops = new OpsBuffer();
  for (const [id, s] of [["plain", "text"], ["wide", "é😀 – ok"], ["big", big], ["clé", "non-ASCII key"]]) ops.putValues("t/t", ["id", "s"], [id, s]);
  assert.equal(core.commitAs(ops.batch(), a, 1001), 2);
  const cases = [
    ["t/t", '["plain"]', ["plain", "text"], 1],
    ["t/t", '["wide"]', ["wide", "é😀 – ok"], 1],
    ["t/t", '["big"]', ["big", big], 1],
    ["t/t", '["clé"]', ["clé", "non-ASCII key"], 0],  // the Core's own get
    ["t/t", '["none"]', null, 1],
  ];
  for (const [t, key, row, rawCalls] of cases) {
    const before = counted.calls;
    const answer = core.get(t, key);
    assert.equal(counted.calls - before, rawCalls, key);
    assert.equal(answer, ownGet(t, key), key);
    assert.deepEqual(JSON.parse(answer), row, key);
  }
  // After the big answer, a small one reads its own length, not the room's.
  assert.equal(core.get("t/t", '["plain"]'), '["plain","text"]');
  assert.match(core.get("t/none", '["plain"]'), /^!invalid\/args .*t\/none/);
  assert.equal(core.get("t/none", '["plain"]'), ownGet("t/none", '["plain"]'));
  assert.match(core.get("t/t", "not json"), /^!invalid\/args/);
  core.close();
  assert.match(core.get("t/t", '["plain"]'), /^!closed/);
  core.delete();
  const before = counted.calls;
  assert.throws(() => core.get("t/t", '["plain"]'), /deleted/);
  assert.equal(counted.calls, before);
});
