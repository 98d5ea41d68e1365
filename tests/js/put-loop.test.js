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
function viaReadRow(row, prev = null) {
  try {
    const vals = ["stale", "stale", "stale", "stale", "stale", "stale"];
    const names = readRow(row, "tx.put(t/x): row", vals, prev);
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

// Issue 13, "a ninth step": tx.put keeps the table handle it resolved last,
// and OpsBuffer.putValues writes a row of the last row's shape in one pass.
// These guard those two shortcuts: the handle kept must never stand in for
// another value passed as the table, and a row that leaves the shape in the
// middle of a run (an undefined value, a value left to the wire JSON, other
// names) must be written as the general path writes it.

const Others = defineTable("others", { columns: { id: str(), n: int() }, key: ["id"] });
const Optional = defineTable("optional", { columns: { id: str(), path: str().optional(), at: int(), meta: json() }, key: ["id"] });

test("tx.put resolves each table it is given: another table, another owner's handle, a definition, a non-handle after a run of puts", async () => {
  const store = await openStore({ backend: "memory" });
  try {
    const o = store.object({ type: "t" });
    const p = store.object({ type: "p" });
    const t = o.table(Edits);
    const u = o.table(Others);
    const theirs = p.table(Edits);
    await o.tx(async (tx) => {
      for (let i = 0; i < 3; i++) await tx.put(t, { id: `e${i}`, path: "a", at: i, meta: {} });
      await tx.put(u, { id: "u1", n: 1 });  // another table of the same owner, after a run
      await tx.put(t, { id: "e3", path: "b", at: 3, meta: {} });
      await tx.put(Edits, { id: "e4", path: "c", at: 4, meta: {} });  // the definition, not the handle
      await tx.put(t, { id: "e5", path: "d", at: 5, meta: {} });
    });
    // A table the put must refuse, right after a run of puts into t: each
    // is checked (not taken for the last table), and fails its transaction.
    const refused = [
      [theirs, /belongs to owner "p"/],
      [{ name: t.name }, /expected a table handle/],
      [null, /./],
    ];
    for (const [table, words] of refused) {
      await assert.rejects(o.tx(async (tx) => {
        for (let i = 0; i < 3; i++) await tx.put(t, { id: `r${i}`, path: "r", at: i, meta: {} });
        await tx.put(table, { id: "x", path: "x", at: 0, meta: {} });
      }), (e) => e.code === "invalid/args" && words.test(e.message));
    }
    assert.equal(await t.get("r0"), undefined);
    const got = [];
    for (const id of ["e0", "e1", "e2", "e3", "e4", "e5"]) got.push([id, (await t.get(id))?.path]);
    assert.deepEqual(got, [["e0", "a"], ["e1", "a"], ["e2", "a"], ["e3", "b"], ["e4", "c"], ["e5", "d"]]);
    assert.deepEqual(await u.get("u1"), { id: "u1", n: 1 });
    assert.equal(await theirs.get("x"), undefined);
  } finally {
    await store.close();
  }
});

test("a run of rows of one shape, broken by an undefined value, a value left to JSON and other names, stores each row as put", async () => {
  const rows = [
    { id: "a1", path: "p/1", at: 1, meta: { n: 1 } },
    { id: "a2", path: "p/2", at: 2, meta: { n: 2 } },
    { id: "a3", path: undefined, at: 3, meta: { n: 3 } },        // the same names, one undefined: another shape
    { id: "a4", path: "p/4", at: 4, meta: { n: 4 } },
    { id: "a5", path: "p/5", at: 5, meta: { big: 2n ** 62n } },  // the same shape, a BigInt: the wire JSON
    { id: "a6", path: "p/6", at: 6, meta: { n: 6 } },
    { id: "a7", path: "p/\u00e9", at: 7, meta: ["\u00e9"] },     // the same shape, non-ASCII text
    { at: 8, id: "a8", meta: [], path: "p/8" },                   // other names' order: another shape
    { id: "a9", path: "p/9", at: 9, meta: { n: 9 } },
  ];
  const store = await openStore({ backend: "memory" });
  try {
    const o = store.object({ type: "t" });
    const t = o.table(Optional);
    await o.tx(async (tx) => { for (const r of rows) await tx.put(t, r); });
    for (const r of rows) {
      const want = { ...r };
      if (want.path === undefined) want.path = null;
      assert.deepEqual(await t.get(r.id), { id: want.id, path: want.path, at: want.at, meta: want.meta }, r.id);
    }
    // The batch putValues wrote is the one the general path writes row by row.
    const fast = new OpsBuffer();
    const slow = new OpsBuffer();
    for (const r of rows.filter((x) => x.id !== "a5")) {
      const names = Object.keys(r);
      assert.equal(fast.putValues("t/optional", names, names.map((k) => r[k])), true);
      slow.table = null;  // no shape kept: each row takes the general path
      slow.names = null;
      assert.equal(slow.putValues("t/optional", names, names.map((k) => r[k])), true);
    }
    const shapes = (b) => [...b.batch()].filter((x) => x === 0x53).length;
    assert.ok(shapes(fast) < shapes(slow));
    assert.equal(fast.total, slow.total);
  } finally {
    await store.close();
  }
});

// Issue 13, session 34: a row with the keys of the batch's current shape
// reads them as that shape's array (readRow's `prev`, found by for-in with
// no array made), and a json object's members are walked by for-in. Both
// must give exactly what Object.keys gives: the same names, values, errors
// and getter calls for every case above, no inherited key when someone
// made a property of Object.prototype enumerable, and the shape's array
// never changed by a put that adds a versioned column's default.

function keysOf(make) {
  try {
    const r = make();
    return r !== null && typeof r === "object" ? Object.keys(r) : ["id"];
  } catch {
    return ["id"];
  }
}

for (const [name, make] of Object.entries(cases)) {
  test(`readRow with the row's own keys as prev gives what plainRow gives for ${name}`, () => {
    assert.deepEqual(viaReadRow(make(), keysOf(make)), viaPlainRow(make()));
  });
}

test("readRow gives prev itself for a row with its keys in its order, and a fresh array for any other row", () => {
  const prev = ["id", "path", "at"];
  const vals = [];
  assert.equal(readRow({ id: "e1", path: "p", at: 1 }, "row", vals, prev), prev);
  assert.deepEqual(vals.slice(0, 3), ["e1", "p", 1]);
  assert.equal(readRow(Object.assign(Object.create(null), { id: "e1", path: "p", at: 1 }), "row", vals, prev), prev);
  // A symbol key is not data (Object.keys leaves it out too).
  assert.equal(readRow({ id: "e1", path: "p", at: 1, [Symbol("s")]: 1 }, "row", vals, prev), prev);
  for (const other of [{ path: "p", id: "e1", at: 1 }, { id: "e1", path: "p" }, { id: "e1", path: "p", at: 1, more: 2 }, { 0: "x", id: "e1", path: "p", at: 1 }]) {
    const names = readRow(other, "row", vals, prev);
    assert.notEqual(names, prev);
    assert.deepEqual(names, Object.keys(other));
  }
  assert.deepEqual(prev, ["id", "path", "at"]);
});

test("a Proxy row read with prev calls each getter once, after its keys", () => {
  const log = [];
  const row = new Proxy({ id: "e1", meta: { a: 1 } }, {
    get(target, k, r) { if (typeof k === "string") log.push(`get ${k}`); return Reflect.get(target, k, r); },
    ownKeys(target) { log.push("ownKeys"); return Reflect.ownKeys(target); },
  });
  const vals = [];
  const names = readRow(row, "row", vals, ["id", "meta"]);
  assert.deepEqual(names, ["id", "meta"]);
  assert.deepEqual(log.filter((x) => x.startsWith("get")), ["get id", "get meta"]);
  assert.equal(log.indexOf("ownKeys") < log.indexOf("get id"), true);
  assert.deepEqual(vals, ["e1", { a: 1 }]);
});

test("with an enumerable property on Object.prototype, a row's names and a json value's text are still its own", () => {
  const vals = [];
  const ops = new OpsBuffer();
  let names;
  let jsonText;
  Object.defineProperty(Object.prototype, "polluted", { value: 1, enumerable: true, configurable: true, writable: true });
  try {
    names = readRow({ id: "e1", path: "p" }, "row", vals, ["id", "path", "polluted"]);
    // Written by the general path (JSON.stringify, own keys only), not by for-in.
    jsonText = ops.jsonText({ a: 1 });
  } finally {
    delete Object.prototype.polluted;
  }
  assert.deepEqual(names, ["id", "path"]);
  assert.equal(jsonText, false);
  assert.equal(ops.jsonText({ a: 1 }), true);
});

const Versioned = defineTable("versioned", { columns: { id: str(), n: int(), meta: json({ version: 2, migrate: (v) => v, default: { d: 1 } }) }, key: ["id"] });
const Pair = defineTable("pair", { columns: { id: str(), n: int() }, key: ["id"] });

test("puts that alternate between a table and a versioned table whose rows leave its json column to its default store every row", async () => {
  const store = await openStore({ backend: "memory" });
  try {
    const o = store.object({ type: "t" });
    const p = o.table(Pair);
    const v = o.table(Versioned);
    await o.tx(async (tx) => {
      for (let i = 0; i < 4; i++) {
        await tx.put(p, { id: `p${i}`, n: i });
        await tx.put(v, { id: `v${i}`, n: i });  // the keys of Pair's shape: meta is added
        await tx.put(p, { id: `q${i}`, n: 100 + i });
      }
    });
    for (let i = 0; i < 4; i++) {
      assert.deepEqual(await p.get(`p${i}`), { id: `p${i}`, n: i });
      assert.deepEqual(await v.get(`v${i}`), { id: `v${i}`, n: i, meta: { d: 1 } });
      assert.deepEqual(await p.get(`q${i}`), { id: `q${i}`, n: 100 + i });
    }
  } finally {
    await store.close();
  }
});
