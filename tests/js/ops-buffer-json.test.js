// Checks the json cells js/ops-buffer.js writes straight into the batch
// (OpsBuffer.jsonText, issue 13's fourth step): for small plain values and
// for the values it leaves to JSON.stringify alike, the batch reads back as
// the very wire JSON the encoder writes, and the core stores, answers and
// records the same thing from the batch as from the JSON text.

import assert from "node:assert/strict";
import { test } from "node:test";

import { encodeJson } from "../../js/encode.js";
import { loadNodeCore } from "../../js/loader-node.js";
import { OpsBuffer } from "../../js/ops-buffer.js";
import { batchToJson } from "./ops-batch.js";

const TABLE = "t/j";
const RECORD = {
  op: "table", table: TABLE, version: 1,
  columns: { id: { type: "str" }, j: { type: "json", optional: true } },
  key: ["id"],
};

const asJson = (ops) => `[${ops.map((op) => encodeJson(op, op.op)).join(",")}]`;
function asBinary(ops) {
  const buf = new OpsBuffer();
  for (const op of ops) {
    if (op.op !== "put" || !buf.put(op.table, op.row)) buf.json(encodeJson(op, op.op));
  }
  return buf.batch().slice();
}

// Values the direct writer takes, and values next to its edges that it
// leaves to JSON.stringify (escapes, non-ASCII, -0, deep nesting, holes...).
const values = [
  { lines: 3 }, {}, [], [1, 2, 3], { a: { b: { c: [true, false, null] } } }, { n: -0 }, [-0],
  { f: 0.1, e: 1e-7, big: 1e21, neg: -12.5 }, { "2": "b", "1": "a", z: 1 }, { s: "plain text ~!" },
  { q: 'a"b' }, { b: "a\\b" }, { nl: "a\nb" }, { u: "é" }, { "é": 1 }, { emoji: "😀" }, { "k\"": 1 },
  { unsafe: 2 ** 53 + 2 }, { max: Number.MAX_SAFE_INTEGER, min: -Number.MAX_SAFE_INTEGER },
  { skip: undefined, keep: 1 }, [1, , 3], Object.assign(Object.create(null), { a: 1 }),
  [[[[[[[[[["deep"]]]]]]]]]], { d: [[[[[[[[1]]]]]]]] }, "a string", 5, 1.5, true, null,
  { del: "\u007f" }, { ctl: "\u001f" }, { lone: "\uD800" },
  // An agent's message: quotes, newlines, tabs, non-ASCII, in values and
  // keys, short and past jsonString's long-string length (64 chars).
  { role: "assistant", content: 'Read "config.json"\n\tthen C:\\dir — “ok” 😀', "k\n": [1, "\b\f\r\u0000\u000b"] },
  { content: `${"x".repeat(70)}"quoted"\n${"é".repeat(40)}😀` }, { long: "y".repeat(200) },
  { longUnicode: "ü".repeat(100) }, { [`${"k".repeat(80)}\n`]: 1 },
  { longLone: `${"z".repeat(80)}\uDC00` }, { lone2: "a\uDBFFb" }, { pair: "\uD83D\uDE00" },
];

// The values among them that jsonText leaves to JSON.stringify (their
// JSON.stringify text): numbers beyond safe integers, undefined members,
// holes, a null-prototype object, nesting past 8 and lone surrogates.
// Every other value above, strings with escapes and non-ASCII included, it
// writes itself.
const DECLINED = [
  '{"f":0.1,"e":1e-7,"big":1e+21,"neg":-12.5}', '{"unsafe":9007199254740994}', '{"keep":1}',
  "[1,null,3]", '{"a":1}', '[[[[[[[[[["deep"]]]]]]]]]]', '{"d":[[[[[[[[1]]]]]]]]}',
  '{"lone":"\\ud800"}', `{"longLone":"${"z".repeat(80)}\\udc00"}`, '{"lone2":"a\\udbffb"}',
];

test("a json cell reads back from the batch as the wire JSON the encoder writes, for every value", () => {
  for (const j of values) {
    const ops = [{ op: "put", table: TABLE, row: { id: "x", j } }];
    assert.equal(batchToJson(asBinary(ops)), asJson(ops), `for ${JSON.stringify(j)}`);
  }
});

test("jsonText writes strings with escapes, non-ASCII and long strings itself, byte for byte JSON.stringify's", () => {
  const dec = new TextDecoder();
  const declined = [];
  for (const j of values) {
    const buf = new OpsBuffer();
    const at = buf.len;
    const took = buf.jsonText(j);
    if (!took) {
      assert.equal(buf.len, at, `nothing written when declined: ${JSON.stringify(j)}`);
      declined.push(JSON.stringify(j));
      continue;
    }
    assert.equal(dec.decode(buf.bytes.subarray(at + 6, buf.len)), JSON.stringify(j));
  }
  assert.deepEqual(declined, DECLINED);
});

test("random small json values read back as the encoder's wire JSON", () => {
  let seed = 13;
  const rnd = (n) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return Math.floor(seed / 65536) % n;  // the high bits: an LCG's low bits cycle fast
  };
  const chars = ["a", "Z", " ", "~", "\"", "\\", "\n", "é", "😀", "\u0000", "{", "0"];
  const str = () => Array.from({ length: rnd(5) }, () => chars[rnd(chars.length)]).join("");
  const gen = (depth) => {
    switch (rnd(depth > 3 ? 6 : 8)) {
      case 0: return null;
      case 1: return rnd(2) === 0;
      case 2: return rnd(2000) - 1000;
      case 3: return (rnd(2000) - 1000) / 8;
      case 4: return str();
      case 5: return rnd(10) === 0 ? -0 : rnd(100);
      case 6: return Array.from({ length: rnd(4) }, () => gen(depth + 1));
      default: {
        const o = {};
        for (let i = rnd(4); i > 0; i--) o[str()] = gen(depth + 1);
        return o;
      }
    }
  };
  for (let k = 0; k < 500; k++) {
    const rows = Array.from({ length: 3 }, (_, i) => ({ id: `r${i}`, j: gen(0) }));
    const ops = rows.map((row) => ({ op: "put", table: TABLE, row }));
    assert.equal(batchToJson(asBinary(ops)), asJson(ops), `for ${JSON.stringify(rows)}`);
  }
});

test("the core stores, answers and records the same from the batch as from the JSON text", async () => {
  const mod = await loadNodeCore();
  const ops = values.map((j, i) => ({ op: "put", table: TABLE, row: { id: `v${i}`, j } }));
  const outcomes = [];
  for (const batch of [asJson(ops), asBinary(ops)]) {
    const c = new mod.Core();
    assert.ok(!c.open(JSON.stringify({ backend: "memory", id: "x" })).startsWith("!"));
    assert.ok(!c.commit(`[${JSON.stringify(RECORD)}]`, '{"owner":"t","at":1}').startsWith("!"));
    const answer = c.commit(batch, '{"owner":"t","at":2}');
    const page = c.page(TABLE, "{}", 1000, "");
    outcomes.push({ answer, lastOps: c.lastOps(), page });
    c.close();
  }
  assert.ok(!outcomes[0].answer.startsWith("!"), outcomes[0].answer);
  assert.deepEqual(outcomes[1], outcomes[0]);
});
