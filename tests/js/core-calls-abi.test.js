// The module's Core class over its plain exports (wasm/core_post.js,
// onestore_call in wasm/bindings.cc; wasm/ABI.md, "Calls"): the methods the
// package calls, numbered alike on both sides; strings and bytes through
// the call room both ways, at any size and in any script; numbers, booleans
// and a Core as numbers; a bad argument or a deleted core refused in JS. The store's own suites run every method
// through it; this file holds the boundary's own rules.

import assert from "node:assert/strict";
import { test } from "node:test";

import { nodeRuntime } from "../../js/loader-node.js";

const TABLE = '[{"op":"table","table":"t/t","version":1,"columns":{"id":{"type":"str"},"s":{"type":"str"}},"key":["id"]}]';

async function openCore() {
  const mod = await nodeRuntime.load();
  const core = new mod.Core();
  assert.match(core.open('{"backend":"memory"}'), /^\{"id":/);
  return { mod, core };
}

test("every method the package calls answers through onestore_call, by its own number", async () => {
  const { mod, core } = await openCore();
  // Answers that only the right method gives: a wrong number in either
  // list would call another method, with other arguments.
  assert.equal(core.head(), 0);
  const a = core.ownerId("a");
  assert.ok(a > 0);
  assert.equal(core.ownerId("a"), a);
  assert.equal(core.commitAs(TABLE, a, 1000), 1);
  assert.equal(core.head(), 1);
  assert.deepEqual(JSON.parse(core.tables()).map((t) => t.table), ["t/t"]);
  assert.equal(core.commit('[{"op":"put","table":"t/t","row":{"id":"k","s":"v"}}]', '{"owner":"a"}').length > 0, true);
  assert.deepEqual(JSON.parse(core.get("t/t", '["k"]')), ["k", "v"]);
  assert.equal(core.count("t/t", "{}"), "1");
  assert.equal(JSON.parse(core.outboxRead(0, 10)).commits.length, 2);
  const tx = core.txOpen();
  assert.ok(tx > 0);
  assert.equal(core.txCommitAs(tx, '[{"op":"put","table":"t/t","row":{"id":"k2","s":"w"}}]', a, 1001), 3);
  assert.match(core.page("t/t", '{"table":"t/t"}', 10, ""), /"k2"/);
  assert.equal(core.lastError(), "");
  assert.match(JSON.parse(mod.errorCodes()).map((c) => c.code).join(" "), /invalid\/args .*limit/);
  assert.equal(core.close(), "");
  assert.match(core.get("t/t", '["k"]'), /^!closed /);
  core.delete();
});

test("strings and bytes cross whole both ways: any script, any size; a lone surrogate as Emscripten's encoder writes it", async () => {
  const { core } = await openCore();
  const a = core.ownerId("a");
  assert.equal(core.commitAs(TABLE, a, 1000), 1);
  const big = "é😀 – ok ".repeat(60000);  // about 720 KB of UTF-8: a room that grows the heap
  const row = (id, s) => JSON.stringify([{ op: "put", table: "t/t", row: { id, s } }]);
  assert.equal(core.commitAs(row("wide", big), a, 1001), 2);
  assert.equal(core.commitAs(new TextEncoder().encode(row("bytes", "é as bytes")), a, 1002), 3);
  assert.deepEqual(JSON.parse(core.get("t/t", '["wide"]')), ["wide", big]);
  assert.deepEqual(JSON.parse(core.get("t/t", JSON.stringify(["bytes"]))), ["bytes", "é as bytes"]);
  // After the big answer, a small one reads its own length.
  assert.equal(core.get("t/t", '["none"]'), "null");
  // A lone surrogate reaches the core as embind sent it: Emscripten's
  // encoder folds U+D800 and the "s" after it into U+10073 (TextEncoder
  // would write U+FFFD). The core names the table it was given.
  const folded = core.get("t\uD800s", '["k"]');
  assert.match(folded, /^!invalid\/args /);
  assert.equal(folded, core.get("t\u{10073}", '["k"]'));
  assert.notEqual(folded, core.get("t\uFFFDs", '["k"]'));
  // A string past 64K chars is encoded in JS first (its room is then its
  // UTF-8 length, not 3 bytes a char); one with a lone surrogate still goes
  // through Emscripten's encoder, and reaches the core as a short one does.
  const long = "é".repeat(70000);
  assert.equal(core.commitAs(row(long, "long key"), a, 1003), 4);
  assert.deepEqual(JSON.parse(core.get("t/t", JSON.stringify([long]))), [long, "long key"]);
  const pad = "x".repeat(70000);
  assert.equal(core.get(`t${pad}\uD800s`, '["k"]'), core.get(`t${pad}\u{10073}`, '["k"]'));
  core.close();
  core.delete();
});

test("a bad argument is refused in JS with a TypeError naming the method; a deleted core throws", async () => {
  const { mod, core } = await openCore();
  assert.throws(() => core.get("t/t", { key: 1 }), (e) => e instanceof TypeError && /Core\.get: argument 1/.test(e.message));
  assert.throws(() => core.declare(undefined), (e) => e instanceof TypeError && /Core\.declare: argument 0/.test(e.message));
  // The core is unharmed.
  assert.equal(core.head(), 0);
  core.close();
  core.delete();
  // The address is 0 once deleted, and every method reads it first.
  assert.throws(() => core.head(), /Core: deleted/);
  assert.throws(() => core.get("t/t", '["k"]'), /Core: deleted/);
  assert.throws(() => core.address(), /Core: deleted/);
  assert.throws(() => core.delete(), /Core: deleted/);
  // Another core of the module works on.
  const other = new mod.Core();
  assert.match(other.open('{"backend":"memory"}'), /^\{"id":/);
  other.close();
  other.delete();
});
