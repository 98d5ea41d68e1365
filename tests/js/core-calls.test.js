// Checks js/core-calls.js with a fake core: answers become payloads or
// StoreErrors, a storage failure breaks the gate for every later call, and a
// commit's ops are fetched from the core lazily, at most once, and never
// after a later commit; a commit without an actor crosses as numbers
// (commitAs: the owner's number, registered once, and a seq or 0 back).

import { test } from "node:test";
import assert from "node:assert/strict";

import { commitContext, commitMeta, makeGate } from "../../js/core-calls.js";
import { StoreError } from "../../js/index.js";
import { fakeCore } from "./fake-core.js";
import { throwsWith } from "./helpers.js";

test("a payload passes through and a failed answer becomes a StoreError with its code", () => {
  const { core } = fakeCore();
  const gate = makeGate(core, 0);
  assert.equal(gate.call("x", () => '{"a":1}'), '{"a":1}');
  throwsWith(() => gate.call("x", () => "!not_found no such row"), "not_found", ["no such row"]);
  assert.equal(gate.broken, null, "a refusal does not break the store");
});

test("storage_failed or a trap breaks the gate: every later call throws that error", () => {
  const { core } = fakeCore();
  const gate = makeGate(core, 0);
  const e = throwsWith(() => gate.call("commit", () => { throw new WebAssembly.RuntimeError("unreachable"); }), "storage_failed");
  assert.equal(gate.broken, e);
  assert.throws(() => gate.call("get", () => "ok"), (x) => x === e);
});

test("a commit's ops are not fetched until asked for, then fetched once and shared", () => {
  const f = fakeCore();
  const gate = makeGate(f.core, 0);
  const done = gate.commit("c", () => f.core.commit('[{"op":"put","table":"t","row":{"n":1152921504606846977}}]', "{}"));
  assert.equal(done.seq, 1);
  assert.equal(gate.lastHead, 1);
  assert.deepEqual(f.names(), ["commit"], "no lastOps crossing for a commit nobody reads");
  const ops = done.ops();
  assert.equal(ops[0].row.n, 2n ** 60n + 1n, "ints beyond 2^53 stay exact");
  assert.equal(done.ops(), ops);
  assert.deepEqual(f.names(), ["commit", "lastOps"]);
});

test("the ops of a commit cannot be fetched after a later commit (they would be the later one's)", () => {
  const f = fakeCore();
  const gate = makeGate(f.core, 0);
  const first = gate.commit("c", () => f.core.commit("[1]", "{}"));
  gate.commit("c", () => f.core.commit("[2]", "{}"));
  throwsWith(() => first.ops(), "invalid/args", ["seq 1", "later commit"]);
});

test("checkOpen refuses once closing; commitMeta checks the actor", () => {
  const gate = makeGate(fakeCore().core, 0);
  gate.checkOpen("x");
  gate.closing = true;
  throwsWith(() => gate.checkOpen("store.commit"), "closed", ["store.commit"]);
  assert.deepEqual(Object.keys(JSON.parse(commitMeta("notes", { actor: { kind: "person", id: "ana" } }, "w"))), ["owner", "at", "actor"]);
  assert.ok(throwsWith(() => commitMeta("notes", { actor: "ana" }, "notes.tx"), "invalid/args", ["ctx.actor"]) instanceof StoreError);
});

test("a commit without an actor crosses as numbers: the owner is registered once per name, the seq comes back as a number", () => {
  const f = fakeCore();
  const gate = makeGate(f.core, 0);
  assert.equal(commitContext("n", undefined, "n.tx"), null);
  assert.equal(commitContext("n", {}, "n.tx"), null);
  const a = gate.commitOps("n.tx", "n", null, "[1]");
  const b = gate.commitOps("n.tx", "n", null, "[2]", 7);
  const c = gate.commitOps("m.tx", "m", null, "[3]");
  assert.deepEqual([a.seq, b.seq, c.seq], [1, 2, 3]);
  assert.deepEqual(f.calls.filter((x) => x[0] !== "lastOps").map((x) => x.slice(0, x[0] === "txCommitAs" ? 4 : 3)),
    [["ownerId", "n"], ["commitAs", "[1]", 1], ["txCommitAs", 7, "[2]", 1], ["ownerId", "m"], ["commitAs", "[3]", 2]]);
  assert.equal(gate.lastHead, 3);
});

test("commitContext reads the caller's ctx.actor once", () => {
  let reads = 0;
  const ctx = { get actor() { reads++; return { kind: "person", id: "ana" }; } };
  assert.deepEqual(JSON.parse(commitContext("n", ctx, "n.tx")).actor, { kind: "person", id: "ana" });
  assert.equal(reads, 1);
  reads = 0;
  assert.equal(commitContext("n", { get actor() { reads++; return undefined; } }, "n.tx"), null);
  assert.equal(reads, 1);
});

test("a commit with an actor crosses its context as text", () => {
  const f = fakeCore();
  const gate = makeGate(f.core, 0);
  const meta = commitContext("n", { actor: { kind: "person", id: "ana" } }, "n.tx");
  assert.deepEqual(JSON.parse(meta).actor, { kind: "person", id: "ana" });
  assert.equal(gate.commitOps("n.tx", "n", meta, "[1]").seq, 1);
  assert.deepEqual(f.names(), ["commit"]);
});

test("a numeric commit that answers 0 throws the StoreError of lastError, and the gate stays usable", () => {
  const f = fakeCore({ commitAs: () => 0, lastError: () => "!fenced another owner took the store" });
  const gate = makeGate(f.core, 0);
  throwsWith(() => gate.commitOps("n.tx", "n", null, "[1]"), "fenced", ["another owner took the store"]);
  assert.equal(gate.lastHead, 0);
  const g = makeGate(fakeCore({ commitAs: () => 0 }).core, 0);
  throwsWith(() => g.commitOps("n.tx", "n", null, "[1]"), "storage_failed", ["seq 0 without an error"]);
});
