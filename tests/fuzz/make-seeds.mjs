// Writes the seed corpus of every fuzz target (tests/fuzz/corpus/<target>/)
// from the conformance vectors (tests/conformance/*.json) and the formats'
// examples, in the input format each target's header describes. Each case of
// the vectors is run once on a memory store through the package (the
// conformance runner), so that the seeds hold the normalized ops, real
// outbox batches and real cursors the core writes.
//
//   node tests/fuzz/make-seeds.mjs      (after scripts/build.sh; rewrites
//                                        the seeds, keeps regression-* files)
//
// Seeds are small files named by a hash of their content, so rerunning it
// gives the same files.
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";

import * as api from "../../js/index.js";
import { encodeJson } from "../../js/encode.js";
import { OpsBuffer } from "../../js/ops-buffer.js";
import { vectorWire } from "../../js/vectors.js";
import { conformanceRunner } from "../conformance/runner.js";

const here = dirname(fileURLToPath(import.meta.url));
const vectors = join(here, "..", "conformance");
const corpus = join(here, "corpus");
const META = '{"owner":"fuzz","at":1}';
const MAX_SEED = 4096;  // libFuzzer's -max_len in scripts/fuzz.sh
const MAX_PER_TARGET = 150;

/** JSON text with BigInts as plain integers (the wire format's exact ints). */
function wire(v) {
  return JSON.stringify(v, (k, x) => (typeof x === "bigint" ? `__big:${x}` : x))
    .replace(/"__big:(-?\d+)"/g, "$1")
    .replace(/"at":\d{12,}/g, '"at":1');  // a record's commit time: seeds stay the same run to run
}

const seeds = new Map();  // target -> Set of texts
let seed = (target, lines) => {
  const text = Array.isArray(lines) ? lines.join("\n") : lines;
  if (text.length > MAX_SEED) return;
  if (!seeds.has(target)) seeds.set(target, new Set());
  seeds.get(target).add(text);
}

const { CaseRunner } = conformanceRunner(api, assert);

const files = readdirSync(vectors).filter((f) => f.endsWith(".json")).sort();
let cases = 0;
for (const file of files) {
  const doc = JSON.parse(readFileSync(join(vectors, file), "utf8"));
  for (const c of doc.cases) {
    const runner = new CaseRunner(doc, { backend: "memory" });
    let records = [];
    let batches = [];
    runner.afterSteps = async (store) => {
      const all = await store.outbox.read(0, Math.max(1, store.head));
      records = all.commits;
      for (let after = 0; after < store.head; after += 3) batches.push(wire(await store.outbox.read(after, 3)));
    };
    try {
      await runner.run(c.steps);
    } catch (e) {
      if (process.env.SEEDS_DEBUG) console.log(file, c.name, e.message.slice(0, 200));
      continue;  // a case this runner cannot run in JS (wire-only): no seed from it
    }
    cases++;
    const opsLines = records.map((r) => wire(r.ops));
    const allOps = wire(records.flatMap((r) => r.ops));
    // ops: the records' ops, plus the case's own refused commits at the end.
    const refused = c.steps.filter((s) => s.commit && s.error).map((s) => wire(s.commit));
    seed("ops", [META, ...opsLines, ...refused].slice(0, 16));
    for (const s of c.steps.filter((s) => s.commit)) seed("ops", [META, ...opsLines.slice(0, 2), wire(s.commit)]);
    // batch: the whole outbox, and three records a batch.
    seed("batch", batches.slice(0, 8));
    if (records.length) seed("batch", wire({ from: 0, to: records.length, commits: records }));
    // where_set: every set expression of the case with every where of it,
    // on the table they belong to, over all of the case's rows.
    const sets = [], wheres = [];
    for (const op of records.flatMap((r) => r.ops)) {
      if (op.set) sets.push([op.table, wire(op.set)]);
      if (op.where) wheres.push([op.table, wire(op.where)]);
    }
    for (const s of c.steps) {
      const read = s.page ?? s.count;
      if (read?.query?.where) wheres.push([read.table, wire(read.query.where)]);
    }
    for (const [table, w] of wheres.length ? wheres : [[sets[0]?.[0], "null"]]) {
      const set = sets.find(([t]) => t === table)?.[1];
      if (table) seed("where_set", [allOps, table, w, set ?? "{}"]);
    }
    for (const [table, set] of sets) seed("where_set", [allOps, table, wheres.find(([t]) => t === table)?.[1] ?? "null", set]);
    // query: every page step, with its cursor forms.
    for (const s of c.steps.filter((s) => s.page)) {
      const p = s.page;
      const q = wire(p.query ?? {});
      const limit = String(p.limit ?? 1000);
      seed("query", [allOps, p.table, q, p.cursor ?? "", limit]);
      seed("query", [allOps, p.table, q, "next:[]", "1"]);
      seed("query", [allOps, p.table, q, "next:[null]", "2"]);
      seed("query", [allOps, p.table, q, 'raw:["0","0","asc",[1]]', "2"]);
    }
    for (const s of c.steps.filter((s) => s.count)) seed("query", [allOps, s.count.table, wire(s.count.query ?? {}), "", "3"]);
    // documents and log: the commits, then a request.
    for (const s of c.steps.filter((s) => s.doc)) seed("documents", [...opsLines.slice(-7), wire(s.doc)]);
    if (records.length) {
      const last = opsLines.slice(-7);
      seed("log", [...last, wire({ seq: 1 })]);
      seed("log", [...last, wire({ owner: records[0].owner, limit: 1 })]);
      seed("log", [...last, wire({ from: 1, to: 2, after: 0, limit: 2 })]);
      seed("log", [...last, wire({ actor: { kind: "service", id: "conformance" }, limit: 2 })]);
    }
    // archive: the tables, the first table's rows, the outbox, an export cursor.
    const tables = records.flatMap((r) => r.ops).filter((op) => op.op === "table");
    if (tables.length) {
      const first = tables[0];
      const cols = Object.keys(first.columns);
      const rows = records.flatMap((r) => r.ops)
        .filter((op) => op.op === "put" && op.table === first.table)
        .map((op) => wire(cols.map((k) => op.row[k] ?? null)));
      const outbox = records.map((r) => wire(r));
      seed("archive", [wire(tables), "--", first.table, ...rows.slice(0, 20), "--",
        String(records.length), ...outbox.slice(0, 10), "--", "", "2"]);
      seed("archive", [wire(tables), "--", first.table, ...rows.slice(0, 5)]);
      // schema: each declaration, then a put, then a new version.
      for (const t of tables.slice(0, 2)) {
        const next = { ...t, version: (t.version ?? 1) + 1 };
        seed("schema", ['{"backend":"memory"}', wire(t), opsLines.find((l) => l.includes('"put"')) ?? "[]", wire(next)]);
      }
    }
  }
}

// schema: open options, and the declarations with migrations of the vectors.
for (const opts of [
  '{"backend":"memory"}', '{"backend":"memory","id":"s-1"}', '{"backend":"sqlite","path":":memory:"}',
  '{"backend":"sqlite","path":":memory:","durability":"relaxed","lockTimeout":0}',
  '{"backend":"memory","replica":true}', '{"backend":"sqlite"}', '{"backend":"opfs","path":"a\\u0000b"}',
  '{"backend":"durable","handle":1}', '{"backend":"memory","adoptForeign":true,"holdLock":false}',
  '{"backend":"memory","lockTimeout":1e300}', '{"backend":"memory","lockTimeout":-1}', '[]', 'null', '{"backend":7}',
]) seed("schema", [opts]);
const items = '{"op":"table","table":"t/items","version":1,"columns":{"id":{"type":"str"},"n":{"type":"int","default":0},"x":{"type":"num","optional":true},"b":{"type":"bool","optional":true},"j":{"type":"json","optional":true}},"key":["id"],"indexes":{"byN":["n","id"]}}';
const put = '[{"op":"put","table":"t/items","row":{"id":"a","n":1,"x":1.5,"b":true,"j":{"k":[1]}}}]';
for (const next of [
  '{"op":"table","table":"t/items","version":2,"columns":{"id":{"type":"str"},"n":{"type":"int","default":0},"x":{"type":"num","optional":true},"b":{"type":"bool","optional":true},"j":{"type":"json","optional":true},"size":{"type":"int","default":0}},"key":["id"],"indexes":{"byN":["n","id"]},"migrations":{"2":{"alter":{"add":{"size":{"type":"int","default":0}}}}}}',
  '{"op":"table","table":"t/items","version":2,"columns":{"id":{"type":"str"},"count":{"type":"int","default":0},"x":{"type":"num","optional":true},"b":{"type":"bool","optional":true},"j":{"type":"json","optional":true}},"key":["id"],"indexes":{"byN":["count","id"]},"migrations":{"2":{"alter":{"rename":{"n":"count"}},"update":{"count":{"add":[{"col":"count"},{"value":1}]}}}}}',
  '{"op":"table","table":"t/items","version":3,"columns":{"id":{"type":"str"},"n":{"type":"int","default":0},"x":{"type":"num","optional":true},"b":{"type":"bool","optional":true},"j":{"type":"json","optional":true}},"key":["id"],"indexes":{"byX":["x"]},"migrations":{"2":{"rows":true},"3":{"alter":{"drop":["b"]}}}}',
  '{"op":"table","table":"t/items","version":0}',
]) seed("schema", ['{"backend":"memory"}', items, put, next]);

// Edge cases written by hand, kept whatever the sampling.
const handWritten = new Map();
const vectorSeed = seed;
seed = (target, lines) => {
  vectorSeed(target, lines);
  if (!handWritten.has(target)) handWritten.set(target, new Set());
  handWritten.get(target).add(Array.isArray(lines) ? lines.join("\n") : lines);
};
seed("ops", [META, `[${items}]`, put, '[{"op":"put","table":"t/items","row":{"id":"b","n":9007199254740993}}]']);
seed("ops", ['{"owner":"fuzz","at":1e300}', `[${items}]`]);
seed("ops", ['{"owner":"fuzz","actor":{"kind":"user","id":"u","for":{"kind":"agent","id":"a"}}}', `[${items}]`, put]);
seed("ops", [META, `[${items}]`, '[{"op":"put","table":"t/items","row":{"id":"\\u0000"}}]', '[{"op":"put","table":"t/items","row":{"id":"\\ud800"}}]']);
seed("where_set", [`[${items}]`, "t/items", '{"gt":["n",1]}', '{"n":{"add":[{"col":"n"},{"value":9223372036854775807}]}}']);
seed("query", [`[${items}]`, "t/items", '{"where":{"prefix":["id",""]},"orderBy":[["x","desc"]]}', "c1.!!", "0"]);
seed("batch", ['{"from":0,"to":1,"commits":[{"seq":1,"from":0,"at":1,"owner":"o","ops":[' + items + "]}]}", '{"from":5,"to":6,"commits":[]}']);
seed("documents", ['[{"op":"doc.create","owner":"notes","id":1,"kind":"note","key":"a","value":{"t":"x"}}]',
  '[{"op":"doc.change","owner":"notes","id":1,"patch":[{"op":"replace","path":"/t","value":"y"}]}]',
  '{"call":"load","owner":"notes","id":1,"at":1}']);
seed("documents", ['[]', '[{"op":"move","from":"/a/0","path":"/d/e"},{"op":"test","path":"/g","value":"h"},{"op":"copy","from":"/d","path":"/a/-"}]']);
seed("log", ['[]', '{"seq":-1}']);
seed("archive", ["[]", "--", "t/none", "[1]", "--", "-1"]);

// binops: binary batches written by the package's own encoder
// (js/ops-buffer.js, as tx.put and the other tx ops write them: js/tx.js),
// for the tables of tests/fuzz/binops.cc. A seed is two bytes, the split
// point (little-endian; 0: none), then the batch; a split seed is a tx.get
// between writes: its first batch, then the second without its magic byte
// (OpsBuffer.mark()), split where the second began.
{
  const seedBin = (batch, split = 0) => {
    const bytes = Buffer.concat([Buffer.from([split & 255, split >> 8]), Buffer.from(batch)]);
    seed("binops", bytes.toString("latin1"));
  };
  // One transaction's writes: put(table, row), json(op) (update, delete,
  // bulk, a declaration), get() (a tx.get: the batch so far goes alone).
  const tx = (writes) => {
    const ops = new OpsBuffer();
    const pieces = [];
    for (const w of writes) {
      if (w.get) {
        pieces.push(Uint8Array.from(ops.batch()));
        ops.mark();
      } else if (w.put) {
        const row = { ...w.row };
        if (w.put === "t/items" && Array.isArray(row.v)) row.v = vectorWire(row.v, 2, "row.v");
        if (!ops.put(w.put, row)) ops.json(encodeJson({ op: "put", table: w.put, row }, "put"));
      } else {
        ops.json(encodeJson(w, "op"));
      }
    }
    pieces.push(Uint8Array.from(ops.batch()));
    if (pieces.length === 1) {
      // The batch, and the batch one byte short (a copy cut short: its last
      // record's length then runs one byte past the end).
      seedBin(pieces[0]);
      if (pieces[0].length > 2) seedBin(pieces[0].subarray(0, pieces[0].length - 1));
      return;
    }
    const [a, b] = pieces;  // two pieces: the split point is where the second began
    seedBin(Buffer.concat([a, b.subarray(1)]), a.length);
  };
  const item = (id, more = {}) => ({ put: "t/items", row: { id, ...more } });
  const full = (i) => item(`i${i}`, { n: i, x: i / 4, b: i % 2 === 0, j: { k: [i, "x"], o: { d: i } }, s: `s${i}`, v: [i, -i / 2] });
  // Kept shapes: a bulk of one shape, per table.
  tx(Array.from({ length: 24 }, (_, i) => full(i)));
  tx(Array.from({ length: 30 }, (_, i) => ({ put: "t/nums", row: { k: i * 37 - 500, s: `n${i}`, x: i * 1.25, f: i % 3 === 0 } })));
  tx(Array.from({ length: 20 }, (_, i) => ({ put: "t/pairs", row: { g: `g${i % 3}`, n: i, val: i % 2 ? null : { i }, note: "n" } })));
  // Shape changes: left-out optional columns, another member order, tables in turn.
  tx([item("a", { n: 2 }), item("c"), { put: "t/items", row: { n: 5, id: "d", s: "rev" } }, item("e", { x: undefined, b: false }),
    { put: "t/nums", row: { k: 3, s: "three" } }, item("f", { n: 6 }), { put: "t/pairs", row: { g: "g", n: 2 } }, item("g", { n: 7 })]);
  tx([item("a", { j: null, x: null, b: null, s: null, v: null }), item("b", { n: 0 })]);
  // json cells: nested, non-ASCII, escapes, fractions, big and small values.
  tx([item("j1", { j: { a: [1, 2.5, -3, true, null], b: { c: "d" } } }), item("j2", { j: "a \"quoted\" \\ string\n" }),
    item("j3", { j: { "é": ["ü", "日本"] } }), item("j4", { j: [[[[[[[[[1]]]]]]]]] }), item("j5", { j: 1e300 }),
    item("j6", { j: { k: -0, f: 0.1, e: 1e-7 } }), item("j7", { j: [] }), item("j8", { j: {} }), item("j9", { j: false })]);
  // Strings: non-ASCII, a lone surrogate (U+FFFD), control characters, long.
  tx([item("été", { s: "日本語 🎉" }), item("\uD800x", { s: "a\uDC00" }), item("tab\there", { s: "nl\ncr\r\u0001" }),
    item("l".repeat(200), { s: "é".repeat(150) }), { put: "t/nums", row: { k: 9, s: "x".repeat(1000) } }]);
  // Ints at the edges: 0, -0, 7-bit and 14-bit boundaries, the safe limits,
  // unsafe ones (a number's text; a BigInt: the put as wire JSON).
  tx([0, -0, 127, 128, -128, 16383, 16384, 2 ** 31, -(2 ** 31), 2 ** 53 - 1, -(2 ** 53 - 1)].map((k, i) => ({ put: "t/nums", row: { k, s: `e${i}`, x: k } })));
  tx([{ put: "t/nums", row: { k: 2n ** 60n, s: "big" } }, { put: "t/nums", row: { k: 1, s: "x", x: 2 ** 60 } }, { put: "t/nums", row: { k: 2, s: "y", x: -(2 ** 70) } }]);
  tx([{ put: "t/nums", row: { k: 3, s: "ok" } }, { put: "t/nums", row: { k: 2 ** 53, s: "unsafe" } }]);
  // Nums: fractions, tiny and huge, as the encoder writes them.
  tx([1.5, -2.25, 1e-7, 1e300, 5e-324, 0.1 + 0.2, -1e-300].map((x, i) => ({ put: "t/nums", row: { k: 100 + i, s: "f", x } })));
  // Vectors.
  tx([item("v1", { v: [1, 0] }), item("v2", { v: [0.5, -3.25e38] }), item("v3", { v: [1e-45, 0] })]);
  // Deletes, updates, bulk ops, composite keys.
  tx([{ op: "delete", table: "t/items", key: ["a"] }, { op: "delete", table: "t/pairs", key: ["g", 1] }, item("a", { n: 3 }),
    { op: "update", table: "t/items", key: ["b"], set: { n: { add: [{ col: "n" }, 1] }, s: { value: "upd" } } },
    { op: "update", table: "t/nums", key: [1], set: { x: { value: 2.5 }, f: { value: true } } }]);
  tx([{ op: "update", table: "t/items", where: { gt: ["n", 0] }, set: { n: { add: [{ col: "n" }, 10] } } },
    { op: "delete", table: "t/nums", where: { lt: ["k", 0] } }, { put: "t/nums", row: { k: -5, s: "after" } },
    { op: "update", table: "t/pairs", where: null, set: { note: { concat: [{ col: "note" }, { value: "!" }] } } },
    { op: "delete", table: "t/items", where: { prefix: ["id", "i"] } }]);
  // A table declared in the batch, then puts to it; a new version of a stored table.
  tx([{ op: "table", table: "t/new", version: 1, columns: { id: { type: "int" }, t: { type: "str", optional: true } }, key: ["id"] },
    { put: "t/new", row: { id: 1, t: "one" } }, { put: "t/new", row: { id: 2 } }, item("z", { n: 1 })]);
  tx([{ op: "table", table: "t/nums", version: 2, columns: { k: { type: "int" }, s: { type: "str" }, x: { type: "num", default: 1.5 }, f: { type: "bool", default: false }, extra: { type: "int", default: 7 } }, key: ["k"], indexes: { byS: ["s"] }, migrations: { 2: { alter: { add: { extra: { type: "int", default: 7 } } } } } },
    { put: "t/nums", row: { k: 50, s: "v2", extra: 8 } }, { put: "t/nums", row: { k: 51, s: "v2" } }]);
  // Refused: an unknown table or column, a null or a wrong type, a missing
  // key, NUL in a str, an unsafe int, a bad vector, a key twice in a row.
  tx([item("ok"), { put: "t/none", row: { id: "a" } }]);
  tx([item("ok"), item("x", { nope: 1 })]);
  tx([item("ok"), { put: "t/nums", row: { k: 1, s: null } }]);
  tx([item("ok"), item("x", { n: "7" })]);
  tx([item("ok"), item("x", { n: 1.5 })]);
  tx([item("ok"), { put: "t/items", row: { n: 1 } }]);
  tx([item("ok"), item("a\u0000b")]);
  tx([item("ok"), { put: "t/items", row: { id: "v", v: "AAAA" } }]);
  tx([item("ok"), { op: "update", table: "t/items", key: ["a"], set: { id: { value: "b" } } }]);
  tx([item("ok"), { op: "update", table: "t/nums", key: [1], set: { k: { add: [{ col: "k" }, 1] } } }, { op: "delete", table: "t/pairs", key: ["g"] }]);
  // Transactions with a tx.get between writes: two batches.
  tx([full(1), full(2), { get: true }, full(3), { op: "delete", table: "t/items", key: ["i1"] }]);
  tx([item("a", { n: 9 }), { op: "update", table: "t/items", key: ["a"], set: { n: { add: [{ col: "n" }, 1] } } }, { get: true }, item("a", { n: 11 }), { put: "t/nums", row: { k: 8, s: "eight" } }]);
  tx([{ op: "table", table: "t/new", version: 1, columns: { id: { type: "int" } }, key: ["id"] }, { get: true }, { put: "t/new", row: { id: 1 } }]);
  tx([{ put: "t/pairs", row: { g: "p", n: 1 } }, { get: true }, { put: "t/pairs", row: { g: "p", n: 2, val: [1] } }, { op: "update", table: "t/items", where: null, set: { n: { value: 0 } } }]);
  // Hand-written framing edges: an empty batch, a put before any shape, a
  // shape of no names, padded varints, a truncated length.
  seedBin([0xb1]);
  seedBin([0xb1, 0x50]);
  seedBin([0xb1, 0x53, 7, ...Buffer.from("t/items"), 0, 0x50]);
  seedBin([0xb1, 0x53, 7, ...Buffer.from("t/items"), 1, 2, ...Buffer.from("id"), 0x50, 4, 0x81, 0x80, 0x80, 0x80, 0, ...Buffer.from("p")]);
  seedBin([0xb1, 0x53, 6, ...Buffer.from("t/nums"), 2, 1, ...Buffer.from("k"), 1, ...Buffer.from("s"), 0x50, 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 4, 0]);
  seedBin([0xb1, 0x4a, 0x90, ...Buffer.from('{"op":"delete"')]);
  // A shape that names a column twice (the encoder never writes one).
  seedBin([0xb1, 0x53, 7, ...Buffer.from("t/items"), 3, 2, ...Buffer.from("id"), 1, 0x6e, 1, 0x6e, 0x50, 4, 1, 0x61, 3, 1, 3, 2]);
  // Varints just past the safe integers (2^53, 2^53 + 1: the encoder writes
  // them as a number's text), unsigned and negative, in int and num columns.
  const nums = [0xb1, 0x53, 6, ...Buffer.from("t/nums"), 3, 1, ...Buffer.from("k"), 1, ...Buffer.from("s"), 1, ...Buffer.from("x")];
  const p53 = [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10], p53plus1 = [0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10];
  for (const tag of [3, 7]) {
    for (const big of [p53, p53plus1]) {
      seedBin([...nums, 0x50, tag, ...big, 4, 1, 0x61, 3, 1]);
      seedBin([...nums, 0x50, 3, 5, 4, 1, 0x61, tag, ...big]);
    }
  }
}

let total = 0;
for (const [target, texts] of [...seeds].sort()) {
  const dir = join(corpus, target);
  mkdirSync(dir, { recursive: true });
  for (const f of readdirSync(dir)) if (!f.startsWith("regression-")) rmSync(join(dir, f));
  // At most MAX_PER_TARGET seeds, picked evenly (the replay in npm test
  // runs each once under the sanitizers).
  const all = [...texts].sort();
  const step = Math.max(1, all.length / MAX_PER_TARGET);
  const picked = new Set();
  for (let i = 0; i < all.length && picked.size < MAX_PER_TARGET; i += step) picked.add(all[Math.floor(i)]);
  // The hand-written edge cases are always kept.
  for (const text of handWritten.get(target) ?? []) picked.add(text);
  for (const text of picked) {
    const name = createHash("sha256").update(text).digest("hex").slice(0, 16);
    // binops' seeds are bytes (held as latin1 text); the others are UTF-8 text.
    writeFileSync(join(dir, `seed-${name}`), target === "binops" ? Buffer.from(text, "latin1") : text);
  }
  total += picked.size;
  console.log(`make-seeds: ${target}: ${picked.size} seeds (of ${texts.size})`);
}
console.log(`make-seeds: ${total} seeds from ${cases} conformance cases in ${files.length} files`);
