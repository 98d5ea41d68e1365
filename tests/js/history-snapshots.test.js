// store.at(seq) from the nearest snapshot, in Node on memory and a sqlite
// file: a view starts from the newest snapshot at or below its seq and
// replays only the retained outbox records after it, so it reads exactly
// what the store read at that seq (rows, documents, fingerprint) even when
// the outbox below it was trimmed; it is not_found only when neither a
// snapshot nor the outbox covers the seq; and reading a snapshot this way
// neither changes nor uses it up (it is still listed and restores as before).

import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";

import { defineTable, int, lt, openStore, str } from "../../js/index.js";
import { rejectsWith, tempDir } from "./helpers.js";

const Items = defineTable("items", { columns: { id: str(), n: int() }, key: ["id"] });
const NOTE = { kind: "note", key: "n1" };

let dir;
const backends = {
  memory: () => ({ backend: "memory" }),
  sqlite: () => ({ backend: "sqlite", path: join((dir ??= tempDir("onestore-atsnap-")), `a${Math.random().toString(36).slice(2)}.sqlite`) }),
};

async function all(iterable) {
  const out = [];
  for await (const row of iterable) out.push(row);
  return out;
}

// What a store or a view reads: the items, their count, the note, the fingerprint.
async function stateOf(items, docs, read) {
  const note = await docs.find(NOTE);
  return {
    rows: items ? await all(items.rows()) : [],
    count: items ? await items.count() : 0,
    note: note ? { value: note.value } : null,
    fingerprint: await read.fingerprint(),
  };
}

for (const [name, options] of Object.entries(backends)) {
  describe(`store.at from a snapshot on ${name}`, () => {
    test("a view starts from the newest snapshot at or below its seq and answers past a trimmed outbox, not_found only where nothing covers the seq", async () => {
      const store = await openStore(options());
      try {
        const notes = store.object({ type: "notes" });
        const items = notes.table(Items);
        const states = [];  // by seq
        const capture = async () => { states[store.head] = await stateOf(items, notes.documents, store); };
        await items.count();  // seq 1: the table's record
        await capture();
        let n1;
        await notes.tx(async (tx) => {
          await tx.put(items, { id: "a", n: 1 });
          await tx.put(items, { id: "b", n: 2 });
          n1 = await tx.documents.create(NOTE, { title: "Plan" });
        });
        await capture();  // 2
        await notes.tx(async (tx) => {
          await tx.put(items, { id: "c", n: 3 });
          await tx.documents.change(n1, [{ op: "replace", path: "/title", value: "Plan v2" }]);
        });
        await capture();  // 3
        const first = await store.snapshot({ label: "at 3" });
        await notes.tx((tx) => tx.delete(items, ["b"]));
        await capture();  // 4
        await notes.tx((tx) => tx.put(items, { id: "d", n: 4 }));
        await capture();  // 5
        const second = await store.snapshot({ label: "at 5" });
        assert.deepEqual([first.seq, second.seq], [3, 5]);
        await notes.tx(async (tx) => {
          await tx.put(items, { id: "e", n: 5 });
          await tx.documents.change(n1, [{ op: "add", path: "/body", value: "step 1" }]);
        });
        await capture();  // 6
        await notes.tx((tx) => tx.deleteWhere(items, (e) => lt(e.n, 3)));
        await capture();  // 7
        assert.equal(store.head, 7);
        const listed = await store.snapshots();

        assert.equal(await store.outbox.trim(5), 5);
        // 3: the first snapshot itself; 5..7: the second, then records 6 and 7.
        for (const seq of [3, 5, 6, 7]) {
          const view = await store.at(seq);
          try {
            const held = view.tables();
            const state = await stateOf(held.includes(items.name) ? view.table(items) : null, view.documents(notes), view);
            assert.deepEqual(state, states[seq], `the view at seq ${seq} reads what the store read then`);
          } finally {
            await view.close();
          }
        }
        // 4: its nearest snapshot is at 3 and record 4 was trimmed; 2 and 1:
        // no snapshot at or below them and the records were trimmed.
        for (const seq of [4, 2, 1]) {
          await rejectsWith(() => store.at(seq), "not_found", [`seq ${seq}`, "trimmed"]);
        }
        const empty = await store.at(0);
        assert.deepEqual(empty.tables(), []);
        await empty.close();

        // The snapshots are as they were, and each still restores its state.
        assert.deepEqual(await store.snapshots(), listed);
        await store.restore(second.id);
        assert.equal(await store.fingerprint(), states[5].fingerprint);
        await store.restore(first.id);
        assert.equal(await store.fingerprint(), states[3].fingerprint);
      } finally {
        await store.close();
      }
    });

    if (name === "sqlite") {
      test("after the store is opened again, a view still starts from a snapshot listed beside its file", async () => {
        const o = options();
        let store = await openStore(o);
        const states = [];
        let snap;
        try {
          const notes = store.object({ type: "notes" });
          const items = notes.table(Items);
          await items.count();
          for (let i = 0; i < 3; i++) await notes.tx((tx) => tx.put(items, { id: `k${i}`, n: i }));
          snap = await store.snapshot();
          states[snap.seq] = await stateOf(items, notes.documents, store);
          for (let i = 0; i < 3; i++) {
            await notes.tx((tx) => tx.update(items, [`k${i}`], { n: 10 + i }));
            states[store.head] = await stateOf(items, notes.documents, store);
          }
        } finally {
          await store.close();
        }
        store = await openStore(o);
        try {
          const notes = store.object({ type: "notes" });
          const items = notes.table(Items);
          await items.count();
          assert.equal(await store.outbox.trim(snap.seq), snap.seq);
          for (let seq = snap.seq; seq <= store.head; seq++) {
            const view = await store.at(seq);
            try {
              assert.deepEqual(await stateOf(view.table(items), view.documents(notes), view), states[seq], `the view at seq ${seq}`);
            } finally {
              await view.close();
            }
          }
          await rejectsWith(() => store.at(snap.seq - 1), "not_found", ["trimmed"]);
        } finally {
          await store.close();
        }
      });
    }
  });
}
