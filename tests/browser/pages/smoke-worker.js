// A dedicated Worker that opens a memory store through the package's browser
// root and answers with what it committed.
import * as api from "../../../js/browser.js";

const { openStore, defineTable, str, int, query } = api;

const Notes = defineTable("notes", { columns: { id: str(), n: int() }, key: ["id"] });

self.onmessage = async () => {
  try {
    const store = await openStore({ backend: "memory" });
    const owner = store.object({ host: "session", type: "smoke" });
    const notes = owner.table(Notes);
    await owner.tx(async (tx) => { await tx.put(notes, { id: "a", n: 1 }); });
    let adopted = 0;
    const seq = await store.commit([{ op: "put", table: "smoke/notes", row: { id: "b", n: 2 } }], () => { adopted++; });
    const page = await notes.page(query(Notes), 10);
    self.postMessage({ ok: true, seq, adopted, head: store.head, id: store.id, rows: page.rows, names: Object.keys(api).sort() });
    await store.close();
  } catch (e) {
    self.postMessage({ ok: false, error: `${e.code ?? e.name}: ${e.message}` });
  }
};
