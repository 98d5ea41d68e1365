// Checks js/data.js, what a write takes from the caller's values: a plain
// copy of their own enumerable data, each property read once; toJSON,
// non-plain objects and functions refused with invalid/args; a throwing
// getter or Proxy trap turned into invalid/args with the thrown error as
// `cause`.

import { test } from "node:test";
import assert from "node:assert/strict";

import { plainData, plainRow, readRow } from "../../js/data.js";
import { StoreError } from "../../js/errors.js";
import { throwsWith } from "./helpers.js";

test("a plain row is copied: equal data, no shared objects", () => {
  const meta = { tags: ["a", { b: 2n }], n: null };
  const row = { id: "e1", meta };
  const copy = plainRow(row);
  assert.deepEqual(copy, row);
  assert.notEqual(copy.meta, meta);
  assert.notEqual(copy.meta.tags, meta.tags);
});

test("a getter is called exactly once and its answer is what the copy holds", () => {
  let calls = 0;
  const row = { id: "e1", get path() { calls++; return `p${calls}`; } };
  assert.deepEqual(plainRow(row), { id: "e1", path: "p1" });
  assert.equal(calls, 1);
});

test("a Proxy row is read through one ownKeys and one get per property", () => {
  const reads = [];
  const row = new Proxy({ id: "e1", path: "p" }, {
    get(target, k, r) { if (typeof k === "string") reads.push(k); return Reflect.get(target, k, r); },
  });
  assert.deepEqual(plainRow(row), { id: "e1", path: "p" });
  assert.deepEqual(reads.sort(), ["id", "path"]);
});

test("a getter or Proxy trap that throws gives invalid/args naming the place, with the user's error as cause", () => {
  const mine = new Error("no path today");
  const e1 = throwsWith(() => plainRow({ id: "e1", get path() { throw mine; } }, "row"), "invalid/args", ["row", "no path today"]);
  assert.equal(e1.cause, mine);
  const trap = new Error("trap says no");
  const e2 = throwsWith(() => plainRow(new Proxy({}, { ownKeys() { throw trap; } }), "row"), "invalid/args", ["row"]);
  assert.equal(e2.cause, trap);
});

test("a Proxy whose getPrototypeOf trap throws is named like any trap; a StoreError a getter throws passes as it is; a detached Float32Array is refused", () => {
  const trap = new Error("no prototype");
  const proto = (target) => new Proxy(target, { getPrototypeOf() { throw trap; } });
  const read = (row) => () => readRow(row, "row", []);
  for (const f of [() => plainRow(proto({ id: "a" }), "row"), read(proto({ id: "a" }))]) {
    assert.equal(throwsWith(f, "invalid/args", ["row", "no prototype"]).cause, trap);
  }
  for (const f of [() => plainRow({ id: "a", meta: proto({}) }, "row"), read({ id: "a", meta: proto({}) }), () => plainData([proto({})], "ops")]) {
    assert.equal(throwsWith(f, "invalid/args", ["no prototype"]).cause, trap);
  }
  const mine = new StoreError("limit", "mine");
  for (const f of [() => plainRow({ get id() { throw mine; } }), read({ get id() { throw mine; } }), read({ id: "a", meta: { get v() { throw mine; } } })]) {
    assert.throws(f, (e) => e === mine);
  }
  const buffer = new ArrayBuffer(16);
  const gone = new Float32Array(buffer);
  structuredClone(buffer, { transfer: [buffer] });
  for (const f of [() => plainData({ e: gone }, "row"), read({ id: "a", e: gone })]) {
    throwsWith(f, "invalid/args", ["row.e", "detached"]);
  }
  assert.deepEqual(plainData({ e: new Float32Array(0) }), { e: new Float32Array(0) });
});

test("an object with toJSON is refused, as a row and inside a json value", () => {
  throwsWith(() => plainRow({ id: "e1", toJSON: () => ({ id: "other" }) }, "row"), "invalid/args", ["toJSON"]);
  throwsWith(() => plainRow({ id: "e1", meta: { toJSON: () => 1 } }, "row"), "invalid/args", ["row.meta", "toJSON"]);
});

test("class instances, Dates, Maps and functions are refused; null-prototype objects are plain", () => {
  class Edit { constructor() { this.id = "e1"; } }
  throwsWith(() => plainRow(new Edit(), "row"), "invalid/args", ["class Edit", "not plain data"]);
  throwsWith(() => plainRow({ id: "e1", meta: new Date(0) }, "row"), "invalid/args", ["row.meta", "class Date"]);
  throwsWith(() => plainData(new Map(), "v"), "invalid/args", ["class Map"]);
  throwsWith(() => plainRow({ id: "e1", f() {} }, "row"), "invalid/args", ["row.f", "function"]);
  const bare = Object.assign(Object.create(null), { id: "e1" });
  assert.deepEqual({ ...plainRow(bare) }, { id: "e1" });
});

test("a row must be an object; arrays, null and primitives are refused", () => {
  for (const bad of [null, undefined, "e1", 3, ["e1"]]) throwsWith(() => plainRow(bad, "row"), "invalid/args", ["row must be an object"]);
});

test("a cycle and a value nested deeper than 1000 levels are refused, not a stack overflow", () => {
  const a = { id: "e1" };
  a.self = a;
  throwsWith(() => plainRow(a, "row"), "invalid/args", ["refers to itself"]);
  let deep = {};
  for (let i = 0; i < 5000; i++) deep = { d: deep };
  throwsWith(() => plainData(deep, "v"), "invalid/args", ["deeper than 1000"]);
});

test("a __proto__ key stays an own data key of the copy", () => {
  const v = JSON.parse('{"__proto__":{"x":1},"id":"e1"}');
  const copy = plainData(v);
  assert.deepEqual(Object.keys(copy), ["__proto__", "id"]);
  assert.equal(Object.getPrototypeOf(copy), Object.prototype);
});
