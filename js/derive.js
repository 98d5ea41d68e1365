// Derives: `store.derive(name, (read) => value)`, a value computed
// synchronously from committed tables.
//
// `read` is a small synchronous reader over committed state (the core's reads
// are synchronous wasm calls). It records what a derive read: of each table,
// every row, or only the rows of some keys (see `rangeOf`). The flush after
// each commit step marks dirty the derives whose reads a commit's ops may
// have changed, and recomputes, right there, the dirty ones that someone
// holds (an in-process hold or a link). A derive that throws fails only
// itself: its holders get { error } and the commit and every other derive go
// on.

import { ErrorCodes, invalidArgs, StoreError } from "./errors.js";
import { describe } from "./schema.js";
import { isQuery } from "./query.js";
import { makeLine } from "./watch.js";

const PAGE_SIZE = 100;

// ---- what a read depends on ----
//
// A read of a table depends on every row of it (null), or only on the rows
// whose first key column, a str, equals one of `eqs` or starts with one of
// `prefixes`: a `get` by key, or a query whose where pins that column
// (eq, prefix or inArray, alone, in an `and`, or every branch of an `or`). A
// row outside the range is outside the read's answer before and after any
// write to it (key columns cannot be set, so a row never moves between
// keys), so a commit whose ops on the table all name keys outside every
// range its derive read cannot change the derive's value. Anything else (a
// bulk op, a schema op, a key that is not a well-formed str) touches every
// range. str order and prefix are by code point in the core; for
// well-formed strings that is JS's `===` and `startsWith`.

const wellFormed = (v) => typeof v === "string" && typeof v.isWellFormed === "function" && v.isWellFormed();

// { eqs, prefixes } of a where (its wire form) on column `col`, or null
// (every row).
function whereRange(col, w) {
  if (w === null || typeof w !== "object" || Array.isArray(w)) return null;
  const names = Object.keys(w);
  if (names.length !== 1) return null;
  const a = w[names[0]];
  switch (names[0]) {
    case "eq":
      return Array.isArray(a) && a[0] === col && wellFormed(a[1]) ? { eqs: [a[1]], prefixes: [] } : null;
    case "prefix":
      return Array.isArray(a) && a[0] === col && wellFormed(a[1]) ? { eqs: [], prefixes: [a[1]] } : null;
    case "inArray":
      return Array.isArray(a) && a[0] === col && Array.isArray(a[1]) && a[1].every(wellFormed) ? { eqs: [...a[1]], prefixes: [] } : null;
    case "and":
      // Every row of the conjunction is in the range of any of its parts.
      if (!Array.isArray(a)) return null;
      for (const p of a) {
        const r = whereRange(col, p);
        if (r) return r;
      }
      return null;
    case "or": {
      if (!Array.isArray(a) || a.length === 0) return null;
      const out = { eqs: [], prefixes: [] };
      for (const p of a) {
        const r = whereRange(col, p);
        if (!r) return null;
        out.eqs.push(...r.eqs);
        out.prefixes.push(...r.prefixes);
      }
      return out;
    }
    default:
      return null;
  }
}

// The first key column of handle `h` when it is a str (else no range).
function rangeColumn(h) {
  const col = h.def?.key?.[0];
  return col !== undefined && h.def.columns?.[col]?.type === "str" ? col : undefined;
}

// query -> { eqs, prefixes } | null. A query is over one table (a read
// refuses it on another), so its key column is always the same.
const queryRanges = new WeakMap();

// The range of a query's read on key column `col`, or null.
function queryRange(col, q) {
  if (!isQuery(q)) return null;
  if (!queryRanges.has(q)) queryRanges.set(q, whereRange(col, q.toJSON().where));
  return queryRanges.get(q);
}

// The range of a get of `key` on key column `col`, or null.
function keyRange(col, key) {
  const first = Array.isArray(key) ? key[0] : key;
  return wellFormed(first) ? { eqs: [first], prefixes: [] } : null;
}

// Adds a read of table `name` with range `r` (null: every row) to deps.
function depend(deps, name, col, r) {
  const had = deps.get(name);
  if (had === null) return;
  if (r === null) {
    deps.set(name, null);
    return;
  }
  const into = had ?? { col, eqs: new Set(), prefixes: [] };
  for (const k of r.eqs) into.eqs.add(k);
  into.prefixes.push(...r.prefixes);
  if (!had) deps.set(name, into);
}

// Whether `ops` (one table's, from a commit) may change a read of range `r`.
function touches(r, ops) {
  if (r === null) return true;
  for (const op of ops) {
    let k;
    if (op.op === "put") k = op.row?.[r.col];
    else if ((op.op === "delete" || op.op === "update") && op.where === undefined && Array.isArray(op.key)) k = op.key[0];
    else return true;
    if (!wellFormed(k) || r.eqs.has(k)) return true;
    for (const p of r.prefixes) if (k.startsWith(p)) return true;
  }
  return false;
}

/**
 * The derives of one store. `io` holds the store's synchronous reads:
 * handleOf(tableOrName, what), getNow, pageNow, countNow, head(),
 * outboxRead(after, limit).
 *
 * @example
 * const derives = makeDerives(io);
 * const count = derives.define("count", (read) => read.count("notes/items"));
 */
export function makeDerives(io) {
  const byName = new Map();

  function settled(t, what) {
    const h = io.handleOf(t, what);
    if (h.failed) throw h.failed;
    if (!h.settled) {
      throw new StoreError(ErrorCodes.NotFound, `${what}: table ${h.name} is still being declared; the derive is computed again once its declaration commits`);
    }
    return h;
  }

  // The reader of `d`, made once and reused by each computation: it records
  // what `d` read and refuses use between computations (after the derive
  // returned, it would read state of a later commit). `start()` opens it for
  // one computation, `end()` closes it.
  function readerFor(d) {
    let open = false;
    const use = (what) => {
      if (!open) throw invalidArgs(`derive(${d.name}): ${what} was called after the derive returned; read only inside it, synchronously`);
    };
    // The table's handle, its read added to what `d` depends on: the range
    // `range(col)` gives for a str key column `col`, else every row.
    const table = (t, what, range) => {
      use(what);
      const h = settled(t, `derive(${d.name}): ${what}`);
      const col = rangeColumn(h);
      depend(d.deps, h.name, col, col !== undefined && range ? range(col) : null);
      return h;
    };
    const reader = Object.freeze({
      /**
       * The row with this key, or undefined.
       * @example read.get(notes, ["n1"])
       */
      get: (t, key) => io.getNow(table(t, "read.get", (col) => keyRange(col, key)), key),
      /**
       * One page of a query: { rows, next? }.
       * @example read.page(notes, query(Notes), 20, { after })
       */
      page: (t, q, limit, options) => io.pageNow(table(t, "read.page", (col) => queryRange(col, q)), q, limit, options),
      /**
       * The number of rows of a query (every row without one).
       * @example read.count(notes)
       */
      count: (t, q) => io.countNow(table(t, "read.count", (col) => queryRange(col, q)), q),
      /**
       * Every row of a query, as an array (read page by page).
       * @example read.all(notes, query(Notes).where((n) => eq(n.done, false)))
       */
      all: (t, q) => {
        const h = table(t, "read.all", (col) => queryRange(col, q));
        const rows = [];
        let after;
        for (;;) {
          const page = io.pageNow(h, q, PAGE_SIZE, after === undefined ? undefined : { after });
          rows.push(...page.rows);
          if (!page.next) return rows;
          after = page.next;
        }
      },
      /**
       * The store's head seq. A derive that reads it is recomputed after
       * every commit.
       * @example read.head
       */
      get head() {
        use("read.head");
        d.every = true;
        return io.head();
      },
      /**
       * The outbox records after `after` ({ from, to, commits }), as
       * store.outbox.read. Recomputed after every commit.
       * @example read.outbox(read.head - 5, 5)
       */
      outbox: (after = 0, limit = 100) => {
        use("read.outbox");
        d.every = true;
        return io.outboxRead(after, limit);
      },
    });
    return { reader, start: () => { open = true; }, end: () => { open = false; } };
  }

  function compute(d) {
    const seq = io.head();
    d.deps.clear();
    d.every = false;
    const { reader, start, end } = (d.reader ??= readerFor(d));
    start();
    let result;
    try {
      const value = d.fn(reader);
      if (value !== null && typeof value === "object" && typeof value.then === "function") {
        value.then(undefined, () => undefined);  // never an unhandled rejection
        throw invalidArgs(`derive(${d.name}): the function returned a promise; a derive is synchronous (read is synchronous)`);
      }
      result = { seq, value };
    } catch (error) {
      result = { seq, error };
    } finally {
      end();
    }
    d.result = result;
    d.dirty = false;
    return result;
  }

  function notify(d) {
    const r = d.result;
    for (const l of d.listeners) l.line.push(() => (l.live ? l.listener(r) : undefined));
  }

  function define(name, fn) {
    if (typeof name !== "string" || name === "" || name.includes("/")) {
      throw invalidArgs(`store.derive: the name must be a non-empty string without "/" (names with "/" are tables), got ${describe(name)}`);
    }
    if (typeof fn !== "function") throw invalidArgs(`store.derive(${name}): expected a function (read) => value, got ${describe(fn)}`);
    if (byName.has(name)) throw invalidArgs(`store.derive: a derive named ${JSON.stringify(name)} already exists; close it first or pick another name`);
    const d = { name, fn, deps: new Map(), every: false, dirty: true, result: null, holds: 0, listeners: new Set(), closed: false, reader: null };
    byName.set(name, d);
    const member = Object.freeze({
      /** The derive's name (links hold it by this name). */
      name,
      /**
       * The current value, computed now if it is dirty; throws what the
       * derive threw.
       * @example console.log(count.value);
       */
      get value() {
        if (d.closed) throw new StoreError(ErrorCodes.Closed, `derive(${name}) is closed`);
        const r = d.dirty || !d.result ? compute(d) : d.result;
        if ("error" in r) throw r.error;
        return r.value;
      },
      /**
       * Holds the derive: the listener gets { seq, value } (or { seq, error })
       * now, then after every commit that changed what it read. Returns the
       * unsubscribe function.
       * @example const off = count.hold(({ value }) => render(value));
       */
      hold(listener) {
        if (d.closed) throw new StoreError(ErrorCodes.Closed, `derive(${name}) is closed`);
        if (typeof listener !== "function") throw invalidArgs(`derive(${name}).hold: the listener must be a function ({ seq, value, error }) => ..., got ${describe(listener)}`);
        const l = { listener, live: true, line: makeLine(`derive(${name})`) };
        d.listeners.add(l);
        acquire(d);
        const r = d.result;
        l.line.push(() => (l.live ? listener(r) : undefined));
        return function unsubscribe() {
          if (!l.live) return;
          l.live = false;
          d.listeners.delete(l);
          release(d);
        };
      },
      /**
       * Removes the derive: its holders get nothing more and the name is free.
       * @example count.close();
       */
      close() {
        d.closed = true;
        for (const l of d.listeners) l.live = false;
        d.listeners.clear();
        if (byName.get(name) === d) byName.delete(name);
      },
    });
    return member;
  }

  // A holder (an in-process hold or a link's) starts: compute if needed.
  function acquire(d) {
    d.holds++;
    if (d.dirty || !d.result) compute(d);
    return d.result;
  }

  function release(d) {
    d.holds = Math.max(0, d.holds - 1);
  }

  return {
    get size() {
      return byName.size;
    },
    define,
    get: (name) => byName.get(name),
    acquire,
    release,
    /**
     * Marks dirty the derives whose reads the commit's ops may have changed
     * (js/derive.js, "what a read depends on") and recomputes the held ones.
     * Returns the set of derives recomputed for this commit.
     */
    flush(opsByTable) {
      const recomputed = new Set();
      for (const d of byName.values()) {
        if (!d.dirty) {
          if (d.every) d.dirty = true;
          else {
            for (const [t, r] of d.deps) {
              const ops = opsByTable.get(t);
              if (ops !== undefined && touches(r, ops)) { d.dirty = true; break; }
            }
          }
        }
        if (d.dirty && d.holds > 0) {
          compute(d);
          recomputed.add(d);
          notify(d);
        }
      }
      return recomputed;
    },
    clear() {
      for (const d of byName.values()) {
        d.closed = true;
        for (const l of d.listeners) l.live = false;
      }
      byName.clear();
    },
  };
}
