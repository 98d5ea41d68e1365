// The JS differential runner (issue 14, part 4): seeded random op sequences
// applied through the public package API to a store on any backend and to a
// plain JS model of the documented semantics, every read compared.
// Plain ES module, no Node imports: Node (tests/differential/*.test.js,
// tests/torture/differential.mjs), Chromium on opfs
// (tests/browser/pages/diff-worker.js) and workerd on durable
// (tests/edge/diff-worker.js) all run it.
//
//   const d = differential(api);
//   const ops = d.generate(seed, 40);
//   const got = await d.observe(openOptions, ops);   // one text per op
//   const want = d.model(ops);                        // the same, from the model
//   d.firstDifference(got, want)                      // -1 when they agree
//
// An op is plain JSON (ints beyond 2^53 as BigInts; `toText`/`fromText`
// carry them as {"$bigint":"digits"}):
//   {tx: [w, ...]}   one owner.tx; w is put, update, delete, updateWhere,
//                    deleteWhere, edge (a put), unedge (a delete),
//                    deleteEdges. Observed: "ok" and the counts of its bulk
//                    ops, or the error code (the model predicts overflow,
//                    null into a required column, an unknown edge kind).
//   {get: key} {count: where} {page: {where, order, limit}} (every page
//   through the cursors) {neighbours: {node, direction, kind?, limit}}
//   (every page) {cursor: ...} (a foreign or altered cursor: invalid/cursor)

export function differential(api) {
  const {
    openStore, defineTable, defineEdges, str, int, bool, num, query, col, value,
    eq, ne, lt, lte, gt, gte, inArray, isNull, prefix, and, or, not,
    add, sub, max, min, concat, replacePrefix, coalesce, when, compareText, StoreError,
  } = api;

  // ------------------------------------------------------------ schema

  const Items = defineTable("items", {
    columns: {
      id: str(), g: int(), n: int().optional(), m: int({ default: 0 }),
      s: str().optional(), f: bool().optional(), x: num().optional(),
    },
    key: ["id", "g"],
    indexes: { byN: ["n"], bySM: ["s", "m"] },
  });
  const KINDS = ["cites", "replies"];
  const Links = defineEdges("links", { kinds: KINDS, data: { w: int({ default: 0 }) } });
  const TYPES = { id: "str", g: "int", n: "int", m: "int", s: "str", f: "bool", x: "num" };
  const COLS = Object.keys(TYPES);
  const OPTIONAL = new Set(["n", "s", "f", "x"]);
  const KEY = ["id", "g"];
  const LINK_COLS = ["from", "to", "kind", "w"];

  // ------------------------------------------------------------ generator

  const PIECES = ["a", "b", "Z", "/", "é", "测", "试", "（", "～", "\ue000", "\ufffd", "😀", "😁", "a/", "测试", "😀a"];
  const IDS = ["a", "b", "c", "é", "测", "测试（一）", "测试😀", "～", "😀", "😀a", "Z", "a/b"];
  const NODES = ["a", "b", "～", "😀", "\ue000"];
  const MAX = 2n ** 63n - 1n;
  const MIN = -(2n ** 63n);
  const BIG = [MAX, MIN, MAX - 1n, MIN + 1n, 2n ** 53n + 1n, 2n ** 53n, -(2n ** 53n) - 1n];
  const NUMS = [0, 1, -1.5, 0.25, 2.5, 1e10, -3, 0.1, 1e300, -1e-300];

  // mulberry32: small, fast, the same in every runtime.
  function rng(seed) {
    let a = seed >>> 0;
    const next = () => {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const r = {
      below: (n) => Math.floor(next() * n),
      chance: (p) => next() * 100 < p,
      pick: (list) => list[Math.floor(next() * list.length)],
    };
    return r;
  }

  function gen(seed) {
    const r = rng(seed);
    const keys = [];
    const text = (k = 3) => {
      let s = "";
      for (let i = r.below(k + 1); i > 0; i--) s += r.pick(PIECES);
      return s;
    };
    const intv = () => {
      if (r.chance(85)) return r.below(11) - 3;
      const b = r.pick(BIG);
      return b >= -(2n ** 53n) + 1n && b <= 2n ** 53n - 1n ? Number(b) : b;
    };
    const id = () => (r.chance(75) ? r.pick(IDS) : text(2));
    const literal = (c) => {
      switch (TYPES[c]) {
        case "str": return c === "id" ? id() : text();
        case "int": return c === "g" ? r.below(3) : intv();
        case "bool": return r.chance(50);
        default: return r.pick(NUMS);
      }
    };
    const key = () => (keys.length > 0 && r.chance(75) ? r.pick(keys) : [id(), r.below(3)]);
    const row = () => {
      const out = { id: id(), g: r.below(3) };
      if (keys.length < 48) keys.push([out.id, out.g]);
      else keys[r.below(48)] = [out.id, out.g];
      for (const c of ["n", "m", "s", "f", "x"]) {
        if (c === "m" && r.chance(30)) continue;
        if (r.chance(20)) continue;
        out[c] = c !== "m" && r.chance(15) ? null : literal(c);
      }
      return out;
    };
    function where(depth = 0) {
      const c = r.pick(COLS);
      const t = TYPES[c];
      const pick = r.below(depth >= 2 ? 8 : 11);
      const cmp = ["eq", "ne", "lt", "lte", "gt", "gte"];
      switch (pick) {
        case 0: case 1: case 2: {
          const op = t === "bool" ? r.pick(["eq", "ne"]) : r.pick(cmp);
          return { [op]: [c, literal(c)] };
        }
        case 3: return { inArray: [c, Array.from({ length: r.below(4) }, () => literal(c))] };
        case 4: return { isNull: c };
        case 5: case 6: return { prefix: [r.pick(["id", "s"]), text(1)] };
        case 7: return { [r.pick(cmp)]: ["n", intv()] };
        case 8: return { and: Array.from({ length: 1 + r.below(3) }, () => where(depth + 1)) };
        case 9: return { or: Array.from({ length: 1 + r.below(3) }, () => where(depth + 1)) };
        default: return { not: where(depth + 1) };
      }
    }
    // An expression of the target column's type (c), over the row before.
    function expr(c, depth = 0) {
      const t = TYPES[c];
      const same = COLS.filter((k) => TYPES[k] === t && !KEY.includes(k));
      const leaf = () => (r.chance(50) ? { value: r.chance(10) && OPTIONAL.has(c) ? null : literal(c) } : { col: r.pick(same) });
      if (depth >= 2 || r.chance(35)) return leaf();
      const sub1 = () => expr(c, depth + 1);
      const choices = ["coalesce", "when"];
      if (t === "int") choices.push("add", "sub", "max", "min");
      if (t === "str") choices.push("concat", "max", "min", "replacePrefix");
      if (t === "num") choices.push("max", "min");
      const op = r.pick(choices);
      if (op === "replacePrefix") return { replacePrefix: [text(1), text(1)] };
      if (op === "when") return { when: [where(2), sub1(), sub1()] };
      return { [op]: [sub1(), sub1()] };
    }
    function set() {
      const out = {};
      for (const c of ["n", "m", "s", "f", "x"]) if (r.chance(35)) out[c] = expr(c);
      if (Object.keys(out).length === 0) out.m = expr("m");
      return out;
    }
    function write() {
      const k = r.below(100);
      if (k < 5) return { txGet: key() };
      if (k < 30) return { put: row() };
      if (k < 42) return { update: key(), set: set() };
      if (k < 50) return { delete: key() };
      if (k < 57) return { updateWhere: r.chance(10) ? null : where(), set: set() };
      if (k < 61) return { deleteWhere: r.chance(5) ? null : where() };
      if (k < 85) {
        return { edge: { from: r.pick(NODES), to: r.pick(NODES), kind: r.chance(3) ? "likes" : r.pick(KINDS), ...(r.chance(50) ? { w: intv() } : {}) } };
      }
      if (k < 93) return { unedge: [r.pick(NODES), r.pick(KINDS), r.pick(NODES)] };
      return { deleteEdges: r.pick(NODES), direction: r.pick(["out", "in", "both"]), ...(r.chance(40) ? { kind: r.pick(KINDS) } : {}) };
    }
    function order() {
      const out = [];
      const used = new Set();
      for (let i = r.below(3); i > 0; i--) {
        const c = r.pick(COLS);
        if (used.has(c)) continue;
        used.add(c);
        out.push([c, r.chance(50) ? "asc" : "desc"]);
      }
      return out;
    }
    function op() {
      const k = r.below(100);
      if (k < 45) return { tx: Array.from({ length: 1 + r.below(3) }, write) };
      if (k < 52) return { get: key() };
      if (k < 60) return { count: r.chance(10) ? null : where() };
      if (k < 78) return { page: { where: r.chance(15) ? null : where(), order: order(), limit: 1 + r.below(7) } };
      if (k < 96) {
        return { neighbours: { node: r.pick(NODES), direction: r.pick(["out", "in", "both"]), limit: 1 + r.below(4), ...(r.chance(30) ? { kind: r.pick(KINDS) } : {}) } };
      }
      return { cursor: { node: r.pick(NODES), other: r.pick(NODES), page: r.chance(50) } };
    }
    return { op };
  }

  /** The op sequence of `seed`: `length` ops. */
  function generate(seed, length) {
    const g = gen(seed);
    return Array.from({ length }, () => g.op());
  }

  // ------------------------------------------------------------ shared helpers

  function toText(v) {
    return JSON.stringify(v, (k, x) => (typeof x === "bigint" ? { $bigint: x.toString() } : x));
  }
  function fromText(text) {
    return JSON.parse(text, (k, x) => (x !== null && typeof x === "object" && !Array.isArray(x)
      && Object.keys(x).length === 1 && typeof x.$bigint === "string" ? BigInt(x.$bigint) : x));
  }
  // A cell as compared: ints as "i<digits>", the rest as JSON gives them.
  function cell(type, v) {
    if (v === null || v === undefined) return null;
    if (type === "int") return `i${BigInt(v)}`;
    return v;
  }
  function itemRow(row) {
    return row === undefined || row === null ? null : COLS.map((c) => cell(TYPES[c], row[c]));
  }
  function linkRow(row) {
    return LINK_COLS.map((c) => cell(c === "w" ? "int" : "str", row[c]));
  }

  // ------------------------------------------------------------ the store side

  const builders = { eq, ne, lt, lte, gt, gte };
  function predicate(w) {
    const [op] = Object.keys(w);
    const a = w[op];
    if (op in builders) return builders[op](col(a[0]), a[1]);
    switch (op) {
      case "inArray": return inArray(col(a[0]), a[1]);
      case "isNull": return isNull(col(a));
      case "prefix": return prefix(col(a[0]), a[1]);
      case "and": return and(...a.map(predicate));
      case "or": return or(...a.map(predicate));
      default: return not(predicate(a));
    }
  }
  function expression(e) {
    const [op] = Object.keys(e);
    const a = e[op];
    switch (op) {
      case "value": return value(a);
      case "col": return col(a);
      case "add": return add(expression(a[0]), expression(a[1]));
      case "sub": return sub(expression(a[0]), expression(a[1]));
      case "max": return max(...a.map(expression));
      case "min": return min(...a.map(expression));
      case "concat": return concat(...a.map(expression));
      case "coalesce": return coalesce(...a.map(expression));
      case "replacePrefix": return replacePrefix(a[0], a[1]);
      default: return when(predicate(a[0]), expression(a[1]), expression(a[2]));
    }
  }
  function setOf(s) {
    return Object.fromEntries(Object.entries(s).map(([c, e]) => [c, expression(e)]));
  }
  function codeOf(e) {
    if (e instanceof StoreError) return e.code;
    throw e;
  }

  /**
   * Applies `ops` to a store opened with `openOptions`, through the public
   * API. Resolves to one observation text per op.
   */
  async function observe(target, ops, type = "d") {
    const own = typeof target.object !== "function";
    const store = own ? await openStore(target) : target;
    const out = [];
    try {
      const owner = store.object({ type });
      const items = owner.table(Items);
      const links = owner.table(Links);
      for (const op of ops) out.push(toText(await observeOne(store, owner, items, links, op)));
    } finally {
      if (own) await store.close();
    }
    return out;
  }

  async function observeOne(store, owner, items, links, op) {
    if (op.tx !== undefined) {
      const head = store.head;
      const gets = [];
      try {
        await owner.tx(async (tx) => {
          for (const w of op.tx) {
            if (w.put !== undefined) await tx.put(items, w.put);
            else if (w.update !== undefined) await tx.update(items, w.update, setOf(w.set));
            else if (w.delete !== undefined) await tx.delete(items, w.delete);
            else if (w.updateWhere !== undefined) await tx.updateWhere(items, w.updateWhere === null ? undefined : predicate(w.updateWhere), setOf(w.set));
            else if (w.deleteWhere !== undefined) await tx.deleteWhere(items, w.deleteWhere === null ? undefined : predicate(w.deleteWhere));
            else if (w.edge !== undefined) await tx.put(links, w.edge);
            else if (w.unedge !== undefined) await tx.delete(links, w.unedge);
            else if (w.txGet !== undefined) gets.push(itemRow(await tx.get(items, w.txGet)));
            else await tx.deleteEdges(links, w.deleteEdges, { direction: w.direction, kind: w.kind });
          }
        });
      } catch (e) {
        if (store.head !== head) return { bug: "a refused tx moved the head" };
        return { error: codeOf(e) };
      }
      const record = store.head === head ? undefined : (await store.outbox.read(store.head - 1, 1)).commits[0];
      const counts = record === undefined ? [] : record.ops.filter((o) => o.where !== undefined).map((o) => Number(o.count));
      return gets.length > 0 ? { ok: counts, gets } : { ok: counts };
    }
    if (op.get !== undefined) return { row: itemRow(await items.get(op.get)) };
    if (op.count !== undefined) {
      return { n: await items.count(op.count === null ? undefined : query(Items).where(predicate(op.count))) };
    }
    if (op.page !== undefined) {
      let q = query(Items);
      if (op.page.where !== null) q = q.where(predicate(op.page.where));
      for (const [c, dir] of op.page.order) q = q.orderBy(col(c), dir);
      const pages = [];
      let after;
      for (let guard = 0; guard < 10000; guard++) {
        const page = await items.page(q, op.page.limit, undefined, after === undefined ? undefined : { after });
        pages.push(page.rows.map(itemRow));
        if (!page.next) break;
        after = page.next;
      }
      return { pages: pages.filter((p, i) => p.length > 0 || i === 0) };
    }
    if (op.neighbours !== undefined) {
      const { node, direction, kind, limit } = op.neighbours;
      const pages = [];
      let after;
      for (let guard = 0; guard < 10000; guard++) {
        const page = await links.neighbours(node, { direction, kind, limit, after });
        pages.push(page.rows.map(linkRow));
        if (!page.next) break;
        after = page.next;
      }
      return { pages };
    }
    // A cursor of another call (a page's, or another node's) is refused.
    const { node, other, page } = op.cursor;
    const first = page
      ? await items.page(query(Items), 1)
      : await links.neighbours(node, { direction: "both", limit: 1 });
    if (!first.next) return { cursor: "none" };
    try {
      await links.neighbours(page || other !== node ? other : `${other}x`, { direction: "both", limit: 1, after: first.next });
      return { cursor: "accepted" };
    } catch (e) {
      return { cursor: codeOf(e) };
    }
  }

  // ------------------------------------------------------------ the model

  class Refused extends Error {
    constructor(code) {
      super(code);
      this.code = code;
    }
  }

  const big = (v) => (v === null || v === undefined ? null : BigInt(v));

  function compareCells(type, a, b) {
    if (a === null && b === null) return 0;
    if (a === null) return -1;
    if (b === null) return 1;
    if (type === "str") return compareText(a, b);
    if (type === "int") return a < b ? -1 : a > b ? 1 : 0;
    if (type === "bool") return a === b ? 0 : a ? 1 : -1;
    return a < b ? -1 : a > b ? 1 : 0;
  }

  // The model's row: ints as BigInt, everything else as written.
  function modelRow(w) {
    const row = {};
    for (const c of COLS) {
      const v = w[c] === undefined ? (c === "m" ? 0 : null) : w[c];
      row[c] = TYPES[c] === "int" ? big(v) : v;
    }
    return row;
  }
  const keyText = (id, g) => JSON.stringify([id, String(BigInt(g))]);

  // Three-valued: true, false or null (unknown).
  function test(w, row) {
    const [op] = Object.keys(w);
    const a = w[op];
    const typed = (c, v) => (TYPES[c] === "int" ? BigInt(v) : v);
    switch (op) {
      case "eq": case "ne": case "lt": case "lte": case "gt": case "gte": {
        const v = row[a[0]];
        if (v === null) return null;
        const c = compareCells(TYPES[a[0]], v, typed(a[0], a[1]));
        return { eq: c === 0, ne: c !== 0, lt: c < 0, lte: c <= 0, gt: c > 0, gte: c >= 0 }[op];
      }
      case "inArray": {
        if (a[1].length === 0) return false;
        const v = row[a[0]];
        if (v === null) return null;
        return a[1].some((x) => compareCells(TYPES[a[0]], v, typed(a[0], x)) === 0);
      }
      case "isNull": return row[a] === null;
      case "prefix": {
        const v = row[a[0]];
        return v === null ? null : v.startsWith(a[1]);
      }
      case "and": {
        let out = true;
        for (const p of a) {
          const t = test(p, row);
          if (t === false) return false;
          if (t === null) out = null;
        }
        return out;
      }
      case "or": {
        let out = false;
        for (const p of a) {
          const t = test(p, row);
          if (t === true) return true;
          if (t === null) out = null;
        }
        return out;
      }
      default: {
        const t = test(a, row);
        return t === null ? null : !t;
      }
    }
  }

  function evaluate(e, target, row) {
    const [op] = Object.keys(e);
    const a = e[op];
    const type = TYPES[target];
    switch (op) {
      case "value": return type === "int" ? big(a) : a;
      case "col": return row[a];
      case "add": case "sub": {
        const x = evaluate(a[0], target, row);
        const y = evaluate(a[1], target, row);
        if (x === null || y === null) return null;
        const z = op === "add" ? x + y : x - y;
        if (z > MAX || z < MIN) throw new Refused("invalid/args");
        return z;
      }
      case "max": case "min": {
        const xs = a.map((p) => evaluate(p, target, row));
        if (xs.some((x) => x === null)) return null;
        return xs.reduce((p, q) => (compareCells(type, q, p) * (op === "max" ? 1 : -1) > 0 ? q : p));
      }
      case "concat": {
        const xs = a.map((p) => evaluate(p, target, row));
        return xs.some((x) => x === null) ? null : xs.join("");
      }
      case "coalesce": {
        for (const p of a) {
          const x = evaluate(p, target, row);
          if (x !== null) return x;
        }
        return null;
      }
      case "replacePrefix": {
        const v = row[target];
        return v !== null && v.startsWith(a[0]) ? a[1] + v.slice(a[0].length) : v;
      }
      default: return test(a[0], row) === true ? evaluate(a[1], target, row) : evaluate(a[2], target, row);
    }
  }

  function applySet(set, row) {
    const next = { ...row };
    for (const [c, e] of Object.entries(set)) {
      const v = evaluate(e, c, row);
      if (v === null && !OPTIONAL.has(c)) throw new Refused("invalid/args");
      next[c] = v;
    }
    return next;
  }

  function orderOf(order) {
    const terms = order.map(([c, d]) => [c, d === "desc" ? -1 : 1]);
    const last = terms.length > 0 ? terms[terms.length - 1][1] : 1;
    for (const k of KEY) if (!order.some(([c]) => c === k)) terms.push([k, last]);
    return (x, y) => {
      for (const [c, d] of terms) {
        const v = compareCells(TYPES[c], x[c], y[c]);
        if (v !== 0) return v * d;
      }
      return 0;
    };
  }

  const edgeKey = (e) => JSON.stringify([e.from, e.kind, e.to]);

  function modelNeighbours(links, { node, direction, kind }) {
    const list = [];
    for (const e of links.values()) {
      if (kind !== undefined && e.kind !== kind) continue;
      if (direction !== "in" && e.from === node) list.push({ e, other: e.to, d: 0 });
      else if (direction !== "out" && e.to === node) list.push({ e, other: e.from, d: 1 });
    }
    list.sort((x, y) => compareText(x.e.kind, y.e.kind) || compareText(x.other, y.other) || x.d - y.d);
    return list.map((x) => x.e);
  }

  function matchesEdges(e, w) {
    if (w.kind !== undefined && e.kind !== w.kind) return false;
    return (w.direction !== "in" && e.from === w.deleteEdges) || (w.direction !== "out" && e.to === w.deleteEdges);
  }

  // The writes of a tx in the callback's order, up to its end: an unknown
  // kind throws where it stands; each tx.get first stages the items writes
  // before it: puts and deletes, key updates of a row there is (a missing
  // one is left to the commit, which refuses it), nothing after a bulk op
  // (and the get is then read_after_bulk). Pushes each get's row.
  function stageGets(writes, committed, gets) {
    const overlay = new Map();
    let bulk = false;
    let staged = 0;
    const rowAt = (k) => (overlay.has(k) ? overlay.get(k) : committed.get(k));
    writes.forEach((w, i) => {
      if (w.edge !== undefined && !KINDS.includes(w.edge.kind)) throw new Refused("invalid/args");
      if (w.txGet === undefined) return;
      for (; staged < i; staged++) {
        const x = writes[staged];
        if (bulk) continue;
        if (x.put !== undefined) {
          const row = modelRow(x.put);
          overlay.set(keyText(row.id, row.g), row);
        } else if (x.delete !== undefined) {
          overlay.set(keyText(x.delete[0], x.delete[1]), undefined);
        } else if (x.update !== undefined) {
          const k = keyText(x.update[0], x.update[1]);
          const row = rowAt(k);
          if (row !== undefined) overlay.set(k, applySet(x.set, row));
        } else if (x.updateWhere !== undefined || x.deleteWhere !== undefined) {
          bulk = true;
        }
      }
      if (bulk) throw new Refused("read_after_bulk");
      gets.push(itemRow(rowAt(keyText(w.txGet[0], w.txGet[1]))));
    });
  }

  /** The observations the documented semantics give for `ops`. */
  function model(ops) {
    let items = new Map();
    let links = new Map();
    const out = [];
    const sorted = (where, order) => [...items.values()].filter((r) => where === null || test(where, r) === true).sort(orderOf(order));
    for (const op of ops) {
      if (op.tx !== undefined) {
        const nextItems = new Map(items);
        const nextLinks = new Map(links);
        const counts = [];
        const gets = [];
        try {
          // The callback's own order: an unknown kind is refused by tx.put
          // where it stands; a tx.get stages the writes before it (js/tx.js,
          // Store::TxGet) and answers from them.
          stageGets(op.tx, items, gets);
          for (const w of op.tx) {
            if (w.txGet !== undefined) continue;
            if (w.put !== undefined) {
              const row = modelRow(w.put);
              nextItems.set(keyText(row.id, row.g), row);
            } else if (w.update !== undefined) {
              const k = keyText(w.update[0], w.update[1]);
              const row = nextItems.get(k);
              if (row === undefined) throw new Refused("not_found");
              nextItems.set(k, applySet(w.set, row));
            } else if (w.delete !== undefined) {
              nextItems.delete(keyText(w.delete[0], w.delete[1]));
            } else if (w.updateWhere !== undefined) {
              let n = 0;
              for (const [k, row] of nextItems) {
                if (w.updateWhere === null || test(w.updateWhere, row) === true) {
                  nextItems.set(k, applySet(w.set, row));
                  n++;
                }
              }
              counts.push(n);
            } else if (w.deleteWhere !== undefined) {
              let n = 0;
              for (const [k, row] of [...nextItems]) {
                if (w.deleteWhere === null || test(w.deleteWhere, row) === true) {
                  nextItems.delete(k);
                  n++;
                }
              }
              counts.push(n);
            } else if (w.edge !== undefined) {
              if (!KINDS.includes(w.edge.kind)) throw new Refused("invalid/args");
              const e = { from: w.edge.from, to: w.edge.to, kind: w.edge.kind, w: big(w.edge.w ?? 0) };
              nextLinks.set(edgeKey(e), e);
            } else if (w.unedge !== undefined) {
              nextLinks.delete(JSON.stringify(w.unedge));
            } else {
              let n = 0;
              for (const [k, e] of [...nextLinks]) {
                if (matchesEdges(e, w)) {
                  nextLinks.delete(k);
                  n++;
                }
              }
              counts.push(n);
            }
          }
        } catch (e) {
          if (!(e instanceof Refused)) throw e;
          out.push(toText({ error: e.code }));
          continue;
        }
        items = nextItems;
        links = nextLinks;
        out.push(toText(gets.length > 0 ? { ok: counts, gets } : { ok: counts }));
      } else if (op.get !== undefined) {
        const row = items.get(keyText(op.get[0], op.get[1]));
        out.push(toText({ row: itemRow(row) }));
      } else if (op.count !== undefined) {
        out.push(toText({ n: sorted(op.count, []).length }));
      } else if (op.page !== undefined) {
        const rows = sorted(op.page.where, op.page.order).map(itemRow);
        const pages = [];
        for (let i = 0; i < rows.length; i += op.page.limit) pages.push(rows.slice(i, i + op.page.limit));
        out.push(toText({ pages: pages.length === 0 ? [[]] : pages }));
      } else if (op.neighbours !== undefined) {
        const rows = modelNeighbours(links, op.neighbours).map(linkRow);
        const pages = [];
        for (let i = 0; i < rows.length; i += op.neighbours.limit) pages.push(rows.slice(i, i + op.neighbours.limit));
        out.push(toText({ pages: pages.length === 0 ? [[]] : pages }));
      } else {
        const { node, page } = op.cursor;
        const more = page ? items.size > 1 : modelNeighbours(links, { node, direction: "both" }).length > 1;
        out.push(toText({ cursor: more ? "invalid/cursor" : "none" }));
      }
    }
    return out;
  }

  /** The index of the first observation that differs, or -1. */
  function firstDifference(got, want) {
    const n = Math.max(got.length, want.length);
    for (let i = 0; i < n; i++) if (got[i] !== want[i]) return i;
    return -1;
  }

  /**
   * Shrinks a failing sequence: drops ops (halves, then single ones) while
   * `fails(ops)` still resolves true. Resolves to the shortest found.
   */
  async function shrink(ops, fails) {
    let cur = ops;
    for (let chunk = Math.max(1, Math.floor(cur.length / 2)); chunk >= 1; chunk = Math.floor(chunk / 2)) {
      for (let i = 0; i < cur.length;) {
        const tryOps = [...cur.slice(0, i), ...cur.slice(i + chunk)];
        if (tryOps.length > 0 && await fails(tryOps)) cur = tryOps;
        else i += chunk;
      }
      if (chunk === 1) break;
    }
    // Fewer writes inside each tx, too.
    for (let i = 0; i < cur.length; i++) {
      if (cur[i].tx === undefined) continue;
      for (let j = 0; j < cur[i].tx.length && cur[i].tx.length > 1;) {
        const op = { tx: [...cur[i].tx.slice(0, j), ...cur[i].tx.slice(j + 1)] };
        const tryOps = [...cur.slice(0, i), op, ...cur.slice(i + 1)];
        if (await fails(tryOps)) cur = tryOps;
        else j++;
      }
    }
    return cur;
  }

  /**
   * Runs the sequences of `seeds` (numbers), `length` ops each, on a store
   * opened with `options()`, each sequence under its own owner ("d<seed>")
   * and a fresh store every `perStore` sequences, against the model.
   * Resolves to { sequences, observations, failures: [{ seed, index, got,
   * want, op }] } (a failure's ops are generate(seed, length)).
   */
  async function runSeeds(seeds, length, options, perStore = 25) {
    const failures = [];
    let observations = 0;
    let store;
    try {
      for (const [i, seed] of seeds.entries()) {
        if (i % perStore === 0) {
          if (store) await store.close();
          store = await openStore(options());
        }
        const ops = generate(seed, length);
        const want = model(ops);
        const got = await observe(store, ops, `d${seed}`);
        observations += got.length;
        const index = firstDifference(got, want);
        if (index >= 0) failures.push({ seed, index, got: got[index], want: want[index], op: toText(ops[index]) });
      }
    } finally {
      if (store) await store.close();
    }
    return { sequences: seeds.length, observations, failures };
  }

  // A model cell back to a vector value: "i<digits>" as an int ({"$bigint"}
  // beyond 2^53).
  function vectorCell(v) {
    if (typeof v !== "string" || !/^i-?[0-9]+$/.test(v)) return v;
    const b = BigInt(v.slice(1));
    return b >= -(2n ** 53n) + 1n && b <= 2n ** 53n - 1n ? Number(b) : { $bigint: b.toString() };
  }
  const vectorValue = (v) => JSON.parse(toText(v));
  const keyOfCells = (cells, cols, key) => key.map((k) => vectorCell(cells[cols.indexOf(k)]));

  /**
   * A (shrunk) sequence as a conformance vector file
   * (tests/conformance/README.md): the two tables as wire records, each
   * write tx as a commit of wire ops (a tx the JS API refuses before the
   * core, such as an unknown kind, as a jsOnly tx step), each read as a
   * step with the model's answer. Cursor checks and the rows of tx.get are
   * left out (a tx refused because of a tx.get is left out whole).
   */
  function toVector(name, about, ops) {
    const want = model(ops).map(fromText);
    const T = "d/items";
    const L = "d/links";
    const record = (def, table) => {
      const columns = {};
      for (const [c, b] of Object.entries(def.columns)) {
        columns[c] = { type: b.type, ...(b.isOptional ? { optional: true } : {}), ...(b.hasDefault ? { default: b.default } : {}) };
      }
      return { op: "table", table, version: 1, columns, key: [...def.key], indexes: JSON.parse(JSON.stringify(def.indexes)) };
    };
    const steps = [];
    ops.forEach((op, i) => {
      const w = want[i];
      if (op.tx !== undefined && op.tx.some((x) => x.txGet !== undefined) && w.error !== undefined) {
        return;  // refused, committing nothing; its cause (a tx.get) has no wire form
      }
      if (op.tx !== undefined) {
        const wire = op.tx.filter((x) => x.txGet === undefined).map((x) => {
          if (x.put !== undefined) return { op: "put", table: T, row: x.put };
          if (x.update !== undefined) return { op: "update", table: T, key: x.update, set: x.set };
          if (x.delete !== undefined) return { op: "delete", table: T, key: x.delete };
          if (x.updateWhere !== undefined) return { op: "update", table: T, where: x.updateWhere, set: x.set };
          if (x.deleteWhere !== undefined) return { op: "delete", table: T, where: x.deleteWhere };
          if (x.edge !== undefined) return { op: "put", table: L, row: x.edge };
          if (x.unedge !== undefined) return { op: "delete", table: L, key: x.unedge };
          const of = (c) => (x.kind === undefined ? { eq: [c, x.deleteEdges] } : { and: [{ eq: [c, x.deleteEdges] }, { eq: ["kind", x.kind] }] });
          return { op: "delete", table: L, where: x.direction === "out" ? of("from") : x.direction === "in" ? of("to") : { or: [of("from"), of("to")] } };
        });
        const badKind = op.tx.some((x) => x.edge !== undefined && !KINDS.includes(x.edge.kind));
        if (badKind) {
          steps.push({ jsOnly: true, note: `op ${i}: a tx with an unknown kind`, tx: [{ table: L, put: vectorValue(op.tx.find((x) => x.edge !== undefined && !KINDS.includes(x.edge.kind)).edge) }], error: "invalid/args" });
        } else {
          if (wire.length > 0) steps.push({ note: `op ${i}`, commit: vectorValue(wire), ...(w.error !== undefined ? { error: w.error } : {}) });
        }
      } else if (op.get !== undefined) {
        steps.push({ note: `op ${i}`, get: { table: T, key: vectorValue(op.get) }, row: w.row === null ? null : w.row.map(vectorCell) });
      } else if (op.count !== undefined) {
        steps.push({ note: `op ${i}`, count: { table: T, query: { where: vectorValue(op.count) } }, expect: w.n });
      } else if (op.page !== undefined) {
        steps.push({
          note: `op ${i}`,
          page: { table: T, query: { where: vectorValue(op.page.where), orderBy: op.page.order }, limit: op.page.limit },
          pages: w.pages.filter((p) => p.length > 0).map((p) => p.map((r) => keyOfCells(r, COLS, KEY))),
        });
      } else if (op.neighbours !== undefined) {
        const { node, direction, kind, limit } = op.neighbours;
        steps.push({
          note: `op ${i}`, jsOnly: true,
          neighbours: { table: L, node, direction, limit, ...(kind === undefined ? {} : { kind }) },
          pages: w.pages.filter((p) => p.length > 0).map((p) => p.map((r) => keyOfCells(r, LINK_COLS, ["from", "kind", "to"]))),
        });
      }
    });
    return {
      name,
      about,
      tables: [record(Items, T), record(Links, L)],
      edges: { [L]: { kinds: KINDS } },
      cases: [{ name: about, steps }],
    };
  }

  return { generate, observe, model, firstDifference, shrink, runSeeds, toText, fromText, toVector, Items, Links };
}

