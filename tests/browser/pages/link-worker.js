// A dedicated Worker serving a memory store to its page (tests/browser/link.test.js).
import { openStore, serve, defineTable, str, int } from "../../../js/browser.js";

const Notes = defineTable("notes", { columns: { id: str(), text: str(), n: int({ default: 5 }) }, key: ["id"] });
const Tags = defineTable("tags", { columns: { id: str() }, key: ["id"] });

const store = await openStore({ backend: "memory" });
const owner = store.object({ type: "notes" });
const notes = owner.table(Notes);
const tags = owner.table(Tags);
await notes.count();
await tags.count();
store.derive("count", (read) => read.count(notes));
store.derive("summary", (read) => ({ notes: read.count(notes), tags: read.count(tags), head: read.head }));

serve(store, {
  methods: {
    async put({ notes: ns = [], tags: ts = [] }, ctx) {
      await owner.tx(async (tx) => {
        for (const n of ns) await tx.put(notes, n);
        for (const t of ts) await tx.put(tags, t);
      }, ctx);
      return store.head;
    },
    // The ops of the outbox record of `seq`.
    record: async (seq) => (await store.outbox.read(seq - 1, 1)).commits[0].ops,
    bad: () => notes.get(["a", "b"]),  // a two-part key on a one-column table: invalid/args
  },
});
self.postMessage({ ready: true });
