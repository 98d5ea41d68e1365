// A small session for the archive tests: two owners with three tables
// (keys of str and int, a json column, optional columns, unicode, an int
// beyond 2^53), more rows than one archive page, and a retained outbox.

import { defineTable, int, json, query, str } from "../../../js/index.js";

export const Edits = defineTable("edits", {
  version: 1,
  columns: { id: str(), path: str(), entry: int(), meta: json(), note: str().optional() },
  key: ["id"],
  indexes: { byPath: ["path", "entry"] },
});
export const Turns = defineTable("turns", {
  version: 2,
  columns: { n: int(), text: str(), big: int().optional() },
  key: ["n"],
});
export const Tags = defineTable("tags", {
  version: 1,
  columns: { tag: str(), count: int({ default: 0 }) },
  key: ["tag"],
});

/** Fills `store` (a new one): resolves to nothing; `rows` edits. */
export async function fill(store, rows = 1203) {
  const files = store.object({ host: "session", type: "file-history" });
  const edits = files.table(Edits);
  const chat = store.object({ host: "session", type: "chat" });
  const turns = chat.table(Turns);
  const tags = chat.table(Tags);
  await files.tx(async (tx) => {
    for (let i = 0; i < rows; i++) {
      await tx.put(edits, { id: `e${String(i).padStart(5, "0")}`, path: `src/${i % 7}.ts`, entry: i, meta: { i, deep: [1, { ü: "ß\n\"" }], f: 0.5 }, note: i % 3 ? null : `n${i} ✓` });
    }
  });
  await chat.tx(async (tx) => {
    await tx.put(turns, { n: 1, text: "hello\u2028world", big: 9007199254740993n });
    await tx.put(turns, { n: 2, text: "", big: null });
    await tx.put(tags, { tag: "a" });
  });
  await chat.tx(async (tx) => { await tx.update(tags, "a", { count: 5 }); });
  await files.tx(async (tx) => { await tx.delete(edits, "e00000"); });
}

/** Every table's rows, by table name, in key order. */
export async function allRows(store) {
  const files = store.object({ host: "session", type: "file-history" });
  const chat = store.object({ host: "session", type: "chat" });
  const out = {};
  for (const [owner, def] of [[files, Edits], [chat, Turns], [chat, Tags]]) {
    const h = owner.table(def);
    const rows = [];
    let after;
    for (;;) {
      const page = await h.page(query(def), 500, undefined, after ? { after } : undefined);
      rows.push(...page.rows);
      if (!page.next) break;
      after = page.next;
    }
    out[def.name] = rows;
  }
  return out;
}

/** The whole retained outbox. */
export async function allRecords(store) {
  return (await store.outbox.read(0, 100000)).commits;
}

/** The bytes of a ReadableStream. */
export async function bytesOf(stream) {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
