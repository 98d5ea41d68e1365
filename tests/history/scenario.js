// One history, run the same way on every backend (tests/js/history.test.js
// in Node, tests/browser/pages/opfs-worker.js in Chromium, tests/edge/worker.js
// in workerd): two owners, tables, key and bulk writes, documents created,
// changed, retired and created again, by two actors. It captures the store's
// own state after every commit, then opens store.at(seq) for each of those
// seqs and reads the same state from the view, and asks store.log for each
// commit and for filtered pages. Everything it answers is plain data.

export const ana = Object.freeze({ actor: { kind: "person", id: "ana" } });
export const bot = Object.freeze({ actor: { kind: "agent", id: "bot" } });

const NOTE = { kind: "note", key: "n1" };

async function all(iterable) {
  const out = [];
  for await (const row of iterable) out.push(row);
  return out;
}

// The state of a store or a view: every named table's rows (in key order)
// and count, the note document, the list of notes.
async function stateOf(read, names) {
  const tables = {};
  for (const name of names) tables[name] = { rows: await all(read.table(name).rows()), count: await read.table(name).count() };
  const docs = read.documents("notes");
  const note = await docs.find(NOTE);
  const list = await docs.list({ kind: "note" }, 10);
  return { tables, note: note ?? null, notes: list.rows };
}

/**
 * Runs the history on `store` (an empty store of any backend) and answers
 * { head, live: [{ seq, state }], views: [{ seq, state, fingerprint }],
 * fingerprints: [live fingerprint per captured seq], log: {...} }.
 */
export async function runHistory(api, store) {
  const { defineTable, str, int, json, add, col, lt } = api;
  const Items = defineTable("items", { columns: { id: str(), n: int(), meta: json().optional() }, key: ["id"] });
  const Msgs = defineTable("msgs", { columns: { id: int(), text: str() }, key: ["id"] });
  const notes = store.object({ type: "notes" });
  const chat = store.object({ host: "h", type: "chat" });
  const names = [];
  const live = [];
  const fingerprints = [];
  const open = {};
  const liveRead = {
    table: (name) => open[name],
    documents: () => notes.documents,
  };
  const capture = async () => {
    live.push({ seq: store.head, state: await stateOf(liveRead, names) });
    fingerprints.push(await store.fingerprint());
  };

  await capture();  // seq 0: nothing yet
  const items = notes.table(Items);
  await items.count();
  names.push(items.name);
  open[items.name] = items;
  await capture();
  const msgs = chat.table(Msgs);
  await msgs.count();
  names.push(msgs.name);
  open[msgs.name] = msgs;
  await capture();

  let n1;
  await notes.tx(async (tx) => {
    await tx.put(items, { id: "a", n: 1, meta: { tags: ["x"] } });
    await tx.put(items, { id: "b", n: 2 });
    await tx.put(items, { id: "c", n: 3 });
    n1 = await tx.documents.create(NOTE, { title: "Plan", body: "" });
  }, ana);
  await capture();
  await chat.tx(async (tx) => { await tx.put(msgs, { id: 1, text: "hello" }); }, bot);
  await capture();
  await notes.tx(async (tx) => {
    await tx.update(items, ["a"], { n: add(col("n"), 10) });
    await tx.documents.change(n1, [{ op: "replace", path: "/title", value: "Plan v2" }]);
  }, ana);
  await capture();
  await notes.tx(async (tx) => { await tx.deleteWhere(items, (e) => lt(e.n, 4)); }, bot);
  await capture();
  await chat.tx(async (tx) => {
    await tx.put(msgs, { id: 2, text: "how are you" });
    await tx.put(msgs, { id: 3, text: "fine" });
  }, ana);
  await capture();
  await notes.tx(async (tx) => {
    await tx.documents.change(n1, [{ op: "add", path: "/tags", value: ["draft"] }, { op: "replace", path: "/body", value: "step 1" }]);
    await tx.put(items, { id: "d", n: 4 });
  }, bot);
  await capture();
  await notes.tx(async (tx) => { await tx.updateWhere(items, undefined, { n: add(col("n"), 1) }); }, ana);
  await capture();
  let n1b;
  await notes.tx(async (tx) => {
    await tx.documents.retire(n1);
    n1b = await tx.documents.create(NOTE, { title: "Second plan" });
  }, ana);
  await capture();
  await chat.tx(async (tx) => { await tx.delete(msgs, [1]); }, bot);
  await capture();

  // The view at every captured seq, read the same way.
  const views = [];
  for (const { seq } of live) {
    const view = await store.at(seq);
    try {
      const held = view.tables();
      const state = await stateOf(view, names.filter((n) => held.includes(n)));
      const first = await view.documents(notes).load(n1);
      views.push({ seq, tables: held, state, fingerprint: await view.fingerprint(), n1: first ?? null });
    } finally {
      await view.close();
    }
  }

  // The log: each commit, then filtered pages walked with their cursors.
  const head = store.head;
  const records = [];
  for (let s = 1; s <= head; s++) records.push(await store.log({ seq: s }));
  const outbox = (await store.outbox.read(0, 1000)).commits;
  const pages = async (filter, limit) => {
    const seqs = [];
    let after;
    let calls = 0;
    for (;;) {
      const page = await store.log({ ...filter, limit, after });
      calls++;
      seqs.push(...page.commits.map((c) => c.seq));
      if (page.next === undefined) return { seqs, calls };
      after = page.next;
    }
  };
  const log = {
    records,
    outbox,
    byOwner: await pages({ owner: "notes" }, 2),
    byChatAddress: await pages({ owner: { host: "h", type: "chat" } }, 10),
    byAna: await pages({ actor: { id: "ana" } }, 3),
    byAgentKind: await pages({ actor: { kind: "agent" } }, 1),
    notesByBot: await pages({ owner: "notes", actor: { kind: "agent", id: "bot" } }, 5),
    range: await pages({ from: 4, to: 8 }, 2),
  };
  return { head, n1, n1b, live, fingerprints, views, log };
}

/**
 * After `runHistory`: trims the outbox up to `upTo` and answers what
 * store.at and store.log say then (error codes, or what they read).
 */
export async function afterTrim(store, upTo) {
  const codeOf = async (fn) => {
    try {
      await fn();
      return "ok";
    } catch (e) {
      return e.code;
    }
  };
  const removed = await store.outbox.trim(upTo);
  return {
    removed,
    atTrimmed: await codeOf(() => store.at(upTo)),
    atHead: await codeOf(() => store.at(store.head)),
    atZero: await codeOf(async () => { const v = await store.at(0); const t = v.tables(); await v.close(); if (t.length) throw new Error("tables at seq 0"); }),
    logTrimmed: await codeOf(() => store.log({ seq: upTo })),
    logKept: (await store.log({ seq: upTo + 1 })).seq,
    logBeyond: await codeOf(() => store.log({ seq: store.head + 1 })),
    filtered: (await store.log({ limit: 100 })).commits.map((c) => c.seq),
  };
}
