// The conformance vectors' runner (format in tests/conformance/README.md),
// over the public package API: writes through store.commit with wire ops,
// reads through table handles with queries built by the public builders.
// Shared by Node (tests/js/conformance.test.js, with node:assert) and
// Chromium (tests/browser/pages/opfs-worker.js, with a small assert of its
// own) and workerd (tests/edge/worker.js): plain ES module, no Node imports.
//
//   const { CaseRunner } = conformanceRunner(api, assert);
//   await new CaseRunner(doc, openOptions).run(doc.cases[0].steps);
//
// `api` is the package root's exports (openStore, defineTable, the column
// and predicate builders, StoreError); `assert` has ok, equal,
// deepStrictEqual and fail, with node:assert's meaning.

export function conformanceRunner(api, assert) {
  const {
    openStore, defineTable, str, int, bool, num, json, vector,
    query, eq, ne, lt, lte, gt, gte, inArray, isNull, prefix, and, or, not, col,
    StoreError,
  } = api;

  const ctx = { actor: { kind: "service", id: "conformance" } };

  /** {"$bigint":"digits"} -> BigInt, everywhere in a vector value. */
  function fromVector(v) {
    if (Array.isArray(v)) return v.map(fromVector);
    if (v !== null && typeof v === "object") {
      const keys = Object.keys(v);
      if (keys.length === 1 && keys[0] === "$bigint" && typeof v.$bigint === "string") return BigInt(v.$bigint);
      return Object.fromEntries(keys.map((k) => [k, fromVector(v[k])]));
    }
    return v;
  }

  const builders = { str, int, bool, num, json };

  /** A vector cell as the vectors write it: the base64 of its little-endian float32. */
  function vectorText(f32) {
    const bytes = new Uint8Array(f32.buffer, f32.byteOffset, f32.byteLength);
    let s = "";
    for (let i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
    return btoa(s);
  }

  /**
   * A table definition from a vector's table record "<type>/<name>". With
   * `edges` ({ kinds }, from the file's "edges"), made by defineEdges from
   * the record's data columns, and checked to have the record's shape.
   */
  function tableFromRecord(record, edges) {
    const slash = record.table.indexOf("/");
    const type = record.table.slice(0, slash);
    const name = record.table.slice(slash + 1);
    const columns = {};
    for (const [c, spec] of Object.entries(record.columns)) {
      const s = typeof spec === "string" ? { type: spec } : spec;
      let b = s.type === "vector"
        ? vector(s.dims)
        : builders[s.type]("default" in s ? { default: fromVector(s.default) } : undefined);
      if (s.optional) b = b.optional();
      columns[c] = b;
    }
    if (edges !== undefined) {
      const { from: _f, to: _t, kind: _k, ...data } = columns;
      const def = api.defineEdges(name, { kinds: edges.kinds, data, version: record.version ?? 1 });
      assert.deepStrictEqual(Object.keys(def.columns), Object.keys(record.columns), `${record.table}: defineEdges's columns`);
      assert.deepStrictEqual([...def.key], record.key, `${record.table}: defineEdges's key`);
      assert.deepStrictEqual(JSON.parse(JSON.stringify(def.indexes)), record.indexes ?? {}, `${record.table}: defineEdges's indexes`);
      return { type, def, columnNames: Object.keys(record.columns), record };
    }
    const def = defineTable(name, { version: record.version ?? 1, columns, key: record.key, indexes: record.indexes ?? {} });
    return { type, def, columnNames: Object.keys(record.columns), record };
  }

  /**
   * The table record after a committed alter or index op (docs/formats.md,
   * "Schema changes"): drop, then rename, then add (added columns last);
   * an index over a dropped column goes with it.
   */
  function changedRecord(record, op) {
    const columns = { ...record.columns };
    let indexes = { ...(record.indexes ?? {}) };
    let key = [...record.key];
    if (op.op === "alter") {
      for (const c of op.drop ?? []) {
        delete columns[c];
        indexes = Object.fromEntries(Object.entries(indexes).filter(([, cols]) => !cols.includes(c)));
      }
      const renamed = {};
      for (const [c, spec] of Object.entries(columns)) renamed[op.rename?.[c] ?? c] = spec;
      const rename = (c) => op.rename?.[c] ?? c;
      key = key.map(rename);
      indexes = Object.fromEntries(Object.entries(indexes).map(([n, cols]) => [n, cols.map(rename)]));
      return { ...record, version: op.version, columns: { ...renamed, ...(op.add ?? {}) }, key, indexes };
    }
    for (const n of op.drop ?? []) delete indexes[n];
    return { ...record, version: op.version, indexes: { ...indexes, ...(op.create ?? {}) } };
  }

  const comparisons = { eq, ne, lt, lte, gt, gte };

  /** A wire where -> the same predicate built with the public builders. */
  function buildWhere(w) {
    const [op] = Object.keys(w);
    const a = w[op];
    if (op in comparisons) return comparisons[op](col(a[0]), fromVector(a[1]));
    switch (op) {
      case "inArray": return inArray(col(a[0]), fromVector(a[1]));
      case "isNull": return isNull(col(a));
      case "prefix": return prefix(col(a[0]), a[1]);
      case "and": return and(...a.map(buildWhere));
      case "or": return or(...a.map(buildWhere));
      case "not": return not(buildWhere(a));
      default: throw new Error(`the vector's where ${JSON.stringify(w)} has no public builder (mark the step wireOnly)`);
    }
  }

  /** A wire query {where, orderBy} -> query(def).where(...).orderBy(...). */
  function buildQuery(def, q = {}) {
    let out = query(def);
    if (q.where !== undefined && q.where !== null) out = out.where(buildWhere(q.where));
    for (const term of q.orderBy ?? []) {
      if (Array.isArray(term)) out = out.orderBy(col(term[0]), term[1] ?? "asc");
      else out = out.orderBy(col(term));
    }
    return out;
  }

  /** A base64 vector of the file as the Float32Array a caller would pass (its bits as they are). */
  function vectorOfText(text) {
    let bin;
    try { bin = atob(text); } catch { return text; }  // not base64: let the store refuse it
    if (bin.length % 4 !== 0) return text;
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return new Float32Array(bytes.buffer);
  }

  /** Runs `work` and returns [value, error]; a synchronous throw counts too. */
  async function attempt(work) {
    try {
      return [await work(), undefined];
    } catch (e) {
      return [undefined, e];
    }
  }

  function where(step, i) {
    return `step ${i}${step.note ? ` (${step.note})` : ""}`;
  }

  /** Checks an expected error, or that there was none. True: go on comparing. */
  function checkError(step, i, error) {
    if (step.error !== undefined) {
      assert.ok(error !== undefined, `${where(step, i)}: expected ${step.error}, but it succeeded`);
      assert.ok(error instanceof StoreError, `${where(step, i)}: expected a StoreError ${step.error}, got ${error?.stack ?? error}`);
      assert.equal(error.code, step.error, `${where(step, i)}: expected ${step.error}, got ${error.code}: ${error.message}`);
      return false;
    }
    if (error !== undefined) assert.fail(`${where(step, i)}: unexpected error ${error?.stack ?? error}`);
    return true;
  }

  class CaseRunner {
    constructor(doc, openOptions) {
      this.doc = doc;
      this.openOptions = openOptions;
      this.tables = new Map();  // full name -> { def, handle, columnNames }
      this.saved = new Map();
    }

    async run(steps) {
      this.store = await openStore(this.openOptions);
      try {
        for (const record of this.doc.tables ?? []) {
          const { type, def, columnNames } = tableFromRecord(record, this.doc.edges?.[record.table]);
          const handle = this.store.object({ host: "session", type }).table(def);
          assert.equal(handle.name, record.table);
          this.tables.set(record.table, { def, handle, columnNames, record });
        }
        for (const t of this.tables.values()) await t.handle.count();  // the declarations are committed
        for (const [i, step] of (this.doc.setup ?? []).entries()) await this.step(step, `setup ${i}`);
        for (const [i, step] of steps.entries()) await this.step(step, i);
        if (this.afterSteps) await this.afterSteps(this.store, this.tables);
      } finally {
        await this.store.close();
      }
    }

    rowArray(t, row) {
      return row === undefined || row === null ? null : t.columnNames.map((c) => (row[c] instanceof Float32Array ? vectorText(row[c]) : row[c]));
    }

    keyOf(t, row) {
      return t.def.key.map((c) => row[c]);
    }

    expectedKey(k) {
      return Array.isArray(k) ? fromVector(k) : [fromVector(k)];
    }

    async step(step, i) {
      if (step.wireOnly) return;
      if (step.commit !== undefined) return this.commit(step, i);
      if (step.doc !== undefined) return this.documents(step, i);
      if (step.tx !== undefined) return this.tx(step, i);
      if (step.neighbours !== undefined) return this.neighbours(step, i);
      const read = step.get ?? step.count ?? step.page ?? step.nearest;
      const t = this.tables.get(read?.table);
      if (step.jsSkip || t === undefined) {
        assert.ok(step.jsSkip, `${where(step, i)}: table ${read?.table} has no handle; mark the step jsSkip`);
        return;
      }
      if (step.get !== undefined) {
        const [row, error] = await attempt(() => t.handle.get(fromVector(step.get.key), ctx));
        if (!checkError(step, i, error)) return;
        assert.deepStrictEqual(this.rowArray(t, row), fromVector(step.row), `${where(step, i)}: get`);
        return;
      }
      if (step.count !== undefined) {
        const [n, error] = await attempt(() => t.handle.count(buildQuery(t.def, step.count.query), ctx));
        if (!checkError(step, i, error)) return;
        assert.equal(n, step.expect, `${where(step, i)}: count`);
        return;
      }
      if (step.page !== undefined) return this.page(step, i, t);
      if (step.nearest !== undefined) return this.nearest(step, i, t);
      assert.fail(`${where(step, i)}: unknown step ${JSON.stringify(step)}`);
    }

    // Writes through owner.tx (the owner of the first op's table): put,
    // delete and deleteEdges; with "ops", the commit's ops as its outbox
    // record holds them. A refused tx must leave the head where it was.
    async tx(step, i) {
      const first = this.tables.get(step.tx[0].table);
      assert.ok(first, `${where(step, i)}: tx on an unknown table ${step.tx[0].table}`);
      const head = this.store.head;
      const [, error] = await attempt(() => first.handle.owner.tx(async (tx) => {
        for (const op of step.tx) {
          const t = this.tables.get(op.table);
          if (op.put !== undefined) await tx.put(t.handle, fromVector(op.put));
          else if (op.delete !== undefined) await tx.delete(t.handle, fromVector(op.delete));
          else if (op.deleteEdges !== undefined) await tx.deleteEdges(t.handle, op.deleteEdges, op.options);
          else assert.fail(`${where(step, i)}: unknown tx op ${JSON.stringify(op)}`);
        }
      }, ctx));
      if (!checkError(step, i, error)) {
        assert.equal(this.store.head, head, `${where(step, i)}: a refused tx committed`);
        return;
      }
      if (step.ops === undefined) return;
      const batch = await this.store.outbox.read(this.store.head - 1, 1);
      assert.deepStrictEqual(batch.commits[0].ops, fromVector(step.ops), `${where(step, i)}: the commit's ops`);
    }

    // handle.neighbours(node, { kind, direction, limit, after }): one page
    // (rows or keys, "save" its next), or with "pages" every page to the end.
    async neighbours(step, i) {
      const { table, node, kind, direction, limit, after: saved, cursor } = step.neighbours;
      const t = this.tables.get(table);
      let after = cursor;
      if (saved !== undefined) {
        after = this.saved.get(saved);
        assert.ok(after !== undefined, `${where(step, i)}: no saved cursor ${saved}`);
      }
      const call = (a) => t.handle.neighbours(fromVector(node), { kind, direction, limit, ...(a === undefined ? {} : { after: a }) });
      const [first, error] = await attempt(() => call(after));
      if (!checkError(step, i, error)) return;
      if (step.pages !== undefined) {
        const got = [];
        let page = first;
        for (let guard = 0; ; guard++) {
          if (page.rows.length > 0) got.push(page.rows.map((r) => this.keyOf(t, r)));
          if (!page.next) break;
          assert.ok(page.rows.length > 0, `${where(step, i)}: an empty page carries a next cursor`);
          assert.ok(guard < 10000, `${where(step, i)}: the cursors do not end`);
          page = await call(page.next);
        }
        assert.deepStrictEqual(got, step.pages.map((pg) => pg.map((k) => this.expectedKey(k))), `${where(step, i)}: neighbours pages`);
        return;
      }
      if (step.save !== undefined) {
        assert.ok(first.next, `${where(step, i)}: expected a next cursor to save`);
        this.saved.set(step.save, first.next);
      }
      if (step.rows !== undefined) {
        assert.deepStrictEqual(first.rows.map((r) => this.rowArray(t, r)), fromVector(step.rows), `${where(step, i)}: neighbours rows`);
      } else if (step.keys !== undefined) {
        assert.deepStrictEqual(first.rows.map((r) => this.keyOf(t, r)), step.keys.map((k) => this.expectedKey(k)), `${where(step, i)}: neighbours keys`);
      }
      if (step.next !== undefined) assert.equal(first.next !== undefined, step.next, `${where(step, i)}: whether the page has a next`);
    }

    // A documents read through owner.documents: its answer (undefined is
    // null), or with "pages" the ids of each page of a list followed through
    // its cursors; versions without their times and actors.
    async documents(step, i) {
      const { call, owner, id, address, at, filter, limit } = step.doc;
      const docs = this.store.object({ host: "session", type: owner }).documents;
      const options = at === undefined ? undefined : { at };
      if (step.pages !== undefined) {
        const pages = [];
        let after;
        for (;;) {
          const [page, error] = await attempt(() => docs.list(filter, limit, { after }));
          if (!checkError(step, i, error)) return;
          const ids = page.rows.map((d) => Number(d.id));
          if (ids.length > 0 || pages.length === 0) pages.push(ids);
          if (page.next === undefined) break;
          after = page.next;
        }
        assert.deepStrictEqual(pages, step.pages, `${where(step, i)}: documents pages`);
        return;
      }
      const [got, error] = await attempt(() =>
        call === "find" ? docs.find(address, options)
          : call === "load" ? docs.load(id, options)
            : docs.versions(id));
      if (!checkError(step, i, error)) return;
      const answer = call === "versions" ? got.map(({ at: _at, actor: _actor, ...v }) => v) : got ?? null;
      assert.deepStrictEqual(answer, fromVector(step.expect), `${where(step, i)}: documents.${call}`);
    }

    async commit(step, i) {
      const ops = fromVector(step.commit);
      const [seq, error] = await attempt(() => this.store.commit(ops, () => {}, ctx));
      if (!checkError(step, i, error)) return;
      // An alter or index op: queries and row arrays follow the new columns.
      for (const op of step.commit) {
        const t = this.tables.get(op.table);
        if (t === undefined || (op.op !== "alter" && op.op !== "index")) continue;
        const next = tableFromRecord(changedRecord(t.record, op));
        Object.assign(t, { def: next.def, columnNames: next.columnNames, record: next.record });
      }
      if (step.counts === undefined) return;
      // JS sees the counts of bulk ops in the outbox record; key ops carry none.
      const batch = await this.store.outbox.read(seq - 1, 1);
      const record = batch.commits[0];
      assert.equal(Number(record.seq), seq);
      step.commit.forEach((op, k) => {
        if (op.where === undefined) return;
        assert.equal(Number(record.ops[k].count), step.counts[k], `${where(step, i)}: count of op ${k}`);
      });
    }

    // table.nearest: the keys and exact distances of its hits.
    async nearest(step, i, t) {
      const n = step.nearest;
      const options = {};
      if (n.metric !== undefined) options.metric = n.metric;
      if (n.where !== undefined) options.where = buildWhere(n.where);
      const vec = typeof n.vector === "string" ? vectorOfText(n.vector) : n.vector;
      const [hits, error] = await attempt(() => t.handle.nearest((e) => e[n.column], vec, n.k, options));
      if (!checkError(step, i, error)) return;
      assert.deepStrictEqual(hits.map((h) => [this.keyOf(t, h.row), h.distance]), step.hits.map(([k, d]) => [this.expectedKey(k), d]), `${where(step, i)}: nearest`);
    }

    async page(step, i, t) {
      const p = step.page;
      const limit = p.limit ?? 1000;
      let after;
      if (p.after !== undefined) {
        after = this.saved.get(p.after);
        assert.ok(after !== undefined, `${where(step, i)}: no saved cursor ${p.after}`);
      } else if (p.cursor !== undefined) {
        after = p.cursor;
      }
      const [first, error] = await attempt(() => t.handle.page(buildQuery(t.def, p.query), limit, ctx, after === undefined ? undefined : { after }));
      if (!checkError(step, i, error)) return;
      let total = 0;
      let toEnd;
      if (step.pages !== undefined) {
        const got = [];
        let page = first;
        for (let guard = 0; ; guard++) {
          total += page.rows.length;
          if (page.rows.length > 0) got.push(page.rows.map((r) => this.keyOf(t, r)));
          if (!page.next) break;
          assert.ok(page.rows.length > 0, `${where(step, i)}: an empty page carries a next cursor`);
          assert.ok(guard < 10000, `${where(step, i)}: the cursors do not end`);
          page = await t.handle.page(buildQuery(t.def, p.query), limit, ctx, { after: page.next });
        }
        const want = step.pages.map((pg) => pg.map((k) => this.expectedKey(k)));
        assert.deepStrictEqual(got, want, `${where(step, i)}: pages`);
        toEnd = true;
      } else {
        total = first.rows.length;
        toEnd = !first.next;
        if (step.save !== undefined) {
          assert.ok(first.next, `${where(step, i)}: expected a next cursor to save`);
          this.saved.set(step.save, first.next);
        }
        if (step.rows !== undefined) {
          assert.deepStrictEqual(first.rows.map((r) => this.rowArray(t, r)), fromVector(step.rows), `${where(step, i)}: rows`);
        } else if (step.keys !== undefined) {
          assert.deepStrictEqual(first.rows.map((r) => this.keyOf(t, r)), step.keys.map((k) => this.expectedKey(k)), `${where(step, i)}: keys`);
        }
      }
      if (after === undefined && toEnd) {
        const n = await t.handle.count(buildQuery(t.def, p.query), ctx);
        assert.equal(n, total, `${where(step, i)}: count of the same query`);
      }
    }
  }


  /**
   * Runs case `c` of `doc` on a store opened with `storeOptions`, then
   * replays the store's outbox into a replica opened with `replicaOptions`
   * (api.openReplica), three commits a batch, and checks that the replica
   * holds the same tables row by row, the same records and the same
   * fingerprint as the store. Resolves to that fingerprint.
   */
  async function replicateCase(doc, c, storeOptions, replicaOptions) {
    const runner = new CaseRunner(doc, storeOptions);
    let fingerprint;
    runner.afterSteps = async (store, tables) => {
      const replica = await api.openReplica(replicaOptions);
      try {
        for (let after = 0; after < store.head; after += 3) {
          await replica.applyBatch(await store.outbox.read(after, 3));
        }
        assert.equal(replica.head, store.head, "the replica's head");
        // Every table the store's log declared: the vector's tables and any
        // a step declared with a raw {"op":"table"} commit.
        const all = Math.max(1, store.head);
        const records = await store.outbox.read(0, all);
        const declared = new Set(tables.keys());
        for (const r of records.commits) for (const op of r.ops) if (op.op === "table") declared.add(op.table);
        assert.deepStrictEqual(replica.tables(), [...declared].sort(), "the replica's tables");
        for (const [name, t] of tables) {
          const want = [];
          for await (const row of t.handle.rows()) want.push(row);
          const got = [];
          for await (const row of replica.table(name).rows()) got.push(row);
          assert.deepStrictEqual(got, want, `the rows of ${name}`);
        }
        assert.deepStrictEqual(await replica.outbox.read(0, all), records, "the records");
        fingerprint = await store.fingerprint();
        assert.equal(await replica.fingerprint(), fingerprint, "the fingerprint");
      } finally {
        await replica.close();
      }
    };
    await runner.run(c.steps);
    return fingerprint;
  }

  return { CaseRunner, fromVector, replicateCase };
}

/** The CaseRunner class alone: createCaseRunner(api, assert) -> CaseRunner. */
export function createCaseRunner(api, assert) {
  return conformanceRunner(api, assert).CaseRunner;
}
