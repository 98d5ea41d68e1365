// The store side of the link-latency workload (bench/link-figures.mjs drives
// it through link.html): a dedicated Worker serves a store with 100 derives
// to its page. Each derive reads one small page of the items table, as a
// list component would. Three shapes:
// - "one": a group's first 10 rows read by key (a prefix of the id), so a
//   write to one group makes only that group's derive dirty (js/derive.js,
//   "what a read depends on"), and the commit's flush recomputes it alone.
//   This is the shape of Replicache's own figure (a write with 64 or 128
//   subscriptions, a few of them dirty).
// - "index": the same pages read by a column that is not the key (grp,
//   through its index). Every write is to the table of all 100 pages, and
//   the flush asks the core, once, which pages the write's row may enter
//   (js/derive.js, "pages read by another column"): only the written
//   group's derive is recomputed.
// - "all": every derive reads the 10 rows of the highest n (through the n
//   index, each with a where of its own), and every write gives its row the
//   highest n yet, so every write changes all 100 pages: the flush
//   recomputes them all (each page patched from the old one and the
//   written row: js/derive.js, "pages patched in place") and sends the
//   page one message holding all 100 values.
//
// Message { backend, durability, shape } opens the store and answers { ready }.
import { defineTable, deleteStore, eq, gte, int, openStore, prefix, query, serve, str } from "../../js/browser.js";

export const DERIVES = 100;
const ROWS_PER_GROUP = 20;

const Items = defineTable("items", { columns: { id: str(), grp: str(), n: int() }, key: ["id"], indexes: { byGrp: ["grp"], byN: ["n"] } });
const groupOf = (g) => `g${String(g).padStart(3, "0")}/`;

self.onmessage = async (e) => {
  const { backend, durability, shape } = e.data;
  try {
    const name = "bench-link";
    if (backend === "opfs") await deleteStore({ backend, name });
    const store = await openStore(backend === "opfs" ? { backend, name, durability } : { backend });
    const owner = store.object({ type: "bench" });
    const items = owner.table(Items);
    await owner.tx(async (tx) => {
      for (let g = 0; g < DERIVES; g++) {
        for (let i = 0; i < ROWS_PER_GROUP; i++) await tx.put(items, { id: `${groupOf(g)}${String(i).padStart(3, "0")}`, grp: groupOf(g), n: 0 });
      }
    });
    for (let g = 0; g < DERIVES; g++) {
      const q = shape === "all" ? query(Items).where((r) => gte(r.n, -g)).orderBy((r) => r.n, "desc")
        : query(Items).where((r) => (shape === "index" ? eq(r.grp, groupOf(g)) : prefix(r.id, groupOf(g))));
      store.derive(`slice${g}`, (read) => read.page(items, q, 10).rows.reduce((sum, r) => sum + r.n, 0));
    }
    let n = 0;
    serve(store, {
      methods: {
        // One put into one group's first rows, with the highest n yet:
        // group `g`'s page changes ("one", "index"), and so does every
        // derive's page of the highest n ("all").
        async write({ g }) {
          n++;
          await owner.tx((tx) => tx.put(items, { id: `${groupOf(g % DERIVES)}000`, grp: groupOf(g % DERIVES), n }));
          return store.head;
        },
      },
    });
    self.postMessage({ ready: true, head: store.head });
  } catch (err) {
    self.postMessage({ ready: false, error: `${err?.code ?? ""} ${err?.message ?? err}` });
  }
};
