// Checks that a transaction's methods (js/tx.js, `txMethods`;
// js/documents.js, `txDocumentMethods`) are shared by every transaction,
// so a transaction allocates no closures of its own (issue 13: a one-put
// commit made about 30 of them, 2.7 KB of garbage), and that a
// method taken off `tx` or `tx.documents` and called alone says so with
// invalid/args, writes nothing, and leaves the transaction usable.
import assert from "node:assert/strict";
import { test } from "node:test";

import { defineTable, int, openStore, str } from "../../js/index.js";
import { rejectsWith, throwsWith } from "./helpers.js";

const Notes = defineTable("notes", { columns: { id: str(), text: str() }, key: ["id"] });
const Tasks = defineTable("tasks", { columns: { id: int(), title: str() }, key: ["id"] });

test("every transaction shares its methods (no closures of its own), tx.documents' too", async () => {
  const store = await openStore({ backend: "memory" });
  const owner = store.object({ type: "notes" });
  const notes = owner.table(Notes);
  const seen = [];
  await owner.tx(async (tx) => { seen.push(tx); await tx.put(notes, { id: "a", text: "A" }); });
  await owner.tx(async (tx) => { seen.push(tx); await tx.put(notes, { id: "b", text: "B" }); });
  const [one, two] = seen;
  assert.notEqual(one, two);
  for (const m of ["put", "update", "delete", "updateWhere", "deleteWhere", "deleteEdges", "get", "page", "rows", "count", "mintId"]) {
    assert.equal(typeof one[m], "function", m);
    assert.equal(one[m], two[m], `tx.${m} is one function for every transaction`);
  }
  for (const m of ["create", "change", "retire"]) assert.equal(one.documents[m], two.documents[m], `tx.documents.${m}`);
  assert.notEqual(one.documents, two.documents);
  assert.ok(Object.isFrozen(one) && Object.isFrozen(one.documents));
  // An ended transaction still refuses, through the shared methods.
  await rejectsWith(() => one.put(notes, { id: "c", text: "C" }), "invalid/args", ["the transaction has ended"]);
  assert.deepEqual((await notes.page(undefined, 10)).rows.map((r) => r.id), ["a", "b"]);
  await store.close();
});

test("a method taken off tx or tx.documents says so with invalid/args and writes nothing; the transaction goes on", async () => {
  const store = await openStore({ backend: "memory" });
  const owner = store.object({ type: "notes" });
  const notes = owner.table(Notes);
  const tasks = owner.table(Tasks);
  await tasks.get(0);
  const head = store.head;
  await owner.tx(async (tx) => {
    const { put, update, delete: del, get, count, page, documents } = tx;
    await rejectsWith(() => put(notes, { id: "x", text: "X" }), "invalid/args", ["tx.put", "taken off tx"]);
    await rejectsWith(() => put.call({}, notes, { id: "x", text: "X" }), "invalid/args", ["tx.put"]);
    await rejectsWith(() => update(notes, ["x"], { text: "Y" }), "invalid/args", ["tx.update"]);
    await rejectsWith(() => del(notes, ["x"]), "invalid/args", ["tx.delete"]);
    await rejectsWith(() => get(notes, "x"), "invalid/args", ["tx.get"]);
    await rejectsWith(() => count(notes), "invalid/args", ["tx.count"]);
    await rejectsWith(() => page(notes, undefined, 10), "invalid/args", ["tx.page"]);
    throwsWith(() => tx.rows.call(null, notes), "invalid/args", ["tx.rows"]);
    throwsWith(() => tx.mintId.call(undefined, tasks), "invalid/args", ["tx.mintId"]);
    const { create, retire } = documents;
    await rejectsWith(() => create({ kind: "note", key: "n1" }, { title: "T" }), "invalid/args", ["tx.documents.create", "taken off"]);
    await rejectsWith(() => retire(1), "invalid/args", ["tx.documents.retire"]);
    // The transaction itself still works, and a method bound to it too.
    await tx.put(notes, { id: "ok", text: "fine" });
    const bound = tx.put.bind(tx);
    await bound(notes, { id: "ok2", text: "bound" });
    // A spread copy keeps the transaction (its state is an own key of tx),
    // and lists the methods tx always had.
    const copy = { ...tx };
    assert.deepEqual(Object.keys(copy), ["documents", "put", "update", "delete", "updateWhere", "deleteWhere", "deleteEdges", "get", "page", "rows", "count", "mintId"]);
    await copy.put(notes, { id: "ok3", text: "spread" });
  });
  assert.equal(store.head, head + 1, "one commit: the transaction's own puts");
  assert.deepEqual((await notes.page(undefined, 10)).rows, [{ id: "ok", text: "fine" }, { id: "ok2", text: "bound" }, { id: "ok3", text: "spread" }]);
  await store.close();
});
