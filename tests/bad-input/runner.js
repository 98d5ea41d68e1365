// The bad-input corpus's runner (tests/bad-input/cases.json, written by
// make-cases.mjs): every case through the public package API on one store,
// shared by Node (tests/js/bad-input.test.js: memory and a sqlite file),
// Chromium (tests/browser/bad-input.test.js: opfs, in a Worker) and workerd
// (tests/edge/bad-input.test.js: durable). Plain ES module, no Node imports.
//
//   const { runCases } = badInputRunner(api);
//   const report = await runCases(cases, { open, openReplica, backend });
//
// For each case: the call, its outcome ("ok" or the StoreError's code; any
// other throw is "not a StoreError"), compared with the case's `expect`;
// then, whatever the outcome: a refused call left the store's head and
// fingerprint (and a replica's) as they were, the wasm instance still
// answers, and the store still commits a row and reads it back.
// `report.failures` lists every case that broke one of these.

export function badInputRunner(api) {
  const {
    defineTable, str, int, bool, num, json, query, col, value,
    add, sub, max, min, concat, replacePrefix, coalesce, when,
    eq, ne, lt, lte, gt, gte, inArray, isNull, prefix, and, or, not, StoreError,
  } = api;

  const Items = defineTable("items", {
    columns: { id: str(), n: int().optional(), x: num().optional(), b: bool().optional(), s: str().optional(), meta: json().optional() },
    key: ["id"],
    indexes: { byN: ["n"] },
  });
  const Canary = defineTable("canary", { columns: { n: int(), v: int({ default: 0 }) }, key: ["n"] });
  const preds = { eq, ne, lt, lte, gt, gte, inArray, isNull, prefix, and, or, not };
  const exprs = { value, add, sub, max, min, concat, replacePrefix, coalesce, when };

  class Instance { constructor() { this.a = 1; } }

  function deepArray(n, leaf) {
    let v = leaf;
    for (let i = 0; i < n; i++) v = [v];
    return v;
  }

  function base64url(text) {
    const bytes = new TextEncoder().encode(text);
    let bin = "";
    for (const b of bytes) bin += String.fromCharCode(b);
    return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  /** A case's tagged JSON -> the JS value it stands for. */
  function decode(v, env) {
    if (Array.isArray(v)) return v.map((x) => decode(x, env));
    if (v === null || typeof v !== "object") return v;
    const keys = Object.keys(v);
    const tag = keys.find((k) => k.startsWith("$"));
    if (tag === undefined) return Object.fromEntries(keys.map((k) => [k, decode(v[k], env)]));
    const a = v[tag];
    switch (tag) {
      case "$nan": return NaN;
      case "$inf": return Infinity;
      case "$ninf": return -Infinity;
      case "$negzero": return -0;
      case "$undefined": return undefined;
      case "$bigint": return BigInt(a);
      case "$deep": return deepArray(a[0], decode(a[1], env));
      case "$deepobj": { let o = 1; for (let i = 0; i < a; i++) o = { k: o }; return o; }
      case "$wide": return Array.from({ length: a }, (_, i) => i);
      case "$widestr": return Array.from({ length: a }, (_, i) => `s${i}`);
      case "$manykeys": return Object.fromEntries(Array.from({ length: a }, (_, i) => [`k${i}`, i]));
      case "$repeat": return (v.$prefix ?? "") + a[0].repeat(a[1]) + (v.$suffix ?? "");
      case "$fn": return () => 1;
      case "$symbol": return Symbol("s");
      case "$date": return new Date(a);
      case "$map": return new Map([["a", 1]]);
      case "$setobj": return new Set([1]);
      case "$bytes": return new Uint8Array(a);
      case "$tojson": return { toJSON: () => 1 };
      case "$instance": return new Instance();
      case "$cycle": { const o = { id: "cycle" }; o.self = o; return o; }
      case "$protokey": return JSON.parse('{"__proto__":{"polluted":1},"a":1}');
      case "$nullproto": { const o = Object.create(null); o.a = 1; return o; }
      case "$col": return col(a);
      case "$pred": return preds[a[0]](...a.slice(1).map((x, i) => (i === 0 && typeof x === "string" && a[0] !== "and" && a[0] !== "or" ? col(x) : decode(x, env))));
      case "$expr": return exprs[a[0]](...a.slice(1).map((x) => decode(x, env)));
      case "$deepexpr": { let e = col("n"); for (let i = 0; i < a; i++) e = add(e, 1); return e; }
      case "$deeppred": {
        let p = eq(col("n"), 1);
        for (let i = 0; i < a[1]; i++) p = a[0] === "not" ? not(p) : and(p, eq(col("n"), i));
        return p;
      }
      case "$wideor": return or(...Array.from({ length: a }, (_, i) => eq(col("n"), i)));
      case "$widegt": return or(...Array.from({ length: a }, (_, i) => gt(col("n"), i)));
      case "$throwingwhere": return () => { throw new Error("the caller's where threw"); };
      case "$wherereturns": return () => 5;
      case "$deepwire": { let w = { eq: ["n", 1] }; for (let i = 0; i < a; i++) w = { not: w }; return w; }
      case "$columns": return Object.fromEntries(Array.from({ length: a }, (_, i) => [`c${i}`, "str"]));
      case "$cursorjson": return "c1." + base64url(JSON.stringify(decode(a, env)));
      case "$cursordeep": return "c1." + base64url("[".repeat(a) + "]".repeat(a));
      case "$cursor": return env.cursors[a];
      case "$manyputs": {
        const ops = Array.from({ length: a }, (_, i) => ({ op: "put", table: "t/items", row: { id: `many${i}` } }));
        ops.push({ op: "put", table: "t/items", row: { id: 5 } });
        return ops;
      }
      case "$manypatch": return Array.from({ length: a }, (_, i) => ({ op: "replace", path: "/a", value: i }));
      case "$deepbatch": return "{\"from\":0,\"to\":1,\"commits\":" + "[".repeat(a) + "]".repeat(a) + "}";
      case "$deepbatchrow": {
        const inner = "[".repeat(a) + "]".repeat(a);
        return `{"from":0,"to":1,"commits":[{"seq":1,"from":0,"at":1,"owner":"t","ops":[{"op":"table","table":"t/r","version":1,"columns":{"id":{"type":"str"},"j":{"type":"json","optional":true}},"key":["id"],"indexes":{}},{"op":"put","table":"t/r","row":{"id":"a","j":${inner}}}]}]}`;
      }
      default: throw new Error(`bad-input: unknown tag ${tag}`);
    }
  }

  /** A column spec of a defineTable case ("str", "str?", {type, default}). */
  function column(spec, env) {
    const builders = { str, int, bool, num, json };
    if (typeof spec === "string") {
      const b = builders[spec.replace("?", "")]();
      return spec.endsWith("?") ? b.optional() : b;
    }
    return builders[spec.type]({ default: decode(spec.default, env) });
  }

  function buildQuery(q, env) {
    let built = query(Items);
    if (q?.where !== undefined) built = built.where(decode(q.where, env));
    for (const [c, dir] of q?.orderBy ?? []) built = built.orderBy(c, dir);
    return built;
  }

  // What a case needs in place before the state it must not change is
  // taken: a table whose case twin the case then declares.
  const prepare = {
    async defineTable(s, a) {
      if (a.twin) await s.owner.table(defineTable(a.name.toLowerCase(), { columns: { id: str() }, key: ["id"] })).count();
    },
  };
  const writes = new Set(["put", "update", "delete", "updateWhere", "deleteWhere", "commit"]);

  // The rows the wheres, cursors and updates find, put back after every
  // accepted write (a deleteWhere of every row, say).
  async function putBaseRows(s) {
    await s.owner.tx(async (tx) => {
      await tx.deleteWhere(s.items);  // the big rows an accepted case wrote go, so fingerprints stay cheap
      for (const [id, n] of [["a", 1], ["b", 2], ["c", 3], ["d", null]]) await tx.put(s.items, { id, n, s: id, x: 0.5, b: true, meta: { k: id } });
    });
  }

  // One function per case kind: runs the call (throws what it throws).
  const kinds = {
    async put(s, a, env) { await s.owner.tx(async (tx) => { await tx.put(s.items, decode(a.row, env)); }); },
    async update(s, a, env) { await s.owner.tx(async (tx) => { await tx.update(s.items, decode(a.key, env), decode(a.set, env)); }); },
    async delete(s, a, env) { await s.owner.tx(async (tx) => { await tx.delete(s.items, decode(a.key, env)); }); },
    async updateWhere(s, a, env) { await s.owner.tx(async (tx) => { await tx.updateWhere(s.items, decode(a.where, env), decode(a.set, env)); }); },
    async deleteWhere(s, a, env) { await s.owner.tx(async (tx) => { await tx.deleteWhere(s.items, decode(a.where, env)); }); },
    async get(s, a, env) { await s.items.get(decode(a.key, env)); },
    async count(s, a, env) { await s.items.count(buildQuery(a.query, env)); },
    async page(s, a, env) {
      const limit = "limit" in a ? decode(a.limit, env) : 10;
      const options = "cursor" in a ? { after: decode(a.cursor, env) } : undefined;
      await s.items.page(buildQuery(a.query, env), limit, undefined, options);
    },
    async commit(s, a, env) { await s.store.commit(decode(a.ops, env)); },
    async defineTable(s, a, env) {
      const columns = decode(a.columns, env);
      const spec = {
        columns: Array.isArray(columns) || typeof columns !== "object" ? columns
          : Object.fromEntries(Object.entries(columns).map(([k, c]) => [k, column(c, env)])),
        key: a.key,
      };
      if (a.indexes) spec.indexes = a.indexes;
      if ("version" in a) spec.version = decode(a.version, env);
      const handle = s.owner.table(defineTable(a.name, spec));
      await handle.count();
    },
    async object(s, a, env) {
      const owner = s.store.object(decode(a.address, env));
      await owner.table(Canary).count();
    },
    async open(s, a, env) {
      const options = decode(a.options, env);
      const store = await api.openStore(options);
      await store.close();
    },
    async applyBatch(s, a, env) {
      if (!s.replica) throw new Error("bad-input: no replica on this backend");
      await s.replica.applyBatch(decode(a.batch, env));
    },
    async docCreate(s, a, env) {
      await s.owner.tx(async (tx) => { await tx.documents.create(decode(a.address, env), decode(a.value, env)); });
    },
    async docChange(s, a, env) {
      await s.owner.tx(async (tx) => { await tx.documents.change(env.doc, decode(a.patch, env)); });
    },
    async log(s, a, env) { await s.store.log(decode(a.request, env)); },
    async at(s, a, env) { const view = await s.store.at(decode(a.seq, env)); await view.close?.(); },
  };

  /** The outcome of a call: "ok", a StoreError's code, or what else it threw. */
  async function outcome(fn) {
    try {
      await fn();
      return { got: "ok" };
    } catch (e) {
      if (e instanceof StoreError) return { got: e.code, error: e };
      if (e?.message === "the caller's where threw") return { got: "own error", error: e };
      return { got: `not a StoreError: ${e?.name}: ${String(e?.message ?? e).slice(0, 200)}`, error: e };
    }
  }

  async function stateOf(s) {
    const state = { head: s.store.head, fp: await s.store.fingerprint() };
    if (s.replica) state.replica = { head: s.replica.head, fp: await s.replica.fingerprint() };
    return state;
  }

  /**
   * Runs `cases` on one store from `open()` (and a replica from
   * `openReplica()` for the applyBatch cases, when given); `backend`
   * ("durable", ...) picks a case's `expectOn` outcome. Resolves to
   * {ran, skipped, failures: [{name, problem}], byCategory}.
   */
  async function runCases(cases, { open, openReplica, only, backend }) {
    const store = await open();
    const owner = store.object({ type: "t" });
    const s = { store, owner, items: owner.table(Items), canary: owner.table(Canary), replica: openReplica ? await openReplica() : undefined };
    const env = { cursors: {}, doc: undefined };
    const failures = [];
    const byCategory = {};
    let ran = 0, skipped = 0, canary = 0;
    let state;
    const times = [];
    try {
      // Rows for the wheres, cursors and updates to find.
      await putBaseRows(s);
      await owner.tx(async (tx) => {
        await tx.put(s.canary, { n: 0 });
        env.doc = await tx.documents.create({ kind: "doc", key: "d" }, { a: 1, list: [1, 2], obj: { x: 1 } });
      });
      // Real cursors, and real ones tampered with.
      const q = query(Items);
      const real = (await s.items.page(q, 1)).next;
      const flip = (c, i) => c.slice(0, i) + (c[i] === "A" ? "B" : "A") + c.slice(i + 1);
      env.cursors = {
        real,
        "flip-last": flip(real, real.length - 1),
        "flip-10": flip(real, 10),
        half: real.slice(0, Math.floor(real.length / 2)),
        append: real + "AAAA",
        desc: (await s.items.page(query(Items).orderBy("id", "desc"), 1)).next,
        "other-where": (await s.items.page(query(Items).where(gt(col("n"), 0)), 1)).next,
        "other-table": (await s.canary.page(undefined, 1)).next ?? "c1.",
      };
      const inside = JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(real.slice(3).replace(/-/g, "+").replace(/_/g, "/")), (ch) => ch.charCodeAt(0))));
      const withPosition = (p) => "c1." + base64url(JSON.stringify([inside[0], inside[1], inside[2], p]));
      env.cursors["position-str"] = withPosition([5]);
      env.cursors["position-null"] = withPosition([null]);
      env.cursors["position-long"] = withPosition(["a", "b"]);
      env.cursors["position-empty"] = withPosition([]);
      if (env.cursors["other-table"] === "c1.") {
        await owner.tx(async (tx) => { await tx.put(s.canary, { n: -1 }); });
        env.cursors["other-table"] = (await s.canary.page(undefined, 1)).next;
      }

      for (const c of cases) {
        if (only && !only(c)) { skipped++; continue; }
        try {
          if (!(await runOne(c))) break;
        } catch (e) {
          failures.push({ name: c.name, problem: `the runner's own checks failed after it: ${e?.code ?? e?.name}: ${String(e?.message ?? e).slice(0, 200)}` });
          break;
        }
      }
      async function runOne(c) {
        if (c.kind === "applyBatch" && !s.replica) { skipped++; return true; }
        ran++;
        byCategory[c.category] = (byCategory[c.category] ?? 0) + 1;
        const fail = (problem) => failures.push({ name: c.name, problem });
        if (prepare[c.kind]) {
          await prepare[c.kind](s, c.args, env);
          state = undefined;
        }
        const before = state ?? await stateOf(s);
        const t0 = Date.now();
        const expect = c.expectOn?.[backend] ?? c.expect;
        const { got, error } = await outcome(() => kinds[c.kind](s, c.args, env));
        times.push([Date.now() - t0, c.name]);
        if (got !== expect) fail(`expected ${expect}, got ${got}${error ? ` (${String(error.message).slice(0, 160)})` : ""}`);
        if (error && error instanceof StoreError && !(typeof error.message === "string" && error.message.length > 0)) {
          fail("a StoreError without a message");
        }
        if (got !== "ok") {
          const after = await outcome(async () => {
            const state = await stateOf(s);
            if (state.head !== before.head || state.fp !== before.fp) throw new Error(`the store changed: head ${before.head} -> ${state.head}`);
            if (s.replica && (state.replica.head !== before.replica.head || state.replica.fp !== before.replica.fp)) {
              throw new Error(`the replica changed: head ${before.replica.head} -> ${state.replica.head}`);
            }
          });
          if (after.got !== "ok") fail(`refused, but: ${after.got}`);
        }
        // Still alive: commits a row and reads it back.
        // (One canary row, rewritten: the store stays small, and so does
        // the cost of each fingerprint.)
        const alive = await outcome(async () => {
          const v = ++canary;
          await owner.tx(async (tx) => { await tx.put(s.canary, { n: 1, v }); });
          const row = await s.canary.get([1]);
          if (row?.v !== v) throw new Error(`the canary row's value ${v} was not read back`);
        });
        if (alive.got !== "ok") {
          fail(`the store no longer works after it: ${alive.got}`);
          return false;
        }
        if (got === "ok" && writes.has(c.kind)) await putBaseRows(s);
        // The state the next case starts from (a replica's changes only by
        // an accepted batch).
        state = await stateOf(s);
        return true;
      }
      // The replica still applies a good batch.
      if (s.replica) {
        const good = await store.outbox.read(s.replica.head, 1000);
        const r = await outcome(() => s.replica.applyBatch(good));
        if (r.got !== "ok") failures.push({ name: "the replica after the bad batches", problem: `a good batch: ${r.got} ${r.error?.message?.slice(0, 200)}` });
      }
    } finally {
      // A store a case broke (the failures say how) may refuse to close too.
      try { await s.replica?.close(); } catch { /* reported above */ }
      try { await store.close(); } catch { /* reported above */ }
    }
    times.sort((x, y) => y[0] - x[0]);
    return { ran, skipped, failures, byCategory, slowest: times.slice(0, 10) };
  }

  return { runCases, decode };
}
