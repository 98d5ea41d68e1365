// The Worker of tests/edge/durable-batch.test.js: each Durable Object (class
// TestSession, SQLite storage) opens a durable store over its storage with
// every ctx.storage.sql.exec counted, and runs one op. POST /<object>/<op>
// with a JSON body; answers { ok, result } or { ok: false, code, message }.

import * as api from "../../js/workerd.js";
import { openCore } from "../../js/open.js";
import { workerdRuntime } from "../../js/loader-workerd.js";

const { openStore, defineTable, bool, int, json, num, str, vector, query } = api;

const Notes = defineTable("notes", {
  columns: { id: int(), title: str(), body: str().optional(), n: int({ default: 0 }), score: num().optional() },
  key: ["id"],
  indexes: { byTitle: ["title"] },
});

const Flags = defineTable("flags", {
  columns: { id: int(), big: int(), on: bool() },
  key: ["id"],
});

// Every kind of value a held page gives back as the host's own (str, int on
// both sides of 2^53, num, json), and nulls.
const Kinds = defineTable("kinds", {
  columns: { id: str(), n: int().optional(), x: num().optional(), j: json().optional(), s: str().optional() },
  key: ["id"],
  indexes: { byN: ["n"] },
});

// Every kind of param the durable batch carries (wasm/ABI.md, "The durable
// batch"): texts, ints on both sides of 2^53, nums, bools, json, a vector
// column's bytes (a BLOB), and nulls.
const Params = defineTable("params", {
  columns: {
    id: int(), t: str().optional(), u: str().optional(), n: int().optional(), x: num().optional(),
    b: bool().optional(), j: json().optional(), v: vector(3).optional(),
  },
  key: ["id"],
});
// A str key: a get's only text param is the first of its batch's texts.
const Keyed = defineTable("keyed", { columns: { k: str(), n: int() }, key: ["k"] });

// A value as JSON text that keeps what JSON would lose: BigInts ("<n>n")
// and -0 ("-0").
const wire = (v) => JSON.stringify(v, (k, x) => (typeof x === "bigint" ? `${x}n` : Object.is(x, -0) ? "-0" : x));

// The storage with each sql.exec's text recorded (and, given `types`, the
// typeof of each of its parameters; given `reads`, the number of calls made
// on each exec's cursor: next, raw, toArray, ...); the calls go to the real
// storage.
function counted(storage, texts, types, reads) {
  const sql = new Proxy(storage.sql, {
    get(target, prop) {
      if (prop === "exec") {
        return (text, ...params) => {
          texts.push(text);
          types?.push(params.map((p) => typeof p));
          const cursor = target.exec(text, ...params);
          if (!reads) return cursor;
          const i = reads.push(0) - 1;
          return new Proxy(cursor, {
            get(c, key) {
              const v = c[key];
              if (typeof v !== "function") return v;
              return (...args) => { reads[i]++; return v.apply(c, args); };
            },
          });
        };
      }
      const v = target[prop];
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return new Proxy(storage, {
    get(target, prop) {
      if (prop === "sql") return sql;
      const v = target[prop];
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

export class TestSession {
  constructor(ctx) {
    this.ctx = ctx;
    this.texts = [];
    this.types = [];
    this.reads = [];
  }

  async open() {
    if (!this.store) {
      this.store = await openStore({ backend: "durable", storage: counted(this.ctx.storage, this.texts, this.types, this.reads) });
      this.owner = this.store.object({ host: "session", type: "notes" });
      this.notes = this.owner.table(Notes);
      await this.notes.count();
    }
  }

  async rows() {
    const out = [];
    for await (const r of this.notes.rows(query(Notes).orderBy((n) => n.id))) out.push(r);
    return out;
  }

  // Puts `n` rows (ids from 1) in one transaction: the sql.exec texts that
  // commit sent, and what reads back.
  async op_puts({ n }) {
    await this.open();
    const from = this.texts.length;
    await this.owner.tx(async (tx) => {
      for (let id = 1; id <= n; id++) await tx.put(this.notes, { id, title: `t${id}`, score: id / 2 });
    });
    const texts = this.texts.slice(from);
    const rows = await this.rows();
    return { texts, count: rows.length, ok: rows.every((r, i) => r.id === i + 1 && r.title === `t${i + 1}` && r.score === (i + 1) / 2) };
  }

  // Puts `n` rows with titles of `size` characters in one transaction: the
  // sql.exec texts and the titles' lengths read back.
  async op_bigRows({ n, size }) {
    await this.open();
    const from = this.texts.length;
    await this.owner.tx(async (tx) => {
      for (let id = 1; id <= n; id++) await tx.put(this.notes, { id, title: String(id % 10).repeat(size) });
    });
    return { texts: this.texts.slice(from), lengths: (await this.rows()).map((r) => r.title.length) };
  }

  // One transaction that writes the same keys several times, with an update
  // and a delete (which answer: the puts before them must have run) between
  // puts: the rows, the outbox record and the sql.exec texts.
  async op_mixed() {
    await this.open();
    const from = this.texts.length;
    await this.owner.tx(async (tx) => {
      for (let id = 1; id <= 30; id++) await tx.put(this.notes, { id, title: `first${id}` });
      await tx.put(this.notes, { id: 1, title: "second1" });
      await tx.update(this.notes, [2], { title: "updated2" });
      await tx.delete(this.notes, [3]);
      for (let id = 25; id <= 60; id++) await tx.put(this.notes, { id, title: `second${id}` });
      await tx.put(this.notes, { id: 3, title: "again3" });
      await tx.delete(this.notes, [60]);
    });
    const texts = this.texts.slice(from);
    const { commits } = await this.store.outbox.read(this.store.head - 1, 1);
    return { rows: (await this.rows()).map((r) => [r.id, r.title]), ops: commits[0].ops.map((o) => [o.op, o.row?.id ?? o.key?.[0], o.row?.title ?? o.set?.title ?? null]), texts };
  }

  // Puts `before` small rows, then one row too big for the platform, in one
  // transaction: what it throws, and what is left.
  async op_failing({ before }) {
    await this.open();
    await this.owner.tx(async (tx) => { await tx.put(this.notes, { id: 1000, title: "kept" }); });
    const head = this.store.head;
    const outboxBefore = (await this.store.outbox.read(0, 100)).commits.map((c) => c.seq);
    let error;
    try {
      await this.owner.tx(async (tx) => {
        for (let id = 1; id <= before; id++) await tx.put(this.notes, { id, title: `t${id}` });
        await tx.put(this.notes, { id: before + 1, title: "y".repeat(1_200_000), body: "z".repeat(1_200_000) });
      });
    } catch (e) {
      error = { code: e.code, message: String(e.message).slice(0, 300) };
    }
    const afterHead = this.store.head;
    const rows = (await this.rows()).map((r) => r.id);
    const outbox = (await this.store.outbox.read(0, 100)).commits.map((c) => c.seq);
    await this.owner.tx(async (tx) => { await tx.put(this.notes, { id: 1001, title: "after" }); });
    return { error, head, afterHead, rows, outbox, outboxBefore, headAtEnd: this.store.head };
  }

  // The numeric commit (wasm/ABI.md) on a core of this object's storage,
  // called as the package calls it (the runtime's wrapper runs commitAs and
  // txCommitAs inside transactionSync): each answer, lastError after each 0,
  // and what the SQLite holds after.
  async op_numericCore() {
    const storage = counted(this.ctx.storage, this.texts);
    const { core } = await openCore(workerdRuntime, { backend: "durable", storage }, "test");
    const sql = this.ctx.storage.sql;
    const rows = () => sql.exec('SELECT count(*) AS n FROM "t/t"').one().n;
    const out = {};
    try {
      const a = core.ownerId("a");
      const b = core.ownerId("b");
      out.ids = [a, b, core.ownerId("a")];
      const table = '[{"op":"table","table":"t/t","version":1,"columns":{"id":{"type":"str"},"n":{"type":"int"}},"key":["id"]}]';
      const answer = (seq) => ({ seq, error: seq === 0 ? core.lastError() : null });
      out.table = answer(core.commitAs(table, a, 1000));
      out.putA = answer(core.commitAs('[{"op":"put","table":"t/t","row":{"id":"x","n":1}}]', a, 1001));
      const tx = core.txOpen();
      core.txStage(tx, '[{"op":"put","table":"t/t","row":{"id":"y","n":2}}]');
      out.txB = answer(core.txCommitAs(tx, '[{"op":"put","table":"t/t","row":{"id":"z","n":3}}]', b, 1002));
      // Refused inside the transaction (the core rolled back: the put before it is gone too).
      out.inside = answer(core.commitAs('[{"op":"put","table":"t/t","row":{"id":"w","n":4}},{"op":"update","table":"t/t","key":["missing"],"set":{"n":{"value":5}}}]', a, 1003));
      // Refused before it: a value, an owner number, a time.
      out.value = answer(core.commitAs('[{"op":"put","table":"t/t","row":{"id":"w","n":"no"}}]', a, 1004));
      out.owner = answer(core.commitAs('[{"op":"put","table":"t/t","row":{"id":"w","n":4}}]', 9, 1005));
      out.at = answer(core.commitAs('[{"op":"put","table":"t/t","row":{"id":"w","n":4}}]', a, 0.5));
      out.rows = rows();
      out.after = answer(core.commitAs('[{"op":"put","table":"t/t","row":{"id":"v","n":6}}]', b, 1006));
      out.records = JSON.parse(core.outboxRead(0, 10)).commits.map((c) => [c.seq, c.owner, c.at, c.ops.length]);
      out.head = core.head();
      out.metaHead = this.metaHead();
    } finally {
      core.close();
    }
    return out;
  }

  // A host transaction that fails after the core's commit (its callback ran,
  // then transactionSync throws and the host rolls back): a numeric commit
  // that answered a seq is storage_failed (the outcome is unknown to the
  // core); one that answered 0 (refused before writing) gives the host's
  // error as it is.
  async op_numericHostFailure() {
    let failing = false;
    const storage = new Proxy(this.ctx.storage, {
      get(target, prop) {
        if (prop === "transactionSync") {
          return (fn) => target.transactionSync(() => {
            const answer = fn();
            if (failing) throw new Error("the host's COMMIT failed");
            return answer;
          });
        }
        const v = target[prop];
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const { core } = await openCore(workerdRuntime, { backend: "durable", storage }, "test");
    const outcome = (f) => {
      try { return { answer: f() }; } catch (e) { return { code: e.code ?? null, message: String(e.message) }; }
    };
    try {
      const a = core.ownerId("a");
      const table = '[{"op":"table","table":"t/t","version":1,"columns":{"id":{"type":"str"}},"key":["id"]}]';
      const declared = core.commitAs(table, a, 1);
      failing = true;
      const refused = outcome(() => core.commitAs('[{"op":"put","table":"t/t","row":{"id":5}}]', a, 2));
      const committed = outcome(() => core.commitAs('[{"op":"put","table":"t/t","row":{"id":"x"}}]', a, 3));
      failing = false;
      const rows = this.ctx.storage.sql.exec('SELECT count(*) AS n FROM "t/t"').one().n;
      return { declared, refused, committed, rows };
    } finally {
      core.close();
    }
  }

  // Two owners of one store commit in turn through the public API, without
  // an actor (the numeric commit), a failing transaction among them: the
  // owner of every outbox record, and the failures' codes.
  async op_twoOwners({ rounds }) {
    const store = await openStore({ backend: "durable", storage: this.ctx.storage });
    try {
      const a = store.object({ type: "a" });
      const b = store.object({ type: "b" });
      const ta = a.table(Notes);
      const tb = b.table(Notes);
      await ta.count();
      await tb.count();
      for (let i = 1; i <= rounds; i++) {
        await a.tx(async (tx) => { await tx.put(ta, { id: i, title: `a${i}` }); });
        await b.tx(async (tx) => { await tx.get(tb, [0]); await tx.put(tb, { id: i, title: `b${i}` }); });
      }
      const codes = [];
      const head = store.head;
      for (const fail of [
        () => a.tx(async (tx) => { await tx.put(ta, { id: 99, title: "lost" }); await tx.update(ta, [12345], { title: "x" }); }),
        () => b.tx(async (tx) => { await tx.get(tb, [1]); await tx.put(tb, { id: 99, title: 5 }); }),
        () => store.commit([{ op: "put", table: ta.name, row: { id: 98, title: "t", n: 0.5 } }]),
      ]) {
        try { await fail(); codes.push(null); } catch (e) { codes.push(e.code); }
      }
      const headAfterFailures = store.head;
      await store.commit([{ op: "put", table: ta.name, row: { id: 97, title: "raw" } }]);
      const { commits } = await store.outbox.read(0, 1000);
      return {
        head, headAfterFailures, codes, owners: commits.map((c) => c.owner),
        lost: [await ta.get([99]), await tb.get([99]), await ta.get([98])],
        counts: [await ta.count(), await tb.count()],
      };
    } finally {
      await store.close();
    }
  }

  // _meta.head as the Durable Object's SQLite holds it (read past the
  // counted wrapper), as an older version of the package would read it.
  metaHead() {
    return Number(this.ctx.storage.sql.exec("SELECT value FROM _meta WHERE key = 'head'").raw().next().value[0]);
  }

  // Three one-put commits: the sql.exec texts of each, with the store's head
  // and _meta.head after it.
  async op_commits() {
    await this.open();
    const out = [];
    for (let id = 1; id <= 3; id++) {
      const from = this.texts.length;
      await this.owner.tx(async (tx) => { await tx.put(this.notes, { id, title: `c${id}` }); });
      out.push({ texts: this.texts.slice(from), reads: this.reads.slice(from), head: this.store.head, metaHead: this.metaHead() });
    }
    const from = this.texts.length;
    const rows = (await this.rows()).map((r) => [r.id, r.title]);
    const { commits } = await this.store.outbox.read(this.store.head - 3, 3);
    return {
      commits: out, rows, outbox: commits.map((c) => [c.seq, c.ops[0].row.title]),
      readTexts: this.texts.slice(from), readReads: this.reads.slice(from),
    };
  }

  // Two commits, the store exported, closed and imported over the same
  // Durable Object (the switch drops every table of the old store), and two
  // more commits: the store's head and _meta.head after each.
  async op_importedCommits() {
    await this.open();
    const heads = [];
    const commit = async (id) => {
      await this.owner.tx(async (tx) => { await tx.put(this.notes, { id, title: `i${id}` }); });
      heads.push({ head: this.store.head, metaHead: this.metaHead() });
    };
    await commit(1);
    await commit(2);
    const chunks = [];
    for await (const chunk of this.store.export()) chunks.push(chunk);
    await this.store.close();
    this.store = await api.importStore(new Blob(chunks).stream(), { backend: "durable", storage: counted(this.ctx.storage, this.texts) });
    this.owner = this.store.object({ host: "session", type: "notes" });
    this.notes = this.owner.table(Notes);
    heads.push({ head: this.store.head, metaHead: this.metaHead() });
    await commit(3);
    await commit(4);
    return { heads, rows: (await this.rows()).map((r) => r.title) };
  }

  // A store that has committed, then a second store opened on the same
  // Durable Object through another object (ctx.storage itself, not the
  // counted wrapper) that commits: what the first store's next commits
  // throw and send, and the rows at the end.
  // Rounds of commits on one store, each unlike the one before (issue 13,
  // Durable Objects, step eight: the connection keeps its statements' room
  // from one batch to the next, and a batch over 64 KiB gives it back):
  // one-put commits of 10 B to 70 KB; a transaction whose tx.get sends its
  // first writes mid-way, then 50 more puts; a commit refused at its second
  // put (a row too big for the platform), then a one-put commit. Returns
  // what each refusal said and how the rows and the outbox read back.
  async op_keptRoom({ rounds }) {
    await this.open();
    const expected = new Map();
    const put = (tx, row) => { expected.set(row.id, row.title); return tx.put(this.notes, row); };
    const refusals = [];
    const gets = [];
    let id = 5000;
    for (let round = 0; round < rounds; round++) {
      for (const size of [10, 1000, 70_000, 10]) {
        await this.owner.tx(async (tx) => { await put(tx, { id: id++, title: `${round}:${"a".repeat(size)}` }); });
      }
      await this.owner.tx(async (tx) => {
        await put(tx, { id: id++, title: `before the get ${round}` });
        gets.push((await tx.get(this.notes, id - 1))?.title);
        for (let k = 0; k < 50; k++) await put(tx, { id: id++, title: `after the get ${round}.${k}` });
      });
      const head = this.store.head;
      try {
        await this.owner.tx(async (tx) => {
          await tx.put(this.notes, { id: 900_000 + round, title: "never" });
          await tx.put(this.notes, { id: 900_100 + round, title: "y".repeat(1_200_000), body: "z".repeat(1_200_000) });
        });
        refusals.push(null);
      } catch (e) {
        refusals.push({ code: e.code, message: String(e.message).slice(0, 200), headKept: this.store.head === head });
      }
      await this.owner.tx(async (tx) => { await put(tx, { id: id++, title: `after the refusal ${round}` }); });
    }
    const rows = await this.rows();
    const mine = rows.filter((r) => r.id >= 5000);
    const wrong = mine.filter((r) => expected.get(r.id) !== r.title).map((r) => r.id);
    const missing = [...expected.keys()].filter((k) => !mine.some((r) => r.id === k));
    const outbox = (await this.store.outbox.read(0, 10_000)).commits;
    const recorded = new Map();
    for (const c of outbox) for (const op of c.ops) if (op.op === "put" && op.row.id >= 5000) recorded.set(op.row.id, op.row.title);
    const unrecorded = [...expected].filter(([k, t]) => recorded.get(k) !== t).map(([k]) => k);
    return { refusals, gets, rows: mine.length, expected: expected.size, wrong, missing, unrecorded, head: this.store.head, lastSeq: outbox.at(-1)?.seq };
  }

  async op_fenceAfterCommits() {
    await this.open();
    for (let id = 1; id <= 2; id++) await this.owner.tx(async (tx) => { await tx.put(this.notes, { id, title: `first${id}` }); });
    const second = await openStore({ backend: "durable", storage: this.ctx.storage });
    const notes2 = second.object({ host: "session", type: "notes" }).table(Notes);
    await second.object({ host: "session", type: "notes" }).tx(async (tx) => { await tx.put(notes2, { id: 3, title: "second" }); });
    const attempts = [];
    for (let id = 4; id <= 5; id++) {
      const from = this.texts.length;
      try {
        await this.owner.tx(async (tx) => { await tx.put(this.notes, { id, title: `fenced${id}` }); });
        attempts.push({ ok: true });
      } catch (e) {
        attempts.push({ code: e.code, message: e.message, texts: this.texts.slice(from) });
      }
    }
    const rows = [];
    for await (const r of notes2.rows(query(Notes).orderBy((n) => n.id))) rows.push(r.title);
    await second.close();
    return { attempts, rows };
  }

  // Puts, then updates, rows whose texts are long (from 1,023 to 70,000
  // UTF-8 bytes) and hold what JSON escapes (a control character too), non-ASCII and astral
  // characters: the texts as they read back, and as the outbox recorded them.
  async op_longTexts() {
    await this.open();
    const piece = 'a"b\\c\u0001d\ne\u00e9\u4e2d\ud83d\ude00/\u2028';
    const texts = [1023, 1024, 1025, 4000, 70000].map((n, i) => {
      let t = `${i}:`;
      while (new TextEncoder().encode(t).length < n) t += piece;
      return t;
    });
    await this.owner.tx(async (tx) => {
      for (let i = 0; i < texts.length; i++) await tx.put(this.notes, { id: i + 1, title: texts[i], body: texts[texts.length - 1 - i] });
    });
    const put = (await this.rows()).map((r) => [r.title === texts[r.id - 1], r.body === texts[texts.length - r.id]]);
    await this.owner.tx(async (tx) => {
      for (let i = 0; i < texts.length; i++) await tx.update(this.notes, [i + 1], { title: texts[texts.length - 1 - i] });
    });
    const updated = (await this.rows()).map((r) => r.title === texts[texts.length - r.id]);
    const { commits } = await this.store.outbox.read(this.store.head - 2, 2);
    const recorded = commits[0].ops.map((o) => o.row.title === texts[o.row.id - 1]);
    return { put, updated, recorded };
  }

  // Two rows put in one transaction into a table of an int key, an int
  // beyond 2^53 and a bool: the typeof of each parameter of their INSERT,
  // and the rows as they read back (wire).
  async op_intParams() {
    await this.open();
    const flags = this.owner.table(Flags);
    const from = this.texts.length;
    await this.owner.tx(async (tx) => {
      await tx.put(flags, { id: 7, big: 2n ** 60n + 1n, on: true });
      await tx.put(flags, { id: -9007199254740991, big: -(2n ** 53n) - 1n, on: false });
    });
    // The params' types of the puts' INSERTs, in order (none: the texts sent).
    const puts = this.texts.map((t, i) => i).filter((i) => i >= from && this.texts[i].startsWith('INSERT OR REPLACE INTO "notes/flags"'));
    return { types: puts.length ? puts.flatMap((i) => this.types[i]) : this.texts.slice(from), rows: wire([await flags.get(7), await flags.get(-9007199254740991)]) };
  }

  // Rows of Params (given as wire text: "<n>n" a BigInt, a vector as an
  // array), put in one transaction of several puts when `tx`, else one
  // commit each: each column as SQLite holds it,
  // read with raw SQL past the store: its typeof(), and hex() of a text or a
  // BLOB, the decimal text of an int, a real as a number.
  async op_paramKinds({ rows, tx }) {
    await this.open();
    const table = this.owner.table(Params);
    const parsed = rows.map((text) => {
      const r = JSON.parse(text, (k, x) => (typeof x === "string" && /^-?\d+n$/.test(x) ? BigInt(x.slice(0, -1)) : x));
      if (r.v) r.v = new Float32Array(r.v);
      return r;
    });
    if (tx) {
      await this.owner.tx(async (t) => { for (const r of parsed) await t.put(table, r); });
    } else {
      for (const r of parsed) await this.owner.tx(async (t) => { await t.put(table, r); });
    }
    const name = this.ctx.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '%params'").raw().next().value[0];
    const cols = ["t", "u", "n", "x", "b", "j", "v"];
    const select = cols.map((c) => `typeof("${c}"), CASE typeof("${c}") WHEN 'text' THEN hex("${c}") WHEN 'blob' THEN hex("${c}") WHEN 'integer' THEN CAST("${c}" AS TEXT) ELSE "${c}" END`).join(", ");
    const out = {};
    for (const row of this.ctx.storage.sql.exec(`SELECT CAST("id" AS TEXT), ${select} FROM "${name}" ORDER BY "id"`).raw()) {
      const [id, ...cells] = row;
      out[id] = Object.fromEntries(cols.map((c, i) => [c, [cells[2 * i], cells[2 * i + 1]]]));
    }
    // A get by a key that starts with U+FEFF (alone in its batch's texts).
    const keyed = this.owner.table(Keyed);
    await this.owner.tx(async (t) => { await t.put(keyed, { k: "\ufeffkey", n: 7 }); });
    out.get = [(await keyed.get(["\ufeffkey"]))?.n ?? null, (await keyed.get(["key"]))?.n ?? null];
    return wire(out);
  }

  // The same rows of Kinds in this durable store and in a memory store:
  // each store's pages of 3, in key order and in the order of n, as wire
  // text (rows and whether a next cursor came), and the sql.exec texts the
  // durable pages sent.
  async op_pageKinds() {
    await this.open();
    const memory = await openStore({ backend: "memory" });
    const rows = [
      { id: "a", n: 1, x: 0.5, j: { deep: [1, "two", null, { t: true }] }, s: "plain" },
      { id: "b", n: 9007199254740991, x: -1e300, j: "a json string", s: "\u00e9 \u00fcn\u00ef \ud83d\ude00 \u4e2d" },
      { id: "c", n: 2n ** 60n, x: 3, j: { big: 2n ** 60n }, s: 'quote " and \\ backslash\n' },
      { id: "d", n: -(2n ** 53n) - 1n, x: -2.5, j: [1, 2.5, -3], s: "" },
      { id: "e" },
      { id: "f", n: 0, x: 1e-7, j: 12, s: "x".repeat(2000) },
      { id: "g", n: -9007199254740991, s: "null" },
    ];
    const pages = async (store) => {
      const owner = store.object({ host: "session", type: "notes" });
      const kinds = owner.table(Kinds);
      await owner.tx(async (tx) => { for (const r of rows) await tx.put(kinds, r); });
      const out = [];
      for (const q of [query(Kinds), query(Kinds).orderBy((k) => k.n)]) {
        let after;
        do {
          const page = await kinds.page(q, 3, undefined, after ? { after } : undefined);
          out.push(wire({ rows: page.rows, next: page.next !== undefined }));
          after = page.next;
        } while (after);
      }
      return out;
    };
    const durable = await pages(this.store);
    const inMemory = await pages(memory);
    await memory.close();
    return { durable, memory: inMemory };
  }

  async fetch(request) {
    const op = new URL(request.url).pathname.split("/")[2];
    const args = JSON.parse(await request.text());
    try {
      if (typeof this[`op_${op}`] !== "function") throw new Error(`no op ${op}`);
      return Response.json({ ok: true, result: await this[`op_${op}`](args) });
    } catch (e) {
      return Response.json({ ok: false, code: e?.code, message: String(e?.message ?? e), stack: e?.stack });
    }
  }
}

export default {
  async fetch(request, env) {
    const name = decodeURIComponent(new URL(request.url).pathname.split("/")[1]);
    return env.SESSION.get(env.SESSION.idFromName(name)).fetch(request);
  },
};
