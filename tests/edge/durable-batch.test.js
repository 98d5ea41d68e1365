// Checks how the durable backend sends a transaction's writes to a Durable
// Object inside real workerd (issue 13, Durable Objects, step two): puts
// into one table are joined into multi-row INSERTs of at most 100 bound
// values, so a 1,000-put transaction is about 50 sql.exec calls, not 1,000
// (before: one per put); the writes of a transaction wait and run in order,
// so keys written several times, with updates and deletes between, end as
// the ops say; and a put that fails in a joined statement fails its commit
// with its own code, leaving nothing behind; rows of long values are not
// joined (each statement's values stay at most 256 KB). And (issue 13,
// step three) a commit's epoch check runs no statement once its store has
// read the epoch, while a store opened since, through any object of the same
// storage, still fences it; and texts of 1 KB and more, which cross beside
// the batch as bytes, read back as they were written. And (step four) safe
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
// owners of one store keep their names in every outbox record.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { startWorkerd } from "./harness.js";

let workerd;
before(async () => { workerd = await startWorkerd({ script: "batch-worker.js" }); });
after(async () => { await workerd?.dispose(); });

const isRowInsert = (text) => /^INSERT OR REPLACE INTO "(?!_)/.test(text);
const placeholders = (text) => (text.match(/\?/g) ?? []).length;

test("a transaction of 1,000 puts sends its rows in multi-row INSERTs of at most 100 values: about 50 sql.exec calls", async () => {
  const r = await workerd.call("puts", "puts", { n: 1000 });
  assert.equal(r.count, 1000);
  assert.ok(r.ok, "every row reads back as it was put");
  const inserts = r.texts.filter(isRowInsert);
  // 5 columns: 20 rows (100 values) per statement.
  assert.equal(inserts.length, 50, `row INSERTs: ${inserts.length}`);
  for (const text of inserts) assert.ok(placeholders(text) <= 100, `${placeholders(text)} parameters`);
  // The rest: the epoch check, the outbox record and the head.
  assert.ok(r.texts.length <= inserts.length + 3, `sql.exec calls: ${r.texts.length}\n${r.texts.filter((t) => !isRowInsert(t)).join("\n")}`);
});

test("puts of rows of 300 KB each are sent one row per statement, and read back whole", async () => {
  const r = await workerd.call("big", "bigRows", { n: 3, size: 300_000 });
  assert.deepEqual(r.lengths, [300_000, 300_000, 300_000]);
  const inserts = r.texts.filter(isRowInsert);
  assert.equal(inserts.length, 3);
  for (const text of inserts) assert.equal(placeholders(text), 5);
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
  // The 30 first puts went as two statements, not 30.
  assert.ok(r.texts.filter(isRowInsert).length < 10, r.texts.join("\n"));
});

test("a row too big for the platform, joined with 30 others in one statement, fails its commit with limit and leaves nothing", async () => {
  const r = await workerd.call("failing", "failing", { before: 30 });
  assert.equal(r.error?.code, "limit", JSON.stringify(r.error));
  assert.match(r.error.message, /put into table/);
  assert.match(r.error.message, /too big/);
  assert.equal(r.afterHead, r.head);
  assert.deepEqual(r.rows, [1000]);
  assert.deepEqual(r.outbox, r.outboxBefore);
  assert.equal(r.outbox.at(-1), r.head);
  assert.equal(r.headAtEnd, r.head + 1, "the store still commits");
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
  // Two rows joined in one INSERT: (id, big, on) twice.
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
