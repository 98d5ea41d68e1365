// Checks the durable backend inside real workerd (Miniflare 4): a store in a
// Durable Object's own SQLite through ctx.storage.sql.exec, every commit
// inside ctx.storage.transactionSync. Tables, _outbox, _meta and _tables live
// in the object's SQLite; a store keeps everything across a restart of the
// runtime; a throw inside a transaction leaves neither data nor outbox
// record; each platform limit gives `limit` and commits nothing; ints beyond
// 2^53 stay exact; two racing requests commit in one order; adopt, watches
// and the outbox see one representation of a commit; store.lock holds across
// the object's requests; a durable store takes snapshots (more in
// snapshots.test.js) and a memory store in workerd restores them.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { startWorkerd } from "./harness.js";

let workerd;
before(async () => { workerd = await startWorkerd(); });
after(async () => { await workerd?.dispose(); });

let counter = 0;
const fresh = (label) => `${label}-${counter++}`;

describe("the durable backend in workerd", () => {
  test("a put leaving out defaulted and optional columns reaches adopt, a watch and the outbox as one op, defaults filled in", async () => {
    const o = fresh("seen");
    const r = await workerd.call(o, "putSeen", { rows: [{ id: 1, title: "t" }] });
    const op = { op: "put", table: "seen/notes", row: { id: 1, title: "t", body: null, n: 0, score: null } };
    assert.deepEqual(r.record, { seq: r.seq, ops: [op] });
    assert.deepEqual(r.adopted, r.record);
    assert.deepEqual(r.watched, r.record);
  });

  test("tables, the outbox and every system table live in the Durable Object's SQLite", async () => {
    const o = fresh("layout");
    const seq = await workerd.call(o, "put", { rows: [{ id: 1, title: "first" }, { id: 2, title: "second", body: "b" }] });
    const s = await workerd.call(o, "state");
    assert.equal(s.table, "notes/notes");
    for (const t of ["_meta", "_outbox", "_tables", "notes/notes"]) assert.ok(s.tables.includes(t), `${t} in ${s.tables}`);
    assert.deepEqual(s.raw, [{ id: "1", title: "first" }, { id: "2", title: "second" }]);
    assert.equal(s.head, seq);
    assert.equal(s.rawHead, BigInt(seq));
    assert.deepEqual(s.rows.map((r) => r.title), ["first", "second"]);
    assert.equal(s.rows[1].body, "b");
    // One outbox record per commit (the table's declaration, then the put), in seq order.
    assert.deepEqual(s.rawOutbox, s.outbox.commits.map((c) => BigInt(c.seq)));
    assert.equal(s.outbox.commits.at(-1).ops.length, 2);
    assert.equal(s.adopted.at(-1).seq, seq);
  });

  test("the store never sends BEGIN: workerd refuses it, and every write runs inside transactionSync", async () => {
    const o = fresh("begin");
    const refusal = await workerd.call(o, "rawBegin");
    assert.match(refusal, /transactionSync/);
    await workerd.call(o, "put", { rows: [{ id: 1, title: "x" }] });
    await workerd.call(o, "add", { id: 1, by: 2 });
    const log = await workerd.call(o, "log");
    assert.ok(log.length > 0);
    for (const { text } of log) assert.doesNotMatch(text, /^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b/i);
    const writes = log.filter(({ text }) => /^\s*(INSERT|UPDATE|DELETE|CREATE|DROP)\b/i.test(text));
    assert.ok(writes.length >= 4, `writes: ${writes.map((w) => w.text).join("\n")}`);
    for (const w of writes) assert.ok(w.inTransaction, `outside transactionSync: ${w.text}`);
  });

  test("a throw inside a transaction leaves neither data nor outbox record", async () => {
    const o = fresh("throw");
    await workerd.call(o, "put", { rows: [{ id: 1, title: "kept" }] });
    const before = await workerd.call(o, "state");
    await assert.rejects(workerd.call(o, "putThenThrow", { row: { id: 2, title: "lost" } }), /boom in the transaction/);
    const s = await workerd.call(o, "state");
    assert.equal(s.head, before.head);
    assert.deepEqual(s.raw, before.raw);
    assert.deepEqual(s.rawOutbox, before.rawOutbox);
    // The store goes on: the next commit takes the next seq.
    const seq = await workerd.call(o, "put", { rows: [{ id: 3, title: "after" }] });
    assert.equal(seq, before.head + 1);
  });

  test("an integer overflow in a set expression is invalid/args and commits nothing", async () => {
    const o = fresh("overflow");
    await workerd.call(o, "put", { rows: [{ id: 1, title: "x", n: 9223372036854775800n }] });
    const before = await workerd.call(o, "state");
    await assert.rejects(workerd.call(o, "add", { id: 1, by: 100 }), (e) => e.code === "invalid/args" && /integer overflow/.test(e.message));
    const s = await workerd.call(o, "state");
    assert.equal(s.head, before.head);
    assert.equal(s.rows[0].n, 9223372036854775800n);
    assert.equal(await workerd.call(o, "add", { id: 1, by: -800 }), before.head + 1);
    assert.equal((await workerd.call(o, "get", { id: 1 })).n, 9223372036854775000n);
  });

  test("num values come back as they went in, integral ones beyond 2^63 included", async () => {
    const o = fresh("num");
    const scores = [1e19, -1e19, 0.1, 1.7976931348623157e308, 5e-324, 3, -2.5, 2 ** 53 + 2];
    await workerd.call(o, "put", { rows: scores.map((score, i) => ({ id: i + 1, title: `s${i}`, score })) });
    const s = await workerd.call(o, "state");
    assert.deepEqual(s.rows.map((r) => r.score), scores);
  });

  test("store.commit adopts once, synchronously, before it returns", async () => {
    const o = fresh("adopt");
    const r = await workerd.call(o, "adoptInStep");
    assert.deepEqual(r.beforeReturn, [r.seq]);
    assert.deepEqual(r.calls, [r.seq]);
    assert.equal(r.head, r.seq);
  });

  test("a second store opened on the same storage fences the first", async () => {
    const o = fresh("fence");
    await workerd.call(o, "put", { rows: [{ id: 1, title: "kept" }] });
    const r = await workerd.call(o, "fence");
    assert.equal(r.code, "fenced");
    assert.deepEqual(r.others, { count: "fenced", snapshot: "fenced", blobs: "fenced", export: "fenced" });
    assert.equal(r.sameStorage, true, "ctx.storage is one object, so an app's second openStore finds the first");
    assert.deepEqual(r.rows, ["kept", "from the second"]);
  });

  describe("platform limits give `limit` and no partial commit", () => {
    async function refused(label, op, args, pattern) {
      const o = fresh(label);
      await workerd.call(o, "put", { rows: [{ id: 1, title: "kept" }] });
      const before = await workerd.call(o, "state");
      const answer = await workerd.raw(o, op, args);
      assert.equal(answer.ok, false, `${op} succeeded`);
      assert.equal(answer.code, "limit", answer.message);
      assert.match(answer.message, pattern);
      const s = await workerd.call(o, "state");
      assert.equal(s.head, before.head);
      assert.deepEqual(s.raw, before.raw);
      assert.deepEqual(s.rawOutbox, before.rawOutbox);
      // Still open and writable.
      assert.equal(await workerd.call(o, "put", { rows: [{ id: 9, title: "after" }] }), before.head + 1);
    }

    test("a value above 2 MB", async () => {
      await refused("value", "put", { rows: [{ id: 2, title: "small" }, { id: 3, title: "x".repeat(2_000_001) }] }, /the row \[3\] is 20000\d\d bytes, above this backend.s limit of 2000000 bytes per value or row/);
    });

    test("a row above the platform's size, its values each below 2 MB (workerd's own SQLITE_TOOBIG)", async () => {
      await refused("row", "put", { rows: [{ id: 2, title: "y".repeat(1_200_000), body: "z".repeat(1_200_000) }] }, /the row \[2\] is 24000\d\d bytes, above this backend.s limit of 2000000 bytes per value or row/);
    });

    // Small literals (ints, short texts) are written into the statement
    // when it has more than 100 (tests/edge/wide.test.js); nums stay bound.
    test("more than 100 bound parameters that cannot be written into the statement", async () => {
      await refused("params", "putAndWideDelete", { row: { id: 2, title: "t" }, n: 101, on: "score" }, /101 values.*limit of 100/);
    });

    test("a statement above 100 KB", async () => {
      await refused("statement", "putAndLongDelete", { row: { id: 2, title: "t" }, terms: 5000 }, /bytes of SQL, above this backend's limit of 100000/);
    });

    test("just under the limits everything commits", async () => {
      const o = fresh("under");
      const seq = await workerd.call(o, "put", { rows: [{ id: 1, title: "x".repeat(1_900_000) }] });
      await workerd.call(o, "putAndWideDelete", { row: { id: 2, title: "t" }, n: 98 });
      const s = await workerd.call(o, "state");
      assert.equal(s.head, seq + 1);
      // The 98-way or matched nothing ("t" is none of t0..t97): both rows stay.
      assert.deepEqual(s.raw.map((r) => r.id), ["1", "2"]);
    });
  });

  // Outbox format 2: a record above the 2 MB a value may hold is split over
  // _outbox_parts. Before, such a commit failed with `limit` ("writing
  // outbox record N: a value of M bytes").
  test("a transaction of 100k puts commits, and its outbox record reads back whole", { timeout: 600_000 }, async () => {
    const o = fresh("bulk");
    const r = await workerd.call(o, "bulk", { n: 100_000, prefix: "é漢😀-" });
    assert.equal(r.seq, r.before + 1);
    assert.equal(r.to, r.seq);
    assert.equal(r.recordSeq, r.seq);
    assert.equal(r.ops, 100_000);
    assert.ok(r.titlesInOrder, "every op of the record, in order, with its row");
    assert.ok(r.recordBytes > 4_000_000, `the record is ${r.recordBytes} bytes`);
    assert.ok(r.parts >= 4, `stored in ${r.parts} further parts`);
    assert.equal(r.format, "2");
    assert.equal(r.count, 100_000);
    assert.deepEqual(r.last, { id: 100_000, title: "é漢😀-100000", body: null, n: 0, score: null });
  });

  test("a commit whose outbox record is above 2 MB (each row small) commits, and the outbox trims it whole", async () => {
    const o = fresh("record");
    const rows = Array.from({ length: 30 }, (_, i) => ({ id: 100 + i, title: "r".repeat(70_000) }));
    const seq = await workerd.call(o, "put", { rows });
    const s = await workerd.call(o, "state");
    assert.equal(s.head, seq);
    const record = s.outbox.commits.find((c) => c.seq === seq);
    assert.deepEqual(record.ops.map((op) => op.row.id), rows.map((r) => r.id));
    assert.ok(record.ops.every((op) => op.row.title === "r".repeat(70_000)));
    const trimmed = await workerd.call(o, "trim", { upTo: seq });
    assert.equal(trimmed.parts, 0, "no part of a trimmed record is left");
  });

  test("ints beyond 2^53 stay exact in keys, columns, cursors and the seq", async () => {
    const o = fresh("bigint");
    const big = 2n ** 53n + 1n;
    const max = 2n ** 63n - 1n;
    await workerd.call(o, "put", { rows: [{ id: big, title: "a", n: max }, { id: big + 2n, title: "b", n: -max - 1n }, { id: 5, title: "c" }] });
    const got = await workerd.call(o, "get", { id: big });
    assert.deepEqual(got, { id: big, title: "a", body: null, n: max, score: null });
    assert.equal(await workerd.call(o, "get", { id: big - 1n }), null);
    const s = await workerd.call(o, "state");
    assert.deepEqual(s.raw.map((r) => r.id), ["5", big.toString(), (big + 2n).toString()]);
    assert.deepEqual(s.rows.map((r) => r.n), [0, max, -max - 1n]);
    // tx.mintId beyond 2^53 answers the exact BigInt, as a read does.
    assert.equal(await workerd.call(o, "mintId"), big + 3n);
    // A cursor that holds a big key.
    const first = await workerd.call(o, "page", { limit: 2 });
    assert.deepEqual(first.rows.map((r) => r.id), [5, big]);
    const second = await workerd.call(o, "page", { limit: 2, after: first.next });
    assert.deepEqual(second.rows.map((r) => r.id), [big + 2n]);
    // The seq: a head beyond 2^53 (set in _meta), then one commit.
    await workerd.call(o, "setHead", { head: 2n ** 53n + 5n });
    await workerd.call(o, "put", { rows: [{ id: 7, title: "after" }] });
    const t = await workerd.call(o, "state");
    assert.equal(t.rawHead, 2n ** 53n + 6n);
    assert.equal(t.outbox.commits.at(-1).seq, 2n ** 53n + 6n);
    assert.equal(t.outbox.commits.at(-1).from, 2n ** 53n + 5n);
  });

  test("two requests racing on one object commit in one order: seq = outbox = adoption", async () => {
    const o = fresh("race");
    const start = await workerd.call(o, "put", { rows: [{ id: 1, title: "start" }] });
    await Promise.all([
      workerd.call(o, "race", { who: "a", count: 20 }),
      workerd.call(o, "race", { who: "b", count: 20 }),
    ]);
    const s = await workerd.call(o, "state");
    assert.equal(s.head, start + 40);
    // The outbox holds the commits in seq order, one after another...
    const records = s.outbox.commits.filter((c) => Number(c.seq) > start);
    assert.deepEqual(records.map((c) => Number(c.seq)), Array.from({ length: 40 }, (_, i) => start + 1 + i));
    // ...and adoption ran in that same order, for the same commits.
    const adopted = s.adopted.filter((a) => a.seq > start);
    assert.deepEqual(adopted.map((a) => a.seq), records.map((c) => Number(c.seq)));
    assert.deepEqual(adopted.map((a) => a.titles), records.map((c) => c.ops.map((op) => op.row.title)));
    // Each request's commits are in its own order, and the two interleaved.
    const titles = adopted.map((a) => a.titles[0]);
    for (const who of ["a", "b"]) {
      assert.deepEqual(titles.filter((t) => t.startsWith(who)), Array.from({ length: 20 }, (_, i) => `${who}-${i}`));
    }
    assert.ok(titles.some((t, i) => i > 0 && t[0] !== titles[i - 1][0]), `no interleaving: ${titles.join(" ")}`);
    // Forty read-modify-writes of n, each in its own transaction, none lost.
    assert.equal(s.rows[0].n, 40);
    assert.equal(s.rows[0].title, titles.at(-1));
  });
});

test("the workerd root opens memory stores too", async () => {
  const { row, head } = await workerd.call(fresh("memory"), "memory");
  assert.equal(row.title, "in memory");
  assert.equal(head, 2);
});

test("the workerd root exports every name the Node root does, so shared code links", async () => {
  const node = await import("../../js/index.js");
  const { names, refused } = await workerd.call(fresh("exports"), "exports");
  assert.deepEqual(names, Object.keys(node).sort());
  assert.equal(refused.code, "invalid/args");
  assert.match(refused.message, /deleteAll/);
});

describe("a store across a restart of workerd", () => {
  test("keeps its tables, outbox, head and id, and goes on from its head", async () => {
    const dir = mkdtempSync(join(tmpdir(), "onestore-edge-persist-"));
    try {
      let w = await startWorkerd({ persist: dir });
      let s;
      try {
        await w.call("kept", "put", { rows: [{ id: 1, title: "one" }, { id: 2n ** 60n, title: "big" }] });
        await w.call("kept", "put", { rows: [{ id: 3, title: "three" }] });
        s = await w.call("kept", "state");
      } finally {
        await w.dispose();
      }
      w = await startWorkerd({ persist: dir });
      try {
        const t = await w.call("kept", "state");
        assert.equal(t.head, s.head);
        assert.deepEqual(t.rows, s.rows);
        assert.deepEqual(t.outbox, s.outbox);
        assert.deepEqual(t.raw, s.raw);
        assert.equal(await w.call("kept", "put", { rows: [{ id: 4, title: "four" }] }), s.head + 1);
      } finally {
        await w.dispose();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a lock one request holds keeps the object's other requests waiting until it is released", async () => {
    const o = fresh("lock");
    assert.equal(await workerd.call(o, "lockHold", { name: "nightly" }), true);
    assert.equal(await workerd.call(o, "lockTry", { name: "nightly", timeout: 20 }), "lock/timeout");
    assert.equal(await workerd.call(o, "lockTry", { name: "other", timeout: 20 }), "ran");
    assert.equal(await workerd.call(o, "lockRelease", {}), true);
    assert.equal(await workerd.call(o, "lockTry", { name: "nightly", timeout: 20 }), "ran");
  });

  test("a durable store takes a snapshot at its head; a memory store in workerd restores and undoes", async () => {
    const r = await workerd.call(fresh("snap"), "snapshots", {});
    assert.equal(r.durable.seq, r.durable.head);
    assert.notEqual(r.changed, r.before);
    assert.equal(r.restored, r.before);
    assert.equal(r.undone, r.changed);
  });
});

test("a commit that a transaction of the app's own rolls back after it resolved stops the store's next commit, instead of a hole in the outbox", async () => {
  const r = await workerd.call("rolled-back-by-app", "rolledBackByApp");
  assert.equal(r.thrown, "the app rolls back");
  assert.equal(r.reported, r.head + 1, "the store reported the commit inside the app's transaction");
  // Before: the next commit took seq head + 2 over a hole at head + 1, and
  // no replica could read the outbox from 0 again.
  assert.equal(r.next.code, "storage_failed", JSON.stringify(r.next));
  assert.match(r.next.message, /rolled back after it was done/);
  assert.equal(r.reopened, r.head + 1, "a store opened again reads the head on disk and commits at head + 1");
  assert.deepEqual(r.seqs, Array.from({ length: r.head + 1 }, (_, i) => i + 1), "the outbox has no hole");
  assert.deepEqual(r.ids, [1, 4], "the rolled-back row and the refused one are not there");
  assert.equal(r.replicaHead, r.head + 1, "a replica applies the whole outbox from 0");
});

test("the store's very first commit rolled back by the app's own transaction stops the next commit too", async () => {
  const r = await workerd.call("rolled-back-first", "rolledBackByApp", { first: true });
  assert.equal(r.thrown, "the app rolls back");
  assert.equal(r.head, 0);
  assert.equal(r.reported, 2, "the store reported the table's declaration and the put inside the app's transaction");
  // Before: the disk's head was 0, which the check let pass (an import
  // starts there), so the next commit took seq 3 over a hole at seqs 1-2.
  assert.equal(r.next.code, "storage_failed", JSON.stringify(r.next));
  assert.match(r.next.message, /rolled back after it was done/);
  assert.equal(r.reopened, 2, "a store opened again reads head 0 on disk and commits the declaration and the put at seqs 1 and 2");
  assert.deepEqual(r.seqs, [1, 2], "the outbox has no hole: the declaration and the put after opening again");
  assert.deepEqual(r.ids, [4], "the rolled-back row and the refused one are not there");
  assert.equal(r.replicaHead, 2, "a replica applies the whole outbox from 0");
});

test("an open replaces the _outbox_next trigger of an earlier version with _outbox_follows", async () => {
  const r = await workerd.call("old-trigger", "oldTrigger");
  assert.deepEqual(r.before, ["_outbox_head", "_outbox_next"]);
  assert.deepEqual(r.after, ["_outbox_follows", "_outbox_head"]);
  assert.match(r.refused ?? "", /rolled back after it was done/, "an outbox row past the head + 1 is refused");
});

test("a durable store over a Durable Object class that is not SQLite-backed is refused with invalid/args naming the setting", async () => {
  const kv = await startWorkerd({ sqlite: false });
  try {
    // Before: storage_failed, its message the store's CREATE TABLE text.
    await assert.rejects(kv.call("kv", "get", { id: 1 }), (e) => e.code === "invalid/args" && /SQLite-backed/.test(e.message) && /new_sqlite_classes/.test(e.message));
  } finally {
    await kv.dispose();
  }
});
