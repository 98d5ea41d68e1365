// Checks the binary batch of ops (wasm/ABI.md, "Binary ops"; js/ops-buffer.js
// and ParseBinaryOps in src/writes/fast_puts.cc): the same puts sent as a
// binary batch and as wire JSON give the same answer, the same outbox ops,
// the same stored rows and the same refusals, word for word; a malformed
// batch is refused with invalid/args naming the byte, and the core goes on.

import assert from "node:assert/strict";
import { test } from "node:test";

import { encodeJson } from "../../js/encode.js";
import { loadNodeCore } from "../../js/loader-node.js";
import { OpsBuffer } from "../../js/ops-buffer.js";
import { batchToJson } from "./ops-batch.js";

const TABLE = "t/items";
const RECORD = {
  op: "table", table: TABLE, version: 1,
  columns: {
    id: { type: "str" }, s: { type: "str", optional: true }, i: { type: "int", optional: true },
    n: { type: "num", optional: true }, b: { type: "bool", optional: true }, j: { type: "json", optional: true },
    d: { type: "int", default: 7 }, r: { type: "str", optional: false, default: "x" },
  },
  key: ["id"], indexes: { byS: ["s"] },
};

async function core() {
  const mod = await loadNodeCore();
  const c = new mod.Core();
  assert.ok(!c.open(JSON.stringify({ backend: "memory", id: "x" })).startsWith("!"));
  assert.ok(!c.commit(`[${JSON.stringify(RECORD)}]`, '{"owner":"t","at":1}').startsWith("!"));
  return c;
}

// The ops as the JS package wrote them before the binary batch: wire JSON.
const asJson = (ops) => `[${ops.map((op) => encodeJson(op, op.op)).join(",")}]`;
// The same ops as a transaction writes them now.
function asBinary(ops) {
  const buf = new OpsBuffer();
  for (const op of ops) {
    if (op.op !== "put" || !buf.put(op.table, op.row)) buf.json(encodeJson(op, op.op));
  }
  return buf.batch().slice();
}

const put = (row) => ({ op: "put", table: TABLE, row });
const rows = [
  { id: "a", s: "plain", i: 1, n: 1.5, b: true, j: { x: [1, "y", null, true] } },
  { id: "ü", s: "é中😀", i: -12, n: -0.25, b: false, j: ["é"] },
  { id: "surrogate", s: "a\uD800b\uDC00c" },
  { id: "escapes", s: 'q"\\\n\t\u0001/', j: { k: "\u0002\"" } },
  { id: "minus zero", i: -0, n: -0 },
  { id: "edges", i: Number.MAX_SAFE_INTEGER, n: -Number.MAX_SAFE_INTEGER },
  { id: "floats", n: 1e300, i: -Number.MAX_SAFE_INTEGER },
  { id: "unsafe num", n: 2 ** 53 + 2 },
  { id: "big", i: 2n ** 60n, j: { big: 2n ** 60n } },
  { id: "nulls", s: null, i: null, n: null, b: null, j: null },
  { id: "json scalars", j: "a string" },
  { id: "json int", j: 5 },
  { id: "json negative", j: -12 },
  { id: "json bools", j: false, b: true },
  { id: "json true", j: true },
  { id: "json string escapes", j: 'q"\\\n\t\u0001\b\f\u0000é😀' },
  { id: "json minus zero", j: -0 },
  { id: "json fraction", j: 0.5 },
  { id: "json floats", j: { s: 1 / 7, big: 1e21, tiny: -1.5e-7, z: -0, e: [0.1, 2.5e300, -1e-300] } },
  { id: "json float", j: { a: 1e21, b: 0.1 } },
  { id: "json unicode", j: { "é": "😀" } },
  { id: "undefined member", s: undefined, i: 3 },
  { id: "defaults given", d: 8, r: "y" },
  { id: "a long one", s: "x".repeat(300), j: { t: "é".repeat(200) } },
  { id: "x".repeat(200) + "é", s: "b" },
];
const refused = [
  ["an unsafe int in an int column", { id: "r", i: 2 ** 53 + 2 }],
  ["a fraction in an int column", { id: "r", i: 1.5 }],
  ["a number in a str column", { id: "r", s: 5 }],
  ["a bool in an int column", { id: "r", i: true }],
  ["a string in a num column", { id: "r", n: "1" }],
  ["NUL in a str", { id: "r", s: "a\u0000b" }],
  ["a missing key column", { s: "no id" }],
  ["an unknown column", { id: "r", zz: 1 }],
  ["null in a column that is not optional", { id: "r", r: null }],
  ["an object in a bool column", { id: "r", b: {} }],
];

// Commits `ops` on a fresh core both ways; returns both outcomes.
async function bothWays(ops) {
  const out = [];
  for (const send of [asJson, asBinary]) {
    const c = await core();
    const answer = c.commit(send(ops), '{"owner":"t","at":2}');
    const stored = answer.startsWith("!") ? null : { ops: c.lastOps(), page: c.page(TABLE, '{"where":null,"orderBy":[]}', 1000, "") };
    out.push({ answer, stored });
    c.close();
    c.delete();
  }
  return out;
}

test("a batch of puts of every type commits the same as wire JSON: answer, outbox ops and rows", async () => {
  const [json, binary] = await bothWays(rows.map(put));
  assert.ok(!json.answer.startsWith("!"), json.answer);
  assert.deepEqual(binary, json);
  // -0 is stored as 0 (JSON has no -0), in an int and a num column alike.
  assert.match(json.stored.ops, /"id":"minus zero","s":null,"i":0,"n":0\.0,/);
  assert.match(json.stored.ops, /"id":"surrogate","s":"a\uFFFDb\uFFFDc"/);
});

test("a binary batch read back holds exactly the wire JSON the encoder writes for the same ops", () => {
  const ops = [...rows.map(put), { op: "delete", table: TABLE, key: ["a"] }, ...refused.map(([, row]) => put(row))];
  assert.equal(batchToJson(asBinary(ops)), asJson(ops));
});

test("each put the core refuses is refused the same way in a binary batch, naming the same op and column", async () => {
  for (const [what, row] of refused) {
    const ops = [put({ id: "ok1", s: "fine" }), put({ id: "ok2", i: 2 }), put(row)];
    const [json, binary] = await bothWays(ops);
    assert.match(json.answer, /^!invalid\/args ops\[2\]/, `${what}: ${json.answer}`);
    assert.equal(binary.answer, json.answer, what);
  }
});

test("puts and other ops mixed in one batch keep their order: a later op sees an earlier put", async () => {
  const ops = [
    put({ id: "a", i: 1 }),
    { op: "update", table: TABLE, key: ["a"], set: { i: { add: [{ col: "i" }, { value: 10 }] } } },
    put({ id: "b", s: "shape two" }),
    { op: "delete", table: TABLE, key: ["b"] },
    put({ id: "c", i: 3 }),
    put({ id: "a", i: 100 }),
  ];
  const [json, binary] = await bothWays(ops);
  assert.ok(!json.answer.startsWith("!"), json.answer);
  assert.deepEqual(binary, json);
  assert.match(json.answer, /"counts":\[1,1,1,1,1,1\]/);
  // An error in a later op names its place among all the ops.
  const bad = [...ops, { op: "update", table: TABLE, key: ["nope"], set: { i: { value: 1 } } }];
  const [badJson, badBinary] = await bothWays(bad);
  assert.match(badJson.answer, /^!not_found/);
  assert.equal(badBinary.answer, badJson.answer);
});

test("a transaction stages binary batches at tx.get and commits the rest: the same as wire JSON", async () => {
  const first = [put({ id: "a", i: 1 }), put({ id: "b", i: 2 })];
  const second = [put({ id: "c", i: 3 }), put({ id: "a", i: 4 })];
  const out = [];
  for (const send of [asJson, asBinary]) {
    const c = await core();
    const tx = c.txOpen();
    const got = c.txGet(tx, send(first), TABLE, '["b"]');
    const empty = send === asJson ? "[]" : new Uint8Array([0xb1]);
    const again = c.txGet(tx, empty, TABLE, '["a"]');
    const answer = c.txCommit(tx, send(second), '{"owner":"t","at":2}');
    out.push({ got, again, answer, ops: c.lastOps() });
    c.close();
    c.delete();
  }
  assert.match(out[0].got, /^\["b"/);
  assert.deepEqual(out[1], out[0]);
});

test("a malformed binary batch is refused with invalid/args naming the byte, and the core goes on", async () => {
  const c = await core();
  const meta = '{"owner":"t","at":2}';
  const cases = [
    [[0xb1, 0x50], 2],                      // a put before any shape
    [[0xb1, 0x53, 5, 0x74], 3],             // a table name past the end
    [[0xb1, 0x4a, 10, 0x5b], 3],            // a JSON op past the end
    [[0xb1, 0x51], 2],                      // an unknown record
    [[0xb1, 0x53, 7, ...Buffer.from(TABLE), 1, 2, 0x69, 0x64, 0x50, 9], 16],  // an unknown value tag
    [[0xb1, 0x53, 7, ...Buffer.from(TABLE), 1, 2, 0x69, 0x64, 0x50, 3, 0x80], 17],  // a varint past the end
  ];
  for (const [bytes, at] of cases) {
    const answer = c.commit(new Uint8Array(bytes), meta);
    assert.equal(answer, `!invalid/args ops: the binary batch is malformed at byte ${at}`, JSON.stringify(bytes));
  }
  assert.equal(c.head(), 1, "nothing was committed");
  const ok = asBinary([put({ id: "after", i: 1 })]);
  assert.equal(c.commit(ok, meta), '{"seq":2,"at":2,"counts":[1]}');
  c.close();
  c.delete();
});
