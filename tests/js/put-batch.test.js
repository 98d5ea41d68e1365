// Checks the batch a transaction's puts make (issue 13, "a twelfth step"):
// OpsBuffer.putValues writes a row of the batch's current shape (the last
// row's names, in order) with no shape pass, and a row of any other shape,
// or with an undefined value, after a SHAPE record. Whatever path a row
// takes, the batch must read back as the wire JSON the encoder writes for
// the same ops, and a row the batch leaves to JSON (a BigInt, a non-finite
// number, a lone surrogate in a name) must leave the batch and its shape as
// they were. Rows cover every value kind the batch writes and their edges,
// one shape broken in every way in the middle of a run.

import assert from "node:assert/strict";
import { test } from "node:test";

import { encodeJson } from "../../js/encode.js";
import { OpsBuffer } from "../../js/ops-buffer.js";
import { openStore, defineTable, str, int, num, bool, json } from "../../js/index.js";
import { batchToJson } from "./ops-batch.js";

const TABLE = "t/all";
const row = (id, over = {}) => ({ id, s: "plain", i: 7, f: 0.5, b: true, j: { lines: 3 }, ...over });
// A run of rows of one shape, each changing one thing; the comments say
// what the shape-kept path must get right there.
const rows = [
  row("r01"),
  row("r02"),
  row("r03", { s: "\u00e9t\u00e9 \u6f22\u5b57 \ud83d\ude00" }),  // non-ASCII text
  row("r04", { s: "x".repeat(200) }),  // a long string (its length as a 2-byte varint)
  row("r05", { s: "" }),
  row("r06", { i: 0, f: -0 }),  // -0 is written as 0
  row("r07", { i: 2 ** 53 - 1, f: -(2 ** 53 - 1) }),  // the safe integer edges
  row("r08", { i: 2 ** 53, f: -(2 ** 53) - 2 }),  // past them: number text
  row("r09", { i: 127, f: 128 }),  // varint edges
  row("r10", { i: -1, f: -128 }),
  row("r11", { f: 1e-7 }),
  row("r12", { f: 1e21 }),
  row("r13", { f: 5e-324 }),
  row("r14", { f: Number.MAX_VALUE }),
  row("r15", { f: NaN }),  // left to JSON: the batch as it was
  row("r16", { f: Infinity }),
  row("r17", { i: 5n }),  // a BigInt: left to JSON
  row("r18", { j: { a: [1, { b: 2n ** 62n }] } }),  // a BigInt inside json
  row("r19", { b: false, j: null }),
  row("r20", { j: { deep: [[[[[[[[[["x"]]]]]]]]]] } }),  // past the direct writer's depth
  row("r21", { j: { q: 'a"b\\c\n', u: "\u00e9", k: [true, null, -0, 1.5] } }),
  row("r22", { j: ["\ud800"] }),  // a lone surrogate inside json
  row("r23", { s: "a\ud800b" }),  // a lone surrogate in a str value
  row("r24", { s: "\udc00" }),
  row("r25", { s: undefined }),  // the same names, one undefined: another shape
  row("r26"),
  { s: "moved", id: "r27", i: 1, f: 1, b: false, j: {} },  // the names in another order
  row("r28"),
  { id: "r29", s: "fewer" },  // fewer names
  row("r30", { extra: "more" }),  // more names
  row("r31", { "\ud800": 1 }),  // a lone surrogate in a name: left to JSON
  row("r32"),
  { ...row("r33"), 2: "int-like key", 1: "first" },  // integer-like names come first
  row("r34"),
];
// The wire JSON of the rows the encoder takes (it refuses NaN and Infinity:
// tx.put then rejects the put, and the batch must be as it was).
const encoded = rows.map((r) => {
  try {
    return encodeJson({ op: "put", table: TABLE, row: r }, "put");
  } catch (e) {
    assert.equal(e.code, "invalid/args");
    return null;
  }
});
const wire = `[${encoded.filter((x) => x !== null).join(",")}]`;

// The batch of the rows as tx.put writes them: putValues, or a JSON op.
function write(buf, r, keepShape) {
  if (!keepShape) {
    buf.table = null;  // no shape kept: each row takes the path of a first row
    buf.names = null;
  }
  const names = Object.keys(r);
  const vals = names.map((k) => r[k]);
  const [len, table, shape] = [buf.len, buf.table, buf.names];
  if (buf.putValues(TABLE, names, vals)) return "binary";
  assert.deepEqual([buf.len, buf.table, buf.names], [len, table, shape], `a row left to JSON leaves the batch as it was (${r.id})`);
  const text = encoded[rows.indexOf(r)];
  if (text === null) return "refused";
  buf.json(text);
  return "json";
}

test("rows of one shape broken in every way read back from the batch as the encoder's wire JSON, shape kept or not", () => {
  const kept = new OpsBuffer();
  const fresh = new OpsBuffer();
  const left = [];
  for (const r of rows) {
    const a = write(kept, r, true);
    const b = write(fresh, r, false);
    assert.equal(a, b, `the same path for ${r.id}`);
    if (a !== "binary") left.push(`${r.id} ${a}`);
  }
  assert.deepEqual(left, ["r15 refused", "r16 refused", "r17 json", "r18 json", "r22 json", "r31 json"]);
  assert.equal(batchToJson(kept.batch()), wire);
  assert.equal(batchToJson(fresh.batch()), wire);
  // The kept shape is used: its rows carry no SHAPE record.
  assert.ok(kept.len < fresh.len);
});

test("putValues writes a row of the kept shape byte for byte as the row after its own SHAPE record", () => {
  for (const r of rows) {
    const names = Object.keys(r);
    const vals = names.map((k) => r[k]);
    const a = new OpsBuffer();
    const b = new OpsBuffer();
    if (!b.putValues(TABLE, names, vals)) continue;  // left to JSON (checked above)
    assert.equal(a.putValues(TABLE, names, vals), true);
    const mid = a.len;
    assert.equal(a.putValues(TABLE, names, vals), true);  // the kept shape: a PUT record alone
    const put = a.len - mid;
    assert.deepEqual([...a.bytes.subarray(0, mid)], [...b.batch()], r.id);
    assert.deepEqual([...a.bytes.subarray(mid, a.len)], [...b.bytes.subarray(b.len - put, b.len)], r.id);
    assert.equal(a.bytes[mid], 0x50, `${r.id}: a PUT record, no SHAPE`);
  }
});

const All = defineTable("all", {
  columns: { id: str(), s: str().optional(), i: int().optional(), f: num().optional(), b: bool().optional(), j: json().optional(), extra: str().optional() },
  key: ["id"],
});

test("through tx.put, rows with getters and changing names store what one put a transaction stores", async () => {
  // Only the rows the table takes (the json and num columns hold any of them).
  const usable = rows.filter((r) => !["r08", "r15", "r16", "r17", "r31", "r33"].includes(r.id)).map((r) => ({ ...r, id: r.id }));
  const calls = new Map();
  const withGetter = (r) => {
    const out = {};
    for (const k of Object.keys(r)) {
      Object.defineProperty(out, k, {
        enumerable: true,
        get() {
          calls.set(`${r.id}.${k}`, (calls.get(`${r.id}.${k}`) ?? 0) + 1);
          return r[k];
        },
      });
    }
    return out;
  };
  const one = await openStore({ backend: "memory" });
  const each = await openStore({ backend: "memory" });
  try {
    const t1 = one.object({ type: "o" }).table(All);
    const t2 = each.object({ type: "o" }).table(All);
    await one.object({ type: "o" }).tx(async (tx) => {
      for (const r of usable) await tx.put(t1, r.id.endsWith("3") ? withGetter(r) : r);
    });
    for (const r of usable) await each.object({ type: "o" }).tx(async (tx) => { await tx.put(t2, r); });
    for (const r of usable) assert.deepEqual(await t1.get(r.id), await t2.get(r.id), r.id);
    assert.ok(calls.size > 0);
    for (const [k, n] of calls) assert.equal(n, 1, `${k} read once`);
  } finally {
    await one.close();
    await each.close();
  }
});
