// A real Chromium page linked to a store served by a dedicated Worker: one
// link message per commit, carrying the held tables' ops together with the
// recomputed derives, the ops exactly as the outbox records them; call errors
// arrive as StoreError with their code.
import { test } from "node:test";
import assert from "node:assert/strict";
import { startHarness } from "./harness.js";

test("a page linked to a Worker's store gets one message per commit, with its derives", async () => {
  const h = await startHarness();
  try {
    const page = await h.newPage("/tests/browser/pages/link.html");
    const r = await page.evaluate(() => window.run());
    const [s1, s2, s3] = r.seqs;
    assert.deepEqual(r.seqs, [s1, s1 + 1, s1 + 2]);
    // held x4, then one commit message per commit, then the call results.
    assert.deepEqual(r.wire.filter((t) => t === "commit").length, 3);
    assert.deepEqual(r.wire.filter((t) => t === "held").length, 4);
    const bySeq = (seq) => r.seen.filter((e) => e.seq === seq && e.rows === undefined).map((e) => e.name);
    // The first commit touched both tables: every hold got its part.
    assert.deepEqual(bySeq(s1), ["notes/notes", "notes/tags", "count", "summary"]);
    // The second touched notes only: the derive over tags alone would stay quiet; both derives read notes.
    assert.deepEqual(bySeq(s2), ["notes/notes", "count", "summary"]);
    // The third touched tags only: count (notes only) is not recomputed.
    assert.deepEqual(bySeq(s3), ["notes/tags", "summary"]);
    const summary = r.seen.filter((e) => e.name === "summary").map((e) => e.value);
    assert.deepEqual(summary.at(-1), { notes: 3, tags: 2, head: s3 });
    assert.deepEqual(r.seen.filter((e) => e.name === "count").map((e) => e.value), [0, 1, 3]);
    // The held table's ops are the outbox record's: the default of n filled in.
    const linked = r.seen.find((e) => e.name === "notes/notes" && e.seq === s1 && e.opList);
    assert.deepEqual(linked.opList, r.record.filter((op) => op.table === "notes/notes"));
    assert.deepEqual(linked.opList, [{ op: "put", table: "notes/notes", row: { id: "a", text: "A", n: 5 } }]);
    assert.equal(r.error.code, "invalid/args");
    assert.equal(r.error.isStoreError, true);
    assert.deepEqual(page.errors, []);
  } finally {
    await h.close();
  }
});

test("a page that connects, holds and calls before its Worker has served (the worker still opening its store) is answered", { timeout: 60000 }, async () => {
  const h = await startHarness();
  try {
    const page = await h.newPage("/tests/browser/pages/link.html");
    const r = await page.evaluate(() => window.early());
    assert.equal(r.seq, 3, "the first call ran (seqs 1 and 2 declared the tables)");
    assert.deepEqual(r.rows, [{ id: "e", text: "E", n: 5 }]);
    assert.deepEqual(r.counts.slice(0, 2), [0, 1]);
    assert.deepEqual(page.errors, []);
  } finally {
    await h.close();
  }
});

test("a page linked to a Worker whose module fails before it serves (its openStore rejects) gets closed on its call and hold, with the worker's error", { timeout: 60000 }, async () => {
  const h = await startHarness();
  try {
    const page = await h.newPage("/tests/browser/pages/link.html");
    const r = await page.evaluate(() => window.failing());
    for (const told of [r.call, r.hold]) {
      assert.equal(told.code, "closed", JSON.stringify(told));
      assert.equal(told.isStoreError, true);
      assert.match(told.message, /the worker failed before serving: /);
      assert.match(told.message, /bad\/name/, "the worker's own error names the refused name");
    }
    assert.equal(r.closed, true);
  } finally {
    await h.close();
  }
});
