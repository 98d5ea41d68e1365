// Checks the one encoder (JS values to wire JSON) and the decoders of rows
// and records, without the wasm core.

import assert from "node:assert/strict";
import { test } from "node:test";

import { encodeJson, parseJsonExact, rowDecoder, wellFormed } from "../../js/encode.js";
import { throwsWith } from "./helpers.js";

test("a BigInt is written as JSON integer digits", () => {
  assert.equal(encodeJson({ n: 2n ** 60n }), '{"n":1152921504606846976}');
  assert.equal(encodeJson([-(2n ** 63n)]), "[-9223372036854775808]");
});

test("an unsafe integer number is written as a float with an exponent, so the core refuses it for int columns", () => {
  const text = encodeJson([2 ** 53 + 2]);
  assert.match(text, /^\[9\.007199254740994e\+15\]$/);
  assert.equal(JSON.parse(text)[0], 2 ** 53 + 2);
  assert.equal(encodeJson([2 ** 53 - 1]), "[9007199254740991]");
  assert.equal(encodeJson([1.5, -0, 1e21]), "[1.5,0,1e+21]");
});

test("NaN and the infinities are refused naming their path", () => {
  throwsWith(() => encodeJson({ row: { at: NaN } }, "put"), "invalid/args", ["put.row.at", "NaN"]);
  throwsWith(() => encodeJson([1, Infinity], "key"), "invalid/args", ["key[1]", "Infinity"]);
  throwsWith(() => encodeJson({ "a b": -Infinity }), "invalid/args", ['["a b"]']);
  // The caller's own code that throws while its value is read (a toJSON, a
  // getter, a proxy trap): invalid/args naming the place, their error as cause.
  const mine = new RangeError("mine");
  const e = throwsWith(() => encodeJson(["k", { toJSON() { throw mine; } }], "key"), "invalid/args", ["key[1]", "threw", "mine"]);
  assert.equal(e.cause, mine);
  throwsWith(() => encodeJson({ a: { get b() { throw mine; } } }, "where"), "invalid/args", ["where", "threw", "mine"]);
});

test("a lone surrogate becomes U+FFFD while a pair stays whole", () => {
  assert.equal(JSON.parse(encodeJson("a\uD800b")), "a\uFFFDb");
  assert.equal(JSON.parse(encodeJson("\uDC00")), "\uFFFD");
  assert.equal(JSON.parse(encodeJson("😀")), "😀");
  assert.equal(JSON.parse(encodeJson({ "k\uD83D": 1 }))["k\uFFFD"], 1);
  assert.equal(wellFormed("x\uD83D"), "x\uFFFD");
  assert.ok(!encodeJson("\uD800").includes("\\ud"));
});

test("a BigInt outside 64 bits and a value nested too deep are refused naming their path", () => {
  throwsWith(() => encodeJson({ n: 2n ** 63n }, "row"), "invalid/args", ["row.n", "9223372036854775808n", "64-bit"]);
  throwsWith(() => encodeJson([-(2n ** 63n) - 1n], "key"), "invalid/args", ["key[0]"]);
  let deep = [];
  for (let i = 0; i < 100000; i++) deep = [deep];
  throwsWith(() => encodeJson({ meta: deep }, "row"), "invalid/args", ["row.meta", "deeper"]);
  let ok = [];
  for (let i = 0; i < 900; i++) ok = [ok];
  assert.equal(encodeJson(ok).length, 2 * 901);
});

test("undefined properties are left out, functions and cycles are refused", () => {
  assert.equal(encodeJson({ a: undefined, b: 1 }), '{"b":1}');
  assert.equal(encodeJson([undefined]), "[null]");
  throwsWith(() => encodeJson({ f() {} }, "row"), "invalid/args", ["row.f", "function"]);
  const loop = { a: 1 };
  loop.self = loop;
  throwsWith(() => encodeJson(loop, "row"), "invalid/args", ["row.self"]);
});

test("the encoder gives the same text as JSON.stringify for plain JSON", () => {
  const v = { s: "q\"uote\n\\", n: [1, 2.5, -3], t: true, f: false, z: null, o: { d: new Date(0) } };
  assert.equal(encodeJson(v), JSON.stringify(v));
});

test("one value needing a rule deep inside plain JSON still gets it (the native path is only a shortcut)", () => {
  assert.equal(encodeJson({ id: "e1", meta: { a: [{ b: 2n ** 60n }] } }), '{"id":"e1","meta":{"a":[{"b":1152921504606846976}]}}');
  assert.equal(encodeJson({ id: "e1", meta: { a: [1, 2 ** 53 + 2] } }), '{"id":"e1","meta":{"a":[1,9.007199254740994e+15]}}');
  assert.equal(JSON.parse(encodeJson({ id: "e1", meta: { a: ["x\uD800"] } })).meta.a[0], "x\uFFFD");
  throwsWith(() => encodeJson({ id: "e1", meta: { a: [1, NaN] } }, "row"), "invalid/args", ["row.meta.a[1]", "NaN"]);
});

test("a row decoder names the columns, turns an int column's string into a BigInt and a json column's string (JSON text) into its exact value", () => {
  const decode = rowDecoder([
    { name: "id", type: "str" },
    { name: "n", type: "int" },
    { name: "ok", type: "bool" },
    { name: "meta", type: "json" },
  ]);
  assert.deepEqual(decode(["e1", "1152921504606846976", true, { a: [1] }]), {
    id: "e1",
    n: 1152921504606846976n,
    ok: true,
    meta: { a: [1] },
  });
  assert.deepEqual(decode(["1", 5, false, '"x"']), { id: "1", n: 5, ok: false, meta: "x" });
  assert.deepEqual(decode(["1", 5, false, '{"big":[1152921504606846977,-9007199254740993,2]}']), {
    id: "1", n: 5, ok: false, meta: { big: [1152921504606846977n, -9007199254740993n, 2] },
  });
});

test("parseJsonExact keeps integers beyond 2^53 exact", () => {
  assert.deepEqual(parseJsonExact('{"a":[1152921504606846976,-2,1.5e3,"x\\"1234567890123456"],"b":null}'), {
    a: [1152921504606846976n, -2, 1500, 'x"1234567890123456'],
    b: null,
  });
  assert.deepEqual(parseJsonExact('{"a":1}'), { a: 1 });
  assert.throws(() => parseJsonExact("[1234567890123456789,"), SyntaxError);
});

// A "__proto__" member of the text is an own member of the value, as
// JSON.parse makes it. Before, parseJsonExact (the reader of any answer
// holding a 16-digit run: a document, a log page, a relay's batch)
// assigned it, which set the object's prototype: the key was gone and its
// members were inherited (a loaded document read {"s": ...} with
// value.admin === true).
test("parseJsonExact keeps a __proto__ member as an own member", () => {
  const text = '{"__proto__":{"admin":true},"s":"1234567890123456","n":[{"__proto__":7}]}';
  const v = parseJsonExact(text);
  assert.deepEqual(Object.keys(v), ["__proto__", "s", "n"]);
  assert.equal(Object.getPrototypeOf(v), Object.prototype);
  assert.equal(v.admin, undefined);
  assert.deepEqual(Object.getOwnPropertyDescriptor(v, "__proto__").value, { admin: true });
  assert.deepEqual(Object.keys(v.n[0]), ["__proto__"]);
  assert.equal(JSON.stringify(v), JSON.stringify(JSON.parse(text)));
});
