// The commit stream of the kill campaign (issue 14, item 3) and the check of
// a store reopened after its runtime was killed in the middle of it. One
// module for every runtime: a Node child process (tests/kill/node-child.mjs),
// a browser Worker (tests/browser/pages/kill-worker.js) and a Durable Object
// (tests/edge/kill-worker.js) run `commitStream`; the reopened store is
// checked with `checkStore`. It takes the package's API as an argument, so
// it imports nothing.
//
// Commit c (0, 1, 2, ...) writes a row { c, kind, n } of the table "ledger"
// and, by its kind (kindOf(c)):
// - setup (c = 0): GROUP_ROWS rows of "groups", GROUPS groups, v = 0;
// - single: one row "s-<c>" of "single";
// - bulk: tx.updateWhere of group n = c % GROUPS: v = c on its GROUP_ROWS rows;
// - big: BIG_ROWS puts of "big" (ids 0..BIG_ROWS-1, every row c = c), one tx;
// - blob: a blob put first (its bytes from c), then a row "b-<c>" of
//   "single" naming its hash;
// - graph: an edge n-<c> -> n-<c - 10> of kind "next" (a defineEdges
//   table), a vector row <c> (vector(4): c, -c, c / 2, 1) and a change of the
//   one document at address { kind: "tally", key: "graph" } ({ last: c, n:
//   how many graph commits so far }; the first graph commit creates it).
// So every commit's rows say which commit wrote them, and a partial commit
// shows: a group whose rows differ in v, a "big" with rows of two commits or
// fewer than BIG_ROWS, a data row without its ledger row or the reverse.

export const GROUPS = 8;
export const GROUP_ROWS = 50;
export const BIG_ROWS = 25000;

/** The kind of commit c. `big` every bigEvery commits (0: never); blobs if `blobs`. */
export function kindOf(c, { bigEvery = 40, blobs = true } = {}) {
  if (c === 0) return "setup";
  if (bigEvery > 0 && c % bigEvery === 0) return "big";
  if (c % 10 === 5) return "bulk";
  if (blobs && c % 10 === 7) return "blob";
  if (c % 10 === 3) return "graph";
  return "single";
}

const TALLY = { kind: "tally", key: "graph" };
const vectorOf = (c) => [c, -c, c / 2, 1];

function blobText(c) {
  return `blob of commit ${c} `.padEnd(64 + (c % 997), "y");
}

/** The tables of the campaign, defined with `api` (the package's root). */
const defined = new WeakMap();  // api -> its tables (a store refuses a second definition of a table)
export function tablesOf(api) {
  if (!defined.has(api)) defined.set(api, defineTables(api));
  return defined.get(api);
}
function defineTables(api) {
  const { defineEdges, defineTable, int, str, vector } = api;
  return {
    Ledger: defineTable("ledger", { columns: { c: int(), kind: str(), n: int() }, key: ["c"] }),
    Single: defineTable("single", { columns: { id: str(), c: int(), pad: str() }, key: ["id"] }),
    Groups: defineTable("groups", { columns: { id: int(), g: int(), v: int() }, key: ["id"] }),
    Big: defineTable("big", { columns: { id: int(), c: int() }, key: ["id"] }),
    Edges: defineEdges("edges", { kinds: ["next"], data: { c: int() } }),
    Vecs: defineTable("vecs", { columns: { c: int(), v: vector(4) }, key: ["c"] }),
  };
}

const OWNER = { type: "kill" };

/** Commit c of the stream on `store`; resolves to its seq once acknowledged. */
export async function commitOne(api, store, c, options = {}) {
  const { Ledger, Single, Groups, Big, Edges, Vecs } = tablesOf(api);
  const owner = store.object(OWNER);
  const t = (def) => owner.table(def);
  const kind = kindOf(c, options);
  let hash = null;
  if (kind === "blob") hash = await store.blobs.put(new TextEncoder().encode(blobText(c)));
  const tally = kind === "graph" ? await owner.documents.find(TALLY) : null;
  await owner.tx(async (tx) => {
    if (kind === "setup") {
      for (let id = 0; id < GROUPS * GROUP_ROWS; id++) await tx.put(t(Groups), { id, g: id % GROUPS, v: 0 });
      await tx.put(t(Ledger), { c, kind, n: 0 });
    } else if (kind === "single") {
      await tx.put(t(Single), { id: `s-${c}`, c, pad: "x".repeat(200 + (c % 300)) });
      await tx.put(t(Ledger), { c, kind, n: 0 });
    } else if (kind === "bulk") {
      const g = c % GROUPS;
      await tx.updateWhere(t(Groups), (r) => api.eq(r.g, g), { v: c });
      await tx.put(t(Ledger), { c, kind, n: g });
    } else if (kind === "graph") {
      await tx.put(t(Edges), { from: `n-${c}`, to: `n-${c - 10}`, kind: "next", c });
      await tx.put(t(Vecs), { c, v: vectorOf(c) });
      if (!tally) await tx.documents.create(TALLY, { last: c, n: 1 });
      else await tx.documents.change(tally.id, [{ op: "replace", path: "/last", value: c }, { op: "replace", path: "/n", value: tally.value.n + 1 }]);
      await tx.put(t(Ledger), { c, kind, n: 0 });
    } else if (kind === "big") {
      for (let id = 0; id < BIG_ROWS; id++) await tx.put(t(Big), { id, c });
      await tx.put(t(Ledger), { c, kind, n: BIG_ROWS });
    } else {
      await tx.put(t(Single), { id: `b-${c}`, c, pad: hash });
      await tx.put(t(Ledger), { c, kind, n: 0 });
    }
  });
  return store.head;
}

/**
 * Commits c = start, start + 1, ... until `stop()` is true or a commit
 * fails; `ack(c, seq)` is called after each acknowledged commit (and must
 * report it out of the runtime before it returns, or return a promise that
 * settles once it has). Resolves to the error that ended it, or null.
 */
export async function commitStream(api, store, { start, ack, stop = () => false, ...options }) {
  for (let c = start; !stop(); c++) {
    let seq;
    try {
      seq = await commitOne(api, store, c, options);
    } catch (e) {
      return e;
    }
    await ack(c, seq);
  }
  return null;
}

async function all(table) {
  const out = [];
  for await (const row of table.rows()) out.push(row);
  return out;
}

/**
 * Checks a store reopened after a kill. `acked`: Map c -> seq of the commits
 * acknowledged before it (by this runtime's earlier runs too); `durability`
 * "full" means each of them must be there, "relaxed" that only a suffix of
 * the stream may be missing. Resolves to { problems: [...], next (the c to
 * go on with), present (ledger size), lost (acknowledged commits missing) }.
 */
export async function checkStore(api, store, { acked, durability = "full", options = {} }) {
  const { Ledger, Single, Groups, Big, Edges, Vecs } = tablesOf(api);
  const owner = store.object(OWNER);
  const problems = [];
  const ledger = await all(owner.table(Ledger));
  const kinds = new Map(ledger.map((r) => [Number(r.c), r]));
  // The ledger is a prefix 0..m of the stream: a later commit present with
  // an earlier one missing would be a hole, not a lost suffix.
  const next = ledger.length;
  for (const r of ledger) {
    const c = Number(r.c);
    if (c >= next) problems.push(`ledger has commit ${c} but only ${next} rows: a hole before it`);
    if (r.kind !== kindOf(c, options)) problems.push(`commit ${c} is ${r.kind}, the stream says ${kindOf(c, options)}`);
  }
  let lost = 0;
  for (const [c] of acked) {
    if (!kinds.has(c)) {
      lost++;
      if (durability === "full") problems.push(`acknowledged commit ${c} (durability full) is missing`);
    }
  }
  // Single and blob rows: exactly those of the ledger's single and blob commits.
  const singles = await all(owner.table(Single));
  const seen = new Set();
  for (const r of singles) {
    const c = Number(r.c);
    const kind = kinds.get(c)?.kind;
    const want = r.id.startsWith("b-") ? "blob" : "single";
    if (kind !== want || r.id !== `${want === "blob" ? "b" : "s"}-${c}`) problems.push(`row ${r.id} (c ${c}) without its ledger row (ledger says ${kind}): a partial commit`);
    seen.add(c);
    if (want === "blob") {
      const bytes = await store.blobs.get(r.pad);
      const text = bytes && new TextDecoder().decode(bytes);
      if (text !== blobText(c)) problems.push(`blob ${r.pad} of commit ${c} is ${bytes ? "different" : "missing"}`);
    }
  }
  for (const [c, r] of kinds) {
    if ((r.kind === "single" || r.kind === "blob") && !seen.has(c)) problems.push(`commit ${c} (${r.kind}) has its ledger row but no data row: a partial commit`);
  }
  // Groups: each group's rows all carry the last bulk commit of the group.
  const groups = await all(owner.table(Groups));
  if (kinds.has(0) !== (groups.length === GROUPS * GROUP_ROWS) || (!kinds.has(0) && groups.length > 0)) {
    problems.push(`${groups.length} group rows with setup ${kinds.has(0) ? "" : "not "}committed: a partial commit`);
  }
  for (let g = 0; g < GROUPS; g++) {
    let last = 0;
    for (const [c, r] of kinds) if (r.kind === "bulk" && Number(r.n) === g && c > last) last = c;
    const vs = new Set(groups.filter((r) => Number(r.g) === g).map((r) => Number(r.v)));
    if (groups.length > 0 && (vs.size !== 1 || !vs.has(last))) problems.push(`group ${g} has v ${[...vs].join(",")}, its last bulk commit is ${last}: a partial commit`);
  }
  // Big: all BIG_ROWS rows of the last big commit, or none before the first.
  const big = await all(owner.table(Big));
  let lastBig = -1;
  for (const [c, r] of kinds) if (r.kind === "big" && c > lastBig) lastBig = c;
  const cs = new Set(big.map((r) => Number(r.c)));
  if (lastBig < 0 ? big.length !== 0 : big.length !== BIG_ROWS || cs.size !== 1 || !cs.has(lastBig)) {
    problems.push(`big has ${big.length} rows of commits ${[...cs].slice(0, 5).join(",")}, the last big commit is ${lastBig}: a partial commit`);
  }
  // Graph: an edge and a vector row for exactly the ledger's graph commits,
  // and the tally document counting them, its last the latest.
  const graphs = [...kinds].filter(([, r]) => r.kind === "graph").map(([c]) => c).sort((a, b) => a - b);
  const edges = await all(owner.table(Edges));
  const vecs = await all(owner.table(Vecs));
  const edgeCs = new Set(edges.map((e) => Number(e.c)));
  const vecCs = new Set(vecs.map((v) => Number(v.c)));
  for (const e of edges) {
    const c = Number(e.c);
    if (kinds.get(c)?.kind !== "graph" || e.from !== `n-${c}` || e.to !== `n-${c - 10}`) problems.push(`edge ${e.from} -> ${e.to} (c ${c}) without its ledger row: a partial commit`);
  }
  for (const v of vecs) {
    const c = Number(v.c);
    if (kinds.get(c)?.kind !== "graph") problems.push(`vector row ${c} without its ledger row: a partial commit`);
    else if (v.v.length !== 4 || vectorOf(c).some((x, i) => v.v[i] !== x)) problems.push(`vector row ${c} holds ${[...v.v].join(",")}`);
  }
  for (const c of graphs) {
    if (!edgeCs.has(c) || !vecCs.has(c)) problems.push(`commit ${c} (graph) has its ledger row but ${edgeCs.has(c) ? "no vector row" : "no edge"}: a partial commit`);
  }
  const tally = await owner.documents.find(TALLY);
  const want = graphs.length === 0 ? null : { last: graphs[graphs.length - 1], n: graphs.length };
  if (JSON.stringify(tally?.value ?? null) !== JSON.stringify(want)) {
    problems.push(`the tally document is ${JSON.stringify(tally?.value ?? null)}, the ledger's graph commits make it ${JSON.stringify(want)}: a partial commit`);
  }
  // The outbox: seqs 1..head, contiguous, each commit's ledger put at the
  // seq it was acknowledged with.
  const seqOf = new Map();
  const ledgerName = owner.table(Ledger).name;
  let expect = 1;
  for (let after = 0; ;) {
    const batch = await store.outbox.read(after, 50);
    for (const rec of batch.commits) {
      if (rec.seq !== expect) problems.push(`outbox record ${rec.seq} where ${expect} was expected: not contiguous`);
      expect = rec.seq + 1;
      for (const op of rec.ops) if (op.op === "put" && op.table === ledgerName) seqOf.set(Number(op.row.c), rec.seq);
    }
    if (batch.commits.length === 0 || batch.to <= after) break;
    after = batch.to;
  }
  if (expect - 1 !== store.head) problems.push(`outbox ends at ${expect - 1}, head is ${store.head}`);
  for (const c of kinds.keys()) if (!seqOf.has(c)) problems.push(`commit ${c} has no outbox record`);
  for (const [c, seq] of acked) {
    if (kinds.has(c) && seqOf.get(c) !== seq) problems.push(`commit ${c} was acknowledged with seq ${seq}, the outbox has it at ${seqOf.get(c)}`);
  }
  return { problems, next, present: ledger.length, lost };
}
