// Checks tx.put's loop (issue 13, "a sixth step"): readRow (js/data.js) reads
// the caller's row once straight into the values OpsBuffer.putValues writes,
// with no plain copy of the row, and keeps every rule plainRow keeps: the
// same values, the same errors with the same codes and messages in the same
// order, each getter called once (also when the row goes the wire JSON way),
// a getter that puts another row meanwhile, and the digits a json value's
// integers are written with.

import { test } from "node:test";
import assert from "node:assert/strict";

import { plainRow, readRow } from "../../js/data.js";
import { OpsBuffer } from "../../js/ops-buffer.js";
import { openStore, defineTable, str, int, json } from "../../js/index.js";

// What readRow gives, as the object plainRow would: { row } or { error }.
function viaReadRow(row) {
  try {
    const vals = ["stale", "stale", "stale", "stale", "stale", "stale"];
    const names = readRow(row, "tx.put(t/x): row", vals);
    const out = {};
    names.forEach((k, i) => Object.defineProperty(out, k, { value: vals[i], enumerable: true, writable: true, configurable: true }));
    return { row: out };
  } catch (e) {
    return { error: [e.constructor.name, e.code, e.message, e.cause] };
  }
}
function viaPlainRow(row) {
  try {
    return { row: plainRow(row, "tx.put(t/x): row") };
  } catch (e) {
    return { error: [e.constructor.name, e.code, e.message, e.cause] };
  }
}

// Each case is a function making a fresh row, so both readers see the same.
const thrown = new Error("no path today");
const cases = {
  "a plain row": () => ({ id: "e1", path: "p", entry: 1, meta: { tags: ["a", { b: 2n }], n: null } }),
  "a null-prototype row": () => Object.assign(Object.create(null), { id: "e1", at: 2 }),
  "an own __proto__ key": () => JSON.parse('{"id":"e1","__proto__":{"a":1}}'),
  "undefined values": () => ({ id: "e1", path: undefined, at: 3 }),
  "integer-like keys": () => ({ b: 1, 2: "two", a: 3, 1: "one" }),
  "a Float32Array value": () => ({ id: "e1", v: new Float32Array([1, 2]) }),
  "a function value": () => ({ id: "e1", f() {} }),
  "a symbol value": () => ({ id: "e1", s: Symbol("s") }),
  "a toJSON method": () => ({ id: "e1", toJSON: () => 1 }),
  "a nested toJSON": () => ({ id: "e1", meta: { toJSON: () => 1 } }),
  "a nested Date": () => ({ id: "e1", meta: { at: new Date(0) } }),
  "a class instance": () => new (class Edit { constructor() { this.id = "e1"; } })(),
  "a Map row": () => new Map(),
  "an array row": () => [1],
  "a string row": () => "e1",
  "a null row": () => null,
  "a BigInt row": () => 5n,
  "a value that refers to the row": () => { const r = { id: "e1", meta: {} }; r.meta.back = r; return r; },
  "a nested cycle": () => { const m = { a: [] }; m.a.push(m); return { id: "e1", meta: m }; },
  "a throwing getter": () => ({ id: "e1", get path() { throw thrown; } }),
  // The spread reads every property before any is checked: the getter's
  // throw is what is reported, not the function before it.
  "a function, then a throwing getter": () => ({ f() {}, get path() { throw thrown; } }),
  "a throwing ownKeys trap": () => new Proxy({}, { ownKeys() { throw thrown; } }),
  "a throwing getPrototypeOf trap is reported as plainRow reports it": () => new Proxy({ id: "e1" }, { getPrototypeOf() { throw thrown; } }),
  "a nested value too deep": () => { let m = {}; const top = m; for (let i = 0; i < 1100; i++) { m.x = {}; m = m.x; } return { id: "e1", meta: top }; },
  "a nested throwing getter": () => ({ id: "e1", meta: { get a() { throw thrown; } } }),
};

for (const [name, make] of Object.entries(cases)) {
  test(`readRow gives what plainRow gives for ${name}`, () => {
    assert.deepEqual(viaReadRow(make()), viaPlainRow(make()));
  });
}

test("readRow reads each property of a Proxy row once, and copies its object values", () => {
  const reads = [];
  const meta = { a: 1 };
  const row = new Proxy({ id: "e1", meta }, {
    get(target, k, r) { if (typeof k === "string") reads.push(k); return Reflect.get(target, k, r); },
  });
  const vals = [];
  assert.deepEqual(readRow(row, "row", vals), ["id", "meta"]);
  assert.deepEqual(reads, ["id", "meta"]);
  assert.deepEqual(vals, ["e1", { a: 1 }]);
  assert.notEqual(vals[1], meta);
});

test("a row's symbol-keyed getter is not called: a row's data is its own string-keyed properties", () => {
  let calls = 0;
  const row = { id: "e1", get [Symbol("s")]() { calls++; return 1; } };
  assert.deepEqual(readRow(row, "row", []), ["id"]);
  assert.equal(calls, 0);
});

test("putValues leaves an undefined value out of the shape, as put() leaves out an undefined member", () => {
  const a = new OpsBuffer();
  const b = new OpsBuffer();
  assert.equal(a.putValues("t/x", ["id", "path", "at"], ["e1", undefined, 3]), true);
  assert.equal(b.put("t/x", { id: "e1", at: 3 }), true);
  assert.deepEqual([...a.batch()], [...b.batch()]);
});

test("a json value's integers are written as JSON.stringify writes them", () => {
  const ints = [0, -0, 7, 10, -10, 99, 100, 123456789, -987654321, 2 ** 53 - 1, -(2 ** 53 - 1), 1e15, 1.5, -0.25];
  for (const n of ints) {
    const ops = new OpsBuffer();
    ops.len = 0;
    assert.equal(ops.jsonInto({ n, a: [n] }, 0), true);
    assert.equal(Buffer.from(ops.bytes.subarray(0, ops.len)).toString(), JSON.stringify({ n, a: [n] }), `for ${n}`);
  }
});

const Edits = defineTable("edits", { columns: { id: str(), path: str(), at: int(), meta: json() }, key: ["id"] });

test("a row that goes the wire JSON way calls each getter once and stores what it returned", async () => {
  const store = await openStore({ backend: "memory" });
  try {
    const o = store.object({ type: "t" });
    const t = o.table(Edits);
    const calls = { path: 0, meta: 0 };
    const row = {
      id: "e1",
      get path() { calls.path++; return `p${calls.path}`; },
      at: 1,
      get meta() { calls.meta++; return { big: 2n ** 62n, n: calls.meta }; },  // a BigInt: the JSON path
    };
    await o.tx(async (tx) => { await tx.put(t, row); });
    assert.deepEqual(calls, { path: 1, meta: 1 });
    const got = await t.get("e1");
    assert.equal(got.path, "p1");
    assert.deepEqual(got.meta, { big: 2n ** 62n, n: 1 });
  } finally {
    await store.close();
  }
});

test("a getter that puts another row meanwhile leaves both rows as they were read", async () => {
  const store = await openStore({ backend: "memory" });
  try {
    const o = store.object({ type: "t" });
    const t = o.table(Edits);
    await o.tx(async (tx) => {
      const inner = { id: "e2", path: "inner", at: 2, meta: { inner: true } };
      const outer = { id: "e1", path: "outer", get at() { tx.put(t, inner); return 1; }, meta: { outer: true } };
      await tx.put(t, outer);
      await tx.put(t, { id: "e3", path: "after", at: 3, meta: { after: 1 } });
    });
    assert.deepEqual(await t.get("e1"), { id: "e1", path: "outer", at: 1, meta: { outer: true } });
    assert.deepEqual(await t.get("e2"), { id: "e2", path: "inner", at: 2, meta: { inner: true } });
    assert.deepEqual(await t.get("e3"), { id: "e3", path: "after", at: 3, meta: { after: 1 } });
  } finally {
    await store.close();
  }
});
