// Derives: `store.derive(name, (read) => value)`, a value computed
// synchronously from committed tables.
//
// `read` is a small synchronous reader over committed state (the core's reads
// are synchronous wasm calls). It records which tables a derive read; the
// flush after each commit step marks the derives over a touched table dirty
// and recomputes, right there, the dirty ones that someone holds (an
// in-process hold or a link). A derive that throws fails only itself: its
// holders get { error } and the commit and every other derive go on.

import { ErrorCodes, invalidArgs, StoreError } from "./errors.js";
import { describe } from "./schema.js";
import { makeLine } from "./watch.js";

const PAGE_SIZE = 100;

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
    const table = (t, what) => {
      use(what);
      const h = settled(t, `derive(${d.name}): ${what}`);
      d.deps.add(h.name);
      return h;
    };
    const reader = Object.freeze({
      /**
       * The row with this key, or undefined.
       * @example read.get(notes, ["n1"])
       */
      get: (t, key) => io.getNow(table(t, "read.get"), key),
      /**
       * One page of a query: { rows, next? }.
       * @example read.page(notes, query(Notes), 20, { after })
       */
      page: (t, q, limit, options) => io.pageNow(table(t, "read.page"), q, limit, options),
      /**
       * The number of rows of a query (every row without one).
       * @example read.count(notes)
       */
      count: (t, q) => io.countNow(table(t, "read.count"), q),
      /**
       * Every row of a query, as an array (read page by page).
       * @example read.all(notes, query(Notes).where((n) => eq(n.done, false)))
       */
      all: (t, q) => {
        const h = table(t, "read.all");
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
    const d = { name, fn, deps: new Set(), every: false, dirty: true, result: null, holds: 0, listeners: new Set(), closed: false, reader: null };
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
     * Marks the derives over touched tables dirty and recomputes the held
     * ones. Returns the set of derives recomputed for this commit.
     */
    flush(opsByTable) {
      const recomputed = new Set();
      for (const d of byName.values()) {
        if (!d.dirty) {
          if (d.every) d.dirty = true;
          else for (const t of d.deps) if (opsByTable.has(t)) { d.dirty = true; break; }
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
