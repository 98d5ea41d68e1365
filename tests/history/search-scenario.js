// One history of vector rows and edges, run the same way on every backend
// (tests/js/history-search.test.js in Node, tests/edge/history-search-worker.js
// in workerd): puts, overwrites, a NULL vector, deletes, edges put in a
// transaction and one by one, deleteEdges. After every commit it asks the
// live store nearest (three metrics, a where) and neighbours (every
// direction, paged, a kind); then it opens store.at(seq) for each of those
// seqs and asks the view the same, its tables named by the store's handles
// and by definition and stored name. Everything it answers is plain data
// (a Float32Array as an array of numbers).

const NODES = ["a", "b", "c", "hub"];

/** A deterministic vector of 4 floats from a seed. */
export function vec(seed) {
  const out = new Float32Array(4);
  for (let i = 0; i < 4; i++) out[i] = Math.sin(seed * 7.3 + i * 1.7) * 3;
  return out;
}

/** The tables of the history, from the package's `api`. */
export function searchTables(api) {
  const { defineEdges, defineTable, int, str, vector } = api;
  return {
    Docs: defineTable("docs", { columns: { id: str(), kind: str(), embedding: vector(4).optional() }, key: ["id"] }),
    Links: defineEdges("links", { kinds: ["cites", "replies"], data: { at: int({ default: 0 }) } }),
  };
}

async function allNeighbours(handle, node, options) {
  const rows = [];
  let after;
  for (;;) {
    const page = await handle.neighbours(node, { ...options, after });
    rows.push(...page.rows);
    if (!page.next) return rows;
    after = page.next;
  }
}

const plain = (v) => JSON.parse(JSON.stringify(v, (k, x) => (x instanceof Float32Array ? Array.from(x) : x)));

// Every answer of the questions the history asks, of `docs` and `links`
// (a live table's handles or a view's tables).
async function answers(api, docs, links) {
  const out = [];
  for (const [i, q] of [vec(100), vec(101), vec(102)].entries()) {
    for (const metric of ["cosine", "l2", "dot"]) out.push(await docs.nearest((e) => e.embedding, q, 3, { metric }));
    out.push(await docs.nearest("embedding", q, 2, { metric: "l2", where: (e) => api.eq(e.kind, i % 2 ? "note" : "msg") }));
  }
  for (const node of NODES) {
    for (const direction of ["out", "in", "both"]) {
      out.push(await allNeighbours(links, node, { direction, limit: 2 }));
      out.push((await links.neighbours(node, { direction, kind: "cites", limit: 100 })).rows);
    }
  }
  return plain(out);
}

/**
 * Runs the history on `store` (an empty store of any backend) and answers
 * { live: [{ seq, answers }], views: [{ seq, byHandle, byName }] }: what the
 * store answered after each commit, and what store.at(seq) answers for it.
 */
export async function runSearchHistory(api, store) {
  const { Docs, Links } = searchTables(api);
  const owner = store.object({ type: "notebook" });
  const docs = owner.table(Docs);
  const links = owner.table(Links);
  await docs.count();
  await links.count();
  const put = (h, row) => owner.tx((tx) => tx.put(h, row));
  const steps = [];
  for (let i = 0; i < 8; i++) {
    steps.push(() => put(docs, { id: `d${i}`, kind: i % 2 ? "note" : "msg", embedding: i === 5 ? null : vec(i) }));
  }
  steps.push(() => put(docs, { id: "d2", kind: "note", embedding: vec(40) }));  // an overwrite
  steps.push(() => owner.tx((tx) => tx.delete(docs, ["d3"])));
  steps.push(() => owner.tx(async (tx) => {
    for (const [from, to, kind] of [["a", "b", "cites"], ["b", "c", "cites"], ["c", "a", "replies"], ["hub", "hub", "cites"]]) {
      await tx.put(links, { from, to, kind, at: 1 });
    }
  }));
  for (const to of ["a", "b", "c", "d", "e"]) steps.push(() => put(links, { from: "hub", to, kind: to < "c" ? "cites" : "replies" }));
  steps.push(() => owner.tx((tx) => tx.deleteEdges(links, "b", { direction: "out" })));
  steps.push(() => put(docs, { id: "d9", kind: "msg", embedding: vec(9) }));

  const live = [{ seq: store.head, answers: await answers(api, docs, links) }];
  for (const step of steps) {
    await step();
    live.push({ seq: store.head, answers: await answers(api, docs, links) });
  }
  const views = [];
  for (const { seq } of live) {
    const view = await store.at(seq);
    try {
      views.push({
        seq,
        byHandle: await answers(api, view.table(docs), view.table(links)),
        byName: await answers(api, view.table(Docs), view.table("notebook/links")),
      });
    } finally {
      await view.close();
    }
  }
  return { live, views };
}
