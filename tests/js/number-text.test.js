// Checks the wasm core's number texts: it reads a number's decimal text as
// the double JavaScript's Number() reads it, bit for bit (the nearest
// double, ties to even, subnormals and the largest finite included), in the
// fast put reader (a put's num column in wire JSON) and in nlohmann's lexer
// (a query's operand), through its own strtod (wasm/strtod.cc); and it
// writes a num column's default into the table's SQL as C's "%.17g" does,
// through its own snprintf (wasm/snprintf.cc).

import assert from "node:assert/strict";
import { test } from "node:test";

import { join } from "node:path";
import Database from "better-sqlite3";

import { defineTable, num, openStore, str } from "../../js/index.js";
import { loadNodeCore } from "../../js/loader-node.js";
import { tempDir } from "./helpers.js";

const BY_ID = "t/by_id";
const RECORDS = [
  { op: "table", table: BY_ID, version: 1, columns: { id: { type: "str" }, n: { type: "num" } }, key: ["id"] },
];

async function core() {
  const mod = await loadNodeCore();
  const c = new mod.Core();
  assert.ok(!c.open(JSON.stringify({ backend: "memory", id: "x" })).startsWith("!"));
  const answer = c.commit(JSON.stringify(RECORDS), '{"owner":"t","at":1}');
  assert.ok(!answer.startsWith("!"), answer);
  return c;
}

// Texts where a reader that is not exact goes wrong: halfway cases, 17 and
// more significant digits, the ends of the range, powers of ten beyond the
// exact ones, long digit strings.
const TRICKY = [
  "0.1", "1.5", "-0.25", "0.30000000000000004", "3.0000000000000004", "1e22", "1e23", "1e-22",
  "123456789e-22", "8.5e-7", "9007199254740993.0", "9007199254740995.0", "9007199254740992.5",
  "2.2250738585072011e-308", "2.2250738585072014e-308", "4.9406564584124654e-324",
  "2.4703282292062328e-324", "1.7976931348623157e308", "1.7976931348623158e308",
  "123456789012345678901234567890.5", "0.000000000000000000000000000000000001234",
  "1.00000000000000011102230246251565404236316680908203125",
  "1.00000000000000011102230246251565404236316680908203124",
  "1.00000000000000011102230246251565404236316680908203126",
  "7.2057594037927933e16", "5e-324", "1E+2", "12.000", "0.0000001", "-1.5E-3",
];

// A fixed pseudo-random sequence, so that a failure reproduces.
function* random(n) {
  let x = 0x2545f491;
  const next = () => (x = (Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0);
  for (let i = 0; i < n; i++) {
    const bits = new DataView(new ArrayBuffer(8));
    bits.setUint32(0, next());
    bits.setUint32(4, next());
    const d = bits.getFloat64(0);
    if (!Number.isFinite(d)) continue;
    yield JSON.stringify(d);  // the shortest text, as JS writes it
    yield d.toPrecision(17);
    yield d.toExponential(20);
    const digits = Array.from({ length: 20 + (next() % 20) }, () => next() % 10).join("");
    yield `${1 + (next() % 9)}${digits.slice(0, next() % 10)}.${digits.slice(11)}e${(next() % 600) - 300}`;
  }
}

const texts = [...TRICKY, ...random(500)].filter((t) => Number.isFinite(Number(t)));

test("a num column's value in a put's wire JSON is the double Number() reads from its text, for short, long, halfway and subnormal texts", async () => {
  const c = await core();
  const ops = texts.map((t, i) => `{"op":"put","table":"${BY_ID}","row":{"id":"k${i}","n":${t}}}`);
  const answer = c.commit(`[${ops.join(",")}]`, '{"owner":"t","at":2}');
  assert.ok(!answer.startsWith("!"), answer);
  for (let i = 0; i < texts.length; i++) {
    const row = JSON.parse(c.get(BY_ID, JSON.stringify([`k${i}`])));
    // JSON has no -0: the store keeps -0 as 0.
    const want = Number(texts[i]) || 0;
    assert.ok(Object.is(row[1], want), `${texts[i]} was stored as ${row[1]}, Number() reads ${want}`);
  }
  c.close();
  c.delete();
});

test("a num operand in a query's JSON matches the row put with the same number written the shortest way", async () => {
  const c = await core();
  const values = texts.slice(0, 400).map(Number);
  const ops = values.map((d, i) => `{"op":"put","table":"${BY_ID}","row":{"id":"k${i}","n":${JSON.stringify(d)}}}`);
  const answer = c.commit(`[${ops.join(",")}]`, '{"owner":"t","at":2}');
  assert.ok(!answer.startsWith("!"), answer);
  for (let i = 0; i < values.length; i++) {
    // The operand as written in the list (long or short), read by the lexer.
    const page = JSON.parse(c.page(BY_ID, `{"where":{"eq":["n",${texts[i]}]},"orderBy":[]}`, 1000, ""));
    const ids = page.rows.map((r) => r[0]);
    assert.ok(ids.includes(`k${i}`), `eq n ${texts[i]} matched ${JSON.stringify(ids)}, not k${i} put as ${JSON.stringify(values[i])}`);
  }
  c.close();
  c.delete();
});

test("a num column an alter adds with a default gets it in the table's SQL with 17 significant digits, as C's %.17g writes it, and the row reads back the same double", async () => {
  // [default, its text in the SQL]: plain, exponent forms on both sides,
  // a tie at the 18th digit (to even), a whole number (".0" keeps it REAL),
  // the subnormal and largest ends.
  const cases = [
    [0.1, "0.10000000000000001"], [0.5, "0.5"], [-2.5, "-2.5"], [1e22, "1e+22"], [1e-5, "1.0000000000000001e-05"],
    [1e-4, "0.0001"], [1 / 3, "0.33333333333333331"], [100000000000000.125, "100000000000000.12"],
    [100000000000000.375, "100000000000000.38"], [12345678901234567, "12345678901234568.0"],
    [5e-324, "4.9406564584124654e-324"], [1.7976931348623157e308, "1.7976931348623157e+308"],
  ];
  const added = {};
  cases.forEach(([d], i) => { added[`n${i}`] = num({ default: d }); });
  const V1 = defineTable("defaults", { columns: { id: str() }, key: ["id"] });
  const V2 = defineTable("defaults", {
    version: 2, columns: { id: str(), ...added }, key: ["id"], migrations: { 2: { alter: { add: added } } },
  });
  const path = join(tempDir(), "s.sqlite");
  let store = await openStore({ backend: "sqlite", path });
  let owner = store.object({ type: "t" });
  await owner.tx(async (tx) => { await tx.put(owner.table(V1), { id: "a" }); });
  await store.close();
  store = await openStore({ backend: "sqlite", path });
  owner = store.object({ type: "t" });
  const row = await owner.table(V2).get("a");
  await store.close();
  const db = new Database(path, { readonly: true });
  const sql = db.prepare("SELECT sql FROM sqlite_master WHERE sql LIKE '%DEFAULT%'").all().map((r) => r.sql).join("\n");
  db.close();
  cases.forEach(([d, text], i) => {
    assert.match(sql, new RegExp(`"n${i}" REAL[^,]* DEFAULT ${text.replace(/[.+]/g, "\\$&")}[,)]`), `n${i} (${d}) is not written as ${text} in ${sql}`);
    assert.ok(Object.is(row[`n${i}`], d), `n${i} read back as ${row[`n${i}`]}, not ${d}`);
  });
});
