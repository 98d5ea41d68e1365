// Reads of large rows and records, cut at a byte budget (docs/reliability.md,
// "A full wasm heap"). A read builds its answer in the wasm heap, and the
// heap's room check keeps 32 MiB for reads: before, a page of `handle.rows()`
// (100 rows) over rows of 4 MB on a memory store, and `store.outbox.read()`
// of 100 records of 40 MB, were built whole and aborted the core, the
// memory store's rows gone with it. Now a page, an export page, an outbox
// read and a log page stop once they hold 8 MiB (one row or record at
// least): a page then has its `next` with fewer rows than asked, an outbox
// batch a `to` below the head, a log page its `next`, and each reader goes
// on from there. In its own file: the memory store holds about 900 MB.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { defineTable, openStore, importStore, query, str, int } from "../../js/index.js";

const Blobs = defineTable("bigrows", { columns: { id: str(), n: int(), body: str() }, key: ["id"] });
const id = (i) => `r${String(i).padStart(4, "0")}`;
// A body of `size` bytes that names its row (its first and last characters).
const body = (i, size) => `${i}:`.padEnd(size - 2, "x") + `:${i % 10}`;

async function fill(store, { rows, size, perTx, from = 0 }) {
  const owner = store.object({ type: "big" });
  const h = owner.table(Blobs);
  for (let i = from; i < rows; i += perTx) {
    await owner.tx(async (tx) => {
      for (let j = i; j < Math.min(rows, i + perTx); j++) await tx.put(h, { id: id(j), n: j, body: body(j, size) });
    });
  }
  return h;
}

// Every row once, in key order, each whole.
function checkRows(seen, rows, size) {
  assert.equal(seen.length, rows);
  for (let i = 0; i < rows; i++) {
    assert.equal(seen[i].id, id(i));
    assert.equal(seen[i].body.length, size);
    assert.equal(seen[i].body, body(i, size));
  }
}

// Every record once, seq 1 to head, following `to`.
async function readOutbox(store, limit) {
  const seqs = [];
  let after = 0;
  let reads = 0;
  while (after < store.head) {
    const batch = await store.outbox.read(after, limit);
    reads++;
    assert.equal(batch.from, after);
    assert.ok(batch.commits.length > 0, `a read after ${after} below the head ${store.head} answered no record`);
    assert.equal(batch.to, batch.from + batch.commits.length);
    for (const c of batch.commits) seqs.push(c.seq);
    after = batch.to;
  }
  assert.deepEqual(seqs, Array.from({ length: store.head }, (_, i) => i + 1));
  return reads;
}

test("a memory store of rows of 4 MB reads through handle.rows(), page, outbox.read and log in pages cut at 8 MiB (each aborted the core before)", async () => {
  const ROWS = 110;
  const SIZE = 4 << 20;
  const store = await openStore({ backend: "memory" });
  try {
    const h = await fill(store, { rows: ROWS, size: SIZE, perTx: 10 });
    assert.equal(store.head, 12);  // the table's commit, then 11 of 10 rows

    // A page of 100 asked: two rows of 4 MiB fill the budget.
    const first = await h.page(query(Blobs), 100);
    assert.equal(first.rows.length, 2);
    assert.equal(typeof first.next, "string");
    const second = await h.page(query(Blobs), 100, { after: first.next });
    assert.deepEqual(second.rows.map((r) => r.id), [id(2), id(3)]);

    // The same in an order the page sorts (n has no index).
    const byN = query(Blobs).orderBy((b) => b.n, "desc");
    const sorted = await h.page(byN, 100);
    assert.deepEqual(sorted.rows.map((r) => r.n), [109, 108]);
    const sorted2 = await h.page(byN, 100, { after: sorted.next });
    assert.deepEqual(sorted2.rows.map((r) => r.n), [107, 106]);

    // handle.rows() pages of 100 rows: every row, once.
    const seen = [];
    for await (const row of h.rows()) seen.push(row);
    checkRows(seen, ROWS, SIZE);

    // The outbox: a record of 10 rows is 40 MiB, so one a read (the first
    // read also has the table's record before it).
    assert.equal(await readOutbox(store, 100), 11);
    // The log: the same, with its next.
    const page = await store.log({ limit: 100 });
    assert.deepEqual(page.commits.map((c) => c.seq), [1, 2]);
    assert.equal(page.next, 2);
    const rest = await store.log({ after: page.next, limit: 100 });
    assert.deepEqual(rest.commits.map((c) => c.seq), [3]);
    assert.equal(rest.next, 3);

    // 60 rows more (170 of 4 MiB): the fingerprint reads every row in
    // pages of 1,000, which copied 680 MiB at once and aborted the core
    // (session 49's probe); now each of its pages is cut as well.
    await store.outbox.trim(store.head);
    await fill(store, { rows: 170, size: SIZE, perTx: 10, from: ROWS });
    assert.equal(await h.count(), 170);
    const fp = await store.fingerprint();
    assert.match(fp, /^f1-[0-9a-f]{32}$/);
    assert.equal(await store.fingerprint(), fp);

    // The store took every read whole and goes on.
    await store.object({ type: "big" }).tx(async (tx) => { await tx.put(h, { id: "after", n: -1, body: "small" }); });
    assert.equal(await h.count(), 171);
  } finally {
    await store.close();
  }
});

test("a file store's page, outbox read, log and export of rows of 100 KB stop at 8 MiB and go on from there", async () => {
  const ROWS = 300;
  const SIZE = 100 * 1024;
  const dir = mkdtempSync(join(tmpdir(), "onestore-read-budget-"));
  try {
    const store = await openStore({ backend: "sqlite", path: join(dir, "s.db"), durability: "relaxed" });
    const h = await fill(store, { rows: ROWS, size: SIZE, perTx: 30 });

    // 300 rows asked, 82 given (8 MiB of 100 KiB rows: the 82nd crosses it).
    const first = await h.page(query(Blobs), ROWS);
    assert.equal(first.rows.length, 82);
    assert.equal(typeof first.next, "string");
    const seen = [...first.rows];
    for (let after = first.next; after !== undefined;) {
      const p = await h.page(query(Blobs), ROWS, { after });
      assert.ok(p.rows.length > 0);
      seen.push(...p.rows);
      after = p.next;
    }
    checkRows(seen, ROWS, SIZE);
    // A page under the budget is whole: the last 10 rows, and a next for the rest.
    const tail = await h.page(query(Blobs).orderBy((b) => b.id, "desc"), 10);
    assert.equal(tail.rows.length, 10);
    assert.deepEqual(tail.rows.map((r) => r.n), [299, 298, 297, 296, 295, 294, 293, 292, 291, 290]);
    assert.ok(tail.next !== undefined);

    // Records of 3 MiB after the table's: three a read (the first read
    // also has the table's record).
    assert.equal(store.head, 11);
    assert.equal(await readOutbox(store, 100), 4);
    const log = await store.log({ limit: 100 });
    assert.deepEqual(log.commits.map((c) => c.seq), [1, 2, 3, 4]);
    assert.equal(log.next, 4);

    // The export's pages are cut the same way; the import holds every row.
    const fp = await store.fingerprint();
    const back = await importStore(store.export(), { backend: "memory" });
    try {
      assert.equal(await back.fingerprint(), fp);
      assert.equal(await back.object({ type: "big" }).table(Blobs).count(), ROWS);
    } finally {
      await back.close();
    }
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a page of documents.list stops once its records hold 8 MiB of values (it counted only the index rows before)", async () => {
  const store = await openStore({ backend: "memory" });
  try {
    const owner = store.object({ type: "docs" });
    const DOCS = 7;
    await owner.tx(async (tx) => {
      for (let i = 0; i < DOCS; i++) await tx.documents.create({ kind: "k", key: `d${i}` }, { i, text: body(i, 3 << 20) });
    });
    // Three values of 3 MiB pass 8 MiB: the page stops there, with its next.
    const first = await owner.documents.list(undefined, 50);
    assert.deepEqual(first.rows.map((d) => d.value.i), [0, 1, 2]);
    assert.equal(typeof first.next, "string");
    const seen = [...first.rows];
    for (let after = first.next; after !== undefined;) {
      const p = await owner.documents.list(undefined, 50, { after });
      seen.push(...p.rows);
      after = p.next;
    }
    assert.deepEqual(seen.map((d) => d.value.i), [0, 1, 2, 3, 4, 5, 6]);
    for (const d of seen) assert.equal(d.value.text, body(d.value.i, 3 << 20));
  } finally {
    await store.close();
  }
});
