// Checks how the durable backend sends a transaction's writes to a Durable
// Object inside real workerd (issue 13, Durable Objects, step nine): each
// put is one single-row INSERT, the same text for every put into a table
// (step two joined them into multi-row INSERTs of up to 100 values, which
// workerd ran slower than single rows); the writes of a transaction wait
// and run in order, so keys written several times, with updates and
// deletes between, end as the ops say; and a put that fails after 30
// others of its transaction fails its commit with its own code, leaving
// nothing behind; rows of long values go as they are. And (issue 13,
// step three) a commit's epoch check runs no statement once its store has
// read the epoch, while a store opened since, through any object of the same
// storage, still fences it; and texts of 1 KB and more read back as they were
// written. And (step four) safe
// ints and bools cross to sql.exec as numbers, ints beyond 2^53 as their
// exact text, and a page whose rows stay in JS (the host's own values)
// reads every kind of value as a memory store's page does.
// And (issue 13, the commit's fixed cost) a commit writes no _meta row:
// SQLite's trigger on _outbox keeps _meta.head, which an older version reads,
// exact, also after an import has dropped and remade the store's tables.
// And (the commit's fixed cost, step two) a commit's writes are not read
// past sql.exec, which has run them; a read's cursor still is. And (issue
// 13, the commit's answer and meta without text) the numeric commit runs
// inside transactionSync: its seq, or 0 and lastError's code, a commit
// refused inside the transaction leaving nothing; a host transaction that
// fails after it is storage_failed only when the core answered a seq; two
// owners of one store keep their names in every outbox record. And (step
// seven, the batch without JSON text) every param kind and text shape
// reaches SQLite exactly.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { startWorkerd } from "./harness.js";

let workerd;
before(async () => { workerd = await startWorkerd({ script: "batch-worker.js" }); });
after(async () => { await workerd?.dispose(); });

const isRowInsert = (text) => /^INSERT OR REPLACE INTO "(?!_)/.test(text);
// The number of bound parameters (`?`) in a statement's text.
const boundParams = (text) => (text.match(/\?/g) ?? []).length;

test("a transaction of 1,000 puts sends each row as a single-row INSERT, one text for them all", async () => {
  const r = await workerd.call("puts", "puts", { n: 1000 });
  assert.equal(r.count, 1000);
  assert.ok(r.ok, "every row reads back as it was put");
  const inserts = r.texts.filter(isRowInsert);
  assert.equal(inserts.length, 1000, `row INSERTs: ${inserts.length}`);
  assert.equal(new Set(inserts).size, 1, [...new Set(inserts)].join("\n"));
  assert.equal(boundParams(inserts[0]), 5);  // the table's 5 columns
  // The rest: the epoch check, the outbox record and the head.
  assert.ok(r.texts.length <= inserts.length + 3, `sql.exec calls: ${r.texts.length}\n${r.texts.filter((t) => !isRowInsert(t)).join("\n")}`);
});

test("puts of rows of 300 KB each are sent one row per statement, and read back whole", async () => {
  const r = await workerd.call("big", "bigRows", { n: 3, size: 300_000 });
  assert.deepEqual(r.lengths, [300_000, 300_000, 300_000]);
  const inserts = r.texts.filter(isRowInsert);
  assert.equal(inserts.length, 3);
  for (const text of inserts) assert.equal(boundParams(text), 5);
});

test("puts, updates and deletes of the same keys in one transaction end as the ops say, in the outbox's order", async () => {
  const r = await workerd.call("mixed", "mixed", {});
  const expected = new Map();
  for (let id = 1; id <= 30; id++) expected.set(id, `first${id}`);
  expected.set(1, "second1");
  expected.set(2, "updated2");
  expected.delete(3);
  for (let id = 25; id <= 60; id++) expected.set(id, `second${id}`);
  expected.set(3, "again3");
  expected.delete(60);
  assert.deepEqual(r.rows, [...expected].sort((a, b) => a[0] - b[0]));
  const ops = [
    ...Array.from({ length: 30 }, (_, i) => ["put", i + 1]),
    ["put", 1], ["update", 2], ["delete", 3],
    ...Array.from({ length: 36 }, (_, i) => ["put", 25 + i]),
    ["put", 3], ["delete", 60],
  ];
  assert.deepEqual(r.ops.map(([op, id]) => [op, id]), ops);
  // One single-row INSERT a put: 30, 1, 36 and 1.
  const inserts = r.texts.filter(isRowInsert);
  assert.equal(inserts.length, 68, r.texts.join("\n"));
  for (const text of inserts) assert.equal(boundParams(text), 5, text);
});

test("a row too big for the platform, after 30 others in its transaction, fails its commit with limit and leaves nothing", async () => {
  const r = await workerd.call("failing", "failing", { before: 30 });
  assert.equal(r.error?.code, "limit", JSON.stringify(r.error));
  assert.match(r.error.message, /put into table/);
  assert.match(r.error.message, /the row \[31\] is 24000\d\d bytes, above this backend.s limit of 2000000 bytes per value or row/);
  assert.equal(r.afterHead, r.head);
  assert.deepEqual(r.rows, [1000]);
  assert.deepEqual(r.outbox, r.outboxBefore);
  assert.equal(r.outbox.at(-1), r.head);
  assert.equal(r.headAtEnd, r.head + 1, "the store still commits");
});

test("commits of every size in turn, a transaction read mid-way and refused commits on one store: each statement crosses with its own params, check and name", async () => {
  const rounds = 4;
  const r = await workerd.call("kept", "keptRoom", { rounds });
  // Each round: 4 one-put commits, a transaction of 51 puts, a refused one, one more.
  assert.equal(r.expected, rounds * (4 + 51 + 1));
  assert.equal(r.rows, r.expected);
  assert.deepEqual(r.wrong, []);
  assert.deepEqual(r.missing, []);
  assert.deepEqual(r.unrecorded, [], "every put is in its outbox record");
  assert.deepEqual(r.gets, Array.from({ length: rounds }, (_, i) => `before the get ${i}`));
  assert.equal(r.refusals.length, rounds);
  for (const f of r.refusals) {
    assert.equal(f?.code, "limit", JSON.stringify(f));
    assert.match(f.message, /put into table/);
    assert.ok(f.headKept, "a refused commit takes no seq");
  }
  assert.equal(r.lastSeq, r.head);
});

test("a one-put commit after the store's first sends two statements, the row and the outbox record, and _meta.head still holds the head after each", async () => {
  const { commits } = await workerd.call("commits", "commits", {});
  assert.equal(commits.length, 3);
  for (const { texts } of commits.slice(1)) {
    assert.equal(texts.filter((t) => /_meta/.test(t)).length, 0, texts.join("\n"));
    assert.equal(texts.length, 2, texts.join("\n"));
    assert.match(texts[0], /^INSERT OR REPLACE INTO "notes\/notes"/);
    assert.match(texts[1], /^INSERT INTO _outbox /);
  }
  // Head format 1: an older version of the package reads _meta.head alone.
  for (const { head, metaHead } of commits) assert.equal(metaHead, head);
  assert.deepEqual(commits.map((c) => c.head), [2, 3, 4]);
});

test("a one-put commit makes no call on its two writes' cursors (workerd ran them inside exec), and its row and outbox record read back; a read's cursor is read", async () => {
  const { commits, rows, outbox, readTexts, readReads } = await workerd.call("commitReads", "commits", {});
  for (const { texts, reads } of commits.slice(1)) {
    assert.equal(texts.length, 2, texts.join("\n"));
    assert.deepEqual(reads, [0, 0], texts.join("\n"));
  }
  assert.deepEqual(rows, [[1, "c1"], [2, "c2"], [3, "c3"]]);
  assert.deepEqual(outbox, [[2, "c1"], [3, "c2"], [4, "c3"]]);
  // The page's SELECT: its cursor is read, as before.
  assert.ok(readTexts.length >= 1 && readTexts.every((t) => /^SELECT /.test(t)), readTexts.join("\n"));
  assert.ok(readReads.every((n) => n > 0), JSON.stringify(readReads));
});

test("after importStore over the Durable Object (its switch drops every table of the old store), _meta.head still follows each commit", async () => {
  const r = await workerd.call("imported", "importedCommits", {});
  assert.deepEqual(r.heads.map((h) => h.head), [2, 3, 3, 4, 5]);
  for (const { head, metaHead } of r.heads) assert.equal(metaHead, head, JSON.stringify(r.heads));
  assert.deepEqual(r.rows, ["i1", "i2", "i3", "i4"]);
});

test("a store opened since through another object of the same storage fences the first, whose next commit reads the epoch again", async () => {
  const r = await workerd.call("fenceAfter", "fenceAfterCommits", {});
  for (const a of r.attempts) {
    assert.equal(a.code, "fenced", JSON.stringify(a));
    assert.match(a.message, /another owner holds the store/);
  }
  // The first refused commit read the epoch (and wrote nothing); the second
  // knew it already.
  assert.ok(r.attempts[0].texts.some((t) => /^SELECT .*_meta/.test(t)), r.attempts[0].texts.join("\n"));
  assert.ok(!r.attempts[0].texts.some((t) => /^INSERT/.test(t)), r.attempts[0].texts.join("\n"));
  assert.deepEqual(r.attempts[1].texts, []);
  assert.deepEqual(r.rows, ["first1", "first2", "second"]);
});

test("long texts (1 KB to 70 KB, with quotes, backslashes, a control character, non-ASCII and astral characters) put and updated in a transaction read back whole, and so does the outbox record", async () => {
  const r = await workerd.call("long", "longTexts", {});
  assert.deepEqual(r.put, Array(5).fill([true, true]));
  assert.deepEqual(r.updated, Array(5).fill(true));
  assert.deepEqual(r.recorded, Array(5).fill(true));
});

test("a put's safe ints and bools reach sql.exec as numbers and ints beyond 2^53 as exact text, and read back as they were put", async () => {
  const r = await workerd.call("ints", "intParams", {});
  // Two rows, an INSERT each: (id, big, on) twice.
  assert.deepEqual(r.types, ["number", "string", "number", "number", "string", "number"]);
  assert.equal(r.rows, JSON.stringify([
    { id: 7, big: "1152921504606846977n", on: true },
    { id: -9007199254740991, big: "-9007199254740993n", on: false },
  ]));
});

test("pages of a durable store whose rows stay in JS give every kind of value (str, int on both sides of 2^53, num, json, null) as a memory store's pages do", async () => {
  const r = await workerd.call("kinds", "pageKinds", {});
  assert.equal(r.durable.length, 6, r.durable.join("\n"));  // 7 rows in pages of 3, in two orders
  assert.deepEqual(r.durable, r.memory);
  assert.match(r.durable[0], /"j":\{"deep":\[1,"two",null,\{"t":true\}\]\}/);
  assert.match(r.durable.join(""), /"n":"1152921504606846976n"/);
  assert.match(r.durable.join(""), /"n":-9007199254740991/);
});

test("the numeric commit (commitAs, txCommitAs) answers seqs, or 0 with lastError's code; one refused inside transactionSync leaves nothing", async () => {
  const r = await workerd.call("numeric", "numericCore");
  assert.deepEqual(r.ids, [1, 2, 1]);
  assert.deepEqual([r.table, r.putA, r.txB], [{ seq: 1, error: null }, { seq: 2, error: null }, { seq: 3, error: null }]);
  assert.equal(r.inside.seq, 0);
  assert.match(r.inside.error, /^!not_found /);
  assert.equal(r.value.seq, 0);
  assert.match(r.value.error, /^!invalid\/args /);
  assert.match(r.owner.error, /^!invalid\/args commit: owner 9 is not an owner number/);
  assert.match(r.at.error, /^!invalid\/args commit context: at 0\.5 is not a time/);
  assert.equal(r.rows, 3, "x, y and z; nothing of the refused commits");
  assert.deepEqual(r.after, { seq: 4, error: null });
  assert.deepEqual(r.records, [[1, "a", 1000, 1], [2, "a", 1001, 1], [3, "b", 1002, 2], [4, "b", 1006, 1]]);
  assert.equal(r.head, 4);
  assert.equal(r.metaHead, 4);
});

test("two owners of one store commit without an actor and keep their names in every outbox record; failed commits give their codes and leave nothing", async () => {
  const rounds = 15;
  const r = await workerd.call("owners", "twoOwners", { rounds });
  assert.equal(r.head, 2 + 2 * rounds);
  assert.deepEqual(r.codes, ["not_found", "invalid/args", "invalid/args"]);
  assert.equal(r.headAfterFailures, r.head);
  assert.deepEqual(r.owners, ["a", "b", ...Array.from({ length: rounds }, () => ["a", "b"]).flat(), "store"]);
  assert.deepEqual(r.lost, [null, null, null]);
  assert.deepEqual(r.counts, [rounds + 1, rounds]);
});

test("a host transaction that fails after a numeric commit answered its seq is storage_failed; after a commit that answered 0 it is the host's own error", async () => {
  const r = await workerd.call("host-failure", "numericHostFailure");
  assert.equal(r.declared, 1);
  assert.equal(r.refused.code, null, JSON.stringify(r.refused));
  assert.match(r.refused.message, /the host's COMMIT failed/);
  assert.equal(r.committed.code, "storage_failed", JSON.stringify(r.committed));
  assert.match(r.committed.message, /failed to commit: the host's COMMIT failed/);
  assert.equal(r.rows, 0, "the host rolled the put back");
});

// Issue 13, Durable Objects, step seven: the batch crosses without JSON text
// (wasm/ABI.md, "The durable batch"): numbers as f64, every text's UTF-8
// bytes in one region decoded once and cut at UTF-16 offsets the C side
// computes, a BLOB's bytes as they are. Each param kind and text shape, read
// back with raw SQL past the store (SQLite's typeof() and hex(), an int's
// decimal text), in a transaction of several puts (many texts in one
// region) and in one-put commits.
const long = (piece, bytes) => {
  let t = "";
  while (Buffer.byteLength(t) < bytes) t += piece;
  return t;
};
const paramRows = [
  { id: 1, t: "", u: "plain ascii", n: 0, x: 0.5, b: true, j: { k: [1, "two", null] }, v: [1, -2.5, 3.25] },
  { id: 2, t: "a\u0001b\u007f", u: "\ufeffBOM first", n: 9007199254740991, x: -1e300, b: false, j: "\u00e9", v: [0.1, 1e-30, -7] },
  { id: 3, t: "\ud83d\ude00x\ud83d\ude00", u: "\u00e9\u4e2d\ud83d\ude00", n: -9007199254740991, x: 3, b: null, j: null, v: null },
  { id: 4, t: long("\u00e9\u4e2d\ud83d\ude00a", 2000), u: "\ufeff" + long("abc", 1500), n: "9007199254740992n", x: 1.25e-300 },
  { id: 5, t: "\ud83d\ude00", u: "", n: "9223372036854775807n", x: null },
  { id: 6, t: long("0123456789", 5000), u: null, n: "-9223372036854775808n", b: true },
  { id: 7, t: 'quote " backslash \\ newline \n control \u0001 separator \u2028 \ud83d\ude00', n: "-9007199254740993n", j: ["\u0000", "\ud83d\ude00"] },
];
// Each column as SQLite should hold it: [typeof(), hex of a text or BLOB
// (upper case) / an int's decimal / a real].
const hex = (bytes) => Buffer.from(bytes).toString("hex").toUpperCase();
function expectedParams(r) {
  const text = (s) => (s === null || s === undefined ? ["null", null] : ["text", hex(Buffer.from(s, "utf8"))]);
  const n = r.n === null || r.n === undefined ? ["null", null] : ["integer", String(r.n).replace(/n$/, "")];
  return {
    t: text(r.t), u: text(r.u), n,
    x: r.x === null || r.x === undefined ? ["null", null] : ["real", r.x],
    b: r.b === null || r.b === undefined ? ["null", null] : ["integer", r.b ? "1" : "0"],
    j: r.j === null || r.j === undefined ? ["null", null] : text(JSON.stringify(r.j)),
    v: r.v === null || r.v === undefined ? ["null", null] : ["blob", hex(new Uint8Array(new Float32Array(r.v).buffer))],
  };
}

for (const tx of [true, false]) {
  test(`every param kind and text shape (${tx ? "one transaction of several puts" : "one-put commits"}: empty, NUL (in json; a str refuses it), controls, a leading U+FEFF, 4-byte UTF-8, over 1 KiB; ints on both sides of 2^53 and at ±2^63; reals; bools; json; a vector's BLOB; nulls) reaches SQLite exactly`, async () => {
    const r = await workerd.call(`params-${tx}`, "paramKinds", { rows: paramRows.map((row) => JSON.stringify(row)), tx });
    const got = JSON.parse(r);
    // Differences, cut short (a text's hex runs to 10,000 characters).
    const cut = (cell) => JSON.stringify(cell).slice(0, 120);
    const wrong = [];
    for (const row of paramRows) {
      for (const [column, cell] of Object.entries(expectedParams(row))) {
        const at = got[row.id]?.[column];
        if (JSON.stringify(at) !== JSON.stringify(cell)) wrong.push(`row ${row.id} ${column}: got ${cut(at)} (${String(at?.[1]).length} chars), expected ${cut(cell)} (${String(cell[1]).length} chars)`);
      }
    }
    assert.deepEqual(wrong, []);
    assert.deepEqual(got.get, [7, null], "a get by a key that starts with U+FEFF finds its row");
    assert.equal(Object.keys(got).length, paramRows.length + 1);
  });
}
