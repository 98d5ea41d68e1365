// The store side of the link-latency workload (bench/link-figures.mjs drives
// it through link.html): a dedicated Worker serves a store with 100 derives
// to its page. Each derive reads one small slice of the items table (the
// first 10 rows of its group, as a list component would), so every write to
// the table makes all 100 dirty, and the commit's flush recomputes them and
// sends the page one message holding all 100 values.
//
// Message { backend, durability } opens the store and answers { ready }.
import { defineTable, deleteStore, int, openStore, prefix, query, serve, str } from "../../js/browser.js";

export const DERIVES = 100;
const ROWS_PER_GROUP = 20;

const Items = defineTable("items", { columns: { id: str(), n: int() }, key: ["id"] });
const groupOf = (g) => `g${String(g).padStart(3, "0")}/`;

self.onmessage = async (e) => {
  const { backend, durability } = e.data;
  try {
    const name = "bench-link";
    if (backend === "opfs") await deleteStore({ backend, name });
    const store = await openStore(backend === "opfs" ? { backend, name, durability } : { backend });
    const owner = store.object({ type: "bench" });
    const items = owner.table(Items);
    await owner.tx(async (tx) => {
      for (let g = 0; g < DERIVES; g++) {
        for (let i = 0; i < ROWS_PER_GROUP; i++) await tx.put(items, { id: `${groupOf(g)}${String(i).padStart(3, "0")}`, n: 0 });
      }
    });
    for (let g = 0; g < DERIVES; g++) {
      const q = query(Items).where((r) => prefix(r.id, groupOf(g)));
      store.derive(`slice${g}`, (read) => read.page(items, q, 10).rows.reduce((sum, r) => sum + r.n, 0));
    }
    let n = 0;
    serve(store, {
      methods: {
        // One put into one group's first rows: every derive reads the table,
        // so all 100 are recomputed; group `g`'s value changes.
        async write({ g }) {
          n++;
          await owner.tx((tx) => tx.put(items, { id: `${groupOf(g % DERIVES)}000`, n }));
          return store.head;
        },
      },
    });
    self.postMessage({ ready: true, head: store.head });
  } catch (err) {
    self.postMessage({ ready: false, error: `${err?.code ?? ""} ${err?.message ?? err}` });
  }
};
