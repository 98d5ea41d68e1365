// Reads of committed state: get, page, count and the rows iterator, over a
// table handle's state (js/owner.js). Each is one synchronous crossing into
// the core (a page of rows per crossing); the async forms wait for the
// handle's declaration to commit first.

import { ErrorCodes, invalidArgs, refuseUnknownOptions, StoreError, userThrew } from "./errors.js";
import { encodeJson, rowDecoder } from "./encode.js";
import { columnRefs, isQuery, whereOf } from "./query.js";
import { col, isCol } from "./expr.js";
import { vectorWire } from "./vectors.js";
import { describe, readJson } from "./schema.js";
import { closedError } from "./core-calls.js";

const PAGE_SIZE = 100;
const hasWellFormed = typeof String.prototype.isWellFormed === "function";
// The wire text of a query with no where and no order (`query(T)`).
const EVERY_ROW = '{"where":null,"orderBy":[]}';
// A query's wire text, by query. Queries are frozen, so the text of one is
// encoded once: a derive or a link that reads the same query after every
// commit pays no encoding. Only queries whose literals are all primitives
// are kept (a Date or an object with toJSON could change under the query).
const queryTexts = new WeakMap();

// Whether every leaf of a where is a primitive (its wire text cannot change).
function fixedLiterals(v) {
  if (v === null || typeof v !== "object") return typeof v !== "function" && typeof v !== "symbol";
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!fixedLiterals(v[i])) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const k of Object.keys(v)) if (!fixedLiterals(v[k])) return false;
  return true;
}

/**
 * The reads of one store through its gate (js/core-calls.js). A handle state
 * `h` is { name, def, settled, pending, failed, decode }.
 *
 * @example
 * const reads = makeReads(gate);
 * const row = reads.getNow(h, ["e1"]);
 * const { rows, next } = await reads.page(h, query(Edits), 20);
 */
export function makeReads(gate) {
  const { core } = gate;

  // An owner's handle reads its json columns through their versions
  // (js/schema.js, readJson): a value out of its envelope, migrated, or
  // refused when newer; so does a view's handle through the code's json
  // columns that the table's record at its seq reaches (h.versions, by
  // the stored names then: js/history.js). A replica's handle gives the
  // values as stored.
  function withJsonVersions(h, decode) {
    const def = h.versions ?? (h.owner ? h.def : null);
    if (!def) return decode;
    const cols = Object.entries(def.columns).filter(([, c]) => c.type === "json");
    if (cols.length === 0) return decode;
    return (raw) => {
      const row = decode(raw);
      for (const [name, c] of cols) {
        if (name in row) row[name] = readJson(c, h.name, name, row[name]);
      }
      return row;
    };
  }

  // The row decoder of a table, from the stored record (or the definition:
  // for a table not committed yet, and for one whose declare found it
  // stored in the definition's shape, while no schema changed since).
  function columnsOf(h) {
    if (!h.decode || h.schema !== gate.schema) {
      const record = h.sameAt === gate.schema ? null : JSON.parse(gate.call("tables", () => core.tables())).find((t) => t.table === h.name);
      const cols = record
        ? Object.entries(record.columns).map(([name, c]) => ({ name, type: c.type }))
        : Object.entries(h.def.columns).map(([name, c]) => ({ name, type: c.type }));
      h.decode = withJsonVersions(h, rowDecoder(cols));
      h.schema = gate.schema;
    }
    return h.decode;
  }

  function keyText(h, key) {
    // A bare well-formed string is the common key: JSON.stringify writes it
    // exactly as encodeJson would.
    if (typeof key === "string" && (hasWellFormed ? key.isWellFormed() : false)) return JSON.stringify([key]);
    if (key === undefined) throw invalidArgs(`${h.name}: a key is needed, such as ["e1"] or "e1", got undefined`);
    const parts = Array.isArray(key) ? key : [key];
    // A key holds strs and ints: an instance of a class there without a
    // toJSON (a Map) would go as its JSON ("{}") and be refused as that,
    // not named. (A Date goes as its JSON, the ISO string, as documented;
    // a plain object or array goes to the core, which words it.)
    for (let i = 0; i < parts.length; i++) {
      const v = parts[i];
      if (v !== null && typeof v === "object" && !Array.isArray(v) && typeof v.toJSON !== "function" && Object.getPrototypeOf(v) !== Object.prototype && Object.getPrototypeOf(v) !== null) throw invalidArgs(`${h.name}: key[${i}] is ${describe(v)}, not a key value (a str or an int)`);
    }
    return encodeJson(parts, "key");
  }

  function queryText(h, q) {
    if (q === undefined || q === null) return EVERY_ROW;
    if (!isQuery(q)) throw invalidArgs(`${h.name}: expected a query such as query(${h.def.name}).where(...), got ${describe(q)}`);
    if (q.table !== h.def && q.table.name !== h.def.name) {
      throw invalidArgs(`${h.name}: the query is over table ${JSON.stringify(q.table.name)}, not ${JSON.stringify(h.def.name)}`);
    }
    let text = queryTexts.get(q);
    if (text === undefined) {
      const wire = q.toJSON();
      text = encodeJson(wire, "query");
      if (fixedLiterals(wire.where)) queryTexts.set(q, text);
    }
    return text;
  }

  /** Waits for the handle's declaration to commit; throws its failure. */
  async function ready(h) {
    if (!h.settled) await h.pending;
    if (h.failed) throw h.failed;
  }

  /** A row as the decoder gives it, from a core answer ("null": none). */
  function rowOf(h, answer) {
    return answer === "null" || answer === "" ? undefined : columnsOf(h)(JSON.parse(answer));
  }

  // The row of `key` as the core's cells (columnsOf(h) decodes them), or
  // null: getNow's, and derives' (js/derive.js, "pages patched in place"),
  // which take the answer's length in `size.chars`.
  function cellsNow(h, key, size) {
    const text = keyText(h, key);
    const answer = gate.call(`${h.name}.get`, () => core.get(h.name, text));
    if (size !== undefined) size.chars = answer.length;
    return answer === "null" || answer === "" ? null : JSON.parse(answer);
  }

  function getNow(h, key) {
    const cells = cellsNow(h, key);
    return cells === null ? undefined : columnsOf(h)(cells);
  }

  // `info` (derives): given an object, gets, when the page has a next, the
  // key of the row after it (`peek`, as the core wrote it: Store::Page),
  // and the page's rows as the core's cells (`raw`).
  function pageNow(h, q, limit, options, info) {
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw invalidArgs(`${h.name}.page: limit must be a positive integer, got ${describe(limit)}`);
    }
    if (options !== undefined && (options === null || typeof options !== "object")) {
      throw invalidArgs(`${h.name}.page: the last argument must be { after }, got ${describe(options)}`);
    }
    refuseUnknownOptions(options, ["after"], `${h.name}.page`);
    const after = options?.after ?? "";
    if (typeof after !== "string") {
      throw new StoreError(ErrorCodes.InvalidCursor, `${h.name}.page: ${describe(after)} is not a cursor (use the next of an earlier page)`);
    }
    const text = queryText(h, q);
    // A page whose rows stayed with the host comes as { rows, next?,
    // peekRow? } (js/loader-workerd.js).
    const got = gate.call(`${h.name}.page`, () => core.page(h.name, text, limit, after));
    const answer = typeof got === "string" ? JSON.parse(got) : got;
    const decode = columnsOf(h);
    const page = { rows: answer.rows.map(decode) };
    if (answer.next !== undefined && answer.next !== null && answer.next !== "") page.next = answer.next;
    if (info !== undefined) {
      // A durable store's held page names the row after it by its cells.
      const peekRow = answer.peekRow ? decode(answer.peekRow) : null;
      info.peek = peekRow ? h.def.key.map((c) => peekRow[c]) : answer.peek;
      info.raw = answer.rows;
      // The answer's length, which bounds its rows' text (3 bytes of UTF-8
      // a char at most); 0 for a page held by the host, whose core never
      // cuts a page at kReadBytes.
      info.chars = typeof got === "string" ? got.length : 0;
    }
    return page;
  }

  /**
   * The k rows nearest `vector` in a vector column: [{ row, distance }],
   * nearest first, equal distances in key order; one crossing into the core
   * (src/vectors/nearest.h). `column` is (e) => e.embedding or a name;
   * options { metric: "cosine" (default) | "l2" | "dot", where }.
   */
  function nearestNow(h, column, vector, k, options) {
    const what = `${h.name}.nearest`;
    let ref = column;
    if (typeof column === "function") {
      try {
        ref = column(columnRefs(h.def));
      } catch (e) {
        throw userThrew(e, `${what}: the column function`);
      }
    } else if (typeof column === "string") ref = col(column);
    if (!isCol(ref)) throw invalidArgs(`${what}: the first argument must be a vector column such as (e) => e.embedding, got ${describe(ref)}`);
    if (!Number.isSafeInteger(k) || k < 1) throw invalidArgs(`${what}: k must be a positive integer, got ${describe(k)}`);
    if (options !== undefined && (options === null || typeof options !== "object")) {
      throw invalidArgs(`${what}: the last argument must be { metric, where }, got ${describe(options)}`);
    }
    refuseUnknownOptions(options, ["metric", "where"], what);
    const { metric = "cosine", where } = options ?? {};
    const spec = h.def.columns[ref.col];
    const wire = spec && spec.type === "vector"
      ? vectorWire(vector, spec.dims, `${what}: the query vector`)
      : vector instanceof Float32Array ? Array.from(vector) : vector;
    const request = { column: ref.col, vector: wire ?? null, k, metric, where: whereOf(h.def, where, what) ?? null };
    const answer = JSON.parse(gate.call(what, () => core.nearest(h.name, encodeJson(request, "nearest"))));
    const decode = columnsOf(h);
    return answer.rows.map((r, i) => ({ row: decode(r), distance: answer.distances[i] }));
  }

  function countNow(h, q) {
    const text = queryText(h, q);
    return Number(gate.call(`${h.name}.count`, () => core.count(h.name, text)));
  }

  async function* rowsOf(h, q, check) {
    let after = "";
    for (;;) {
      check(`${h.name}.rows`);
      const page = pageNow(h, q, PAGE_SIZE, { after });
      yield* page.rows;
      if (!page.next) return;
      after = page.next;
    }
  }

  // What gate.checkOpen refuses but a closing store.
  function checkLive(what) {
    if (gate.closed) throw closedError(what);
    if (gate.broken) throw gate.broken;
  }

  // The async reads share one form: (handle, ...args). They check the
  // store with `check(what)` and wait for the handle's declaration to
  // commit.
  function asyncReads(check) {
    return {
      async get(h, key) {
        check("get");
        if (!h.settled || h.failed) await ready(h);
        return getNow(h, key);
      },
      async nearest(h, column, vector, k, options) {
        check("nearest");
        if (!h.settled || h.failed) await ready(h);
        return nearestNow(h, column, vector, k, options);
      },
      async page(h, q, limit, options) {
        check("page");
        if (!h.settled || h.failed) await ready(h);
        return pageNow(h, q, limit, options);
      },
      rows(h, q) {
        return {
          async *[Symbol.asyncIterator]() {
            check("rows");
            if (!h.settled || h.failed) await ready(h);
            yield* rowsOf(h, q, check);
          },
        };
      },
      async count(h, q) {
        check("count");
        if (!h.settled || h.failed) await ready(h);
        return countNow(h, q);
      },
    };
  }

  return {
    columnsOf,
    keyText,
    ready,
    rowOf,
    getNow,
    cellsNow,
    pageNow,
    countNow,
    // The async reads, refused once close() was asked for.
    ...asyncReads(gate.checkOpen),
    // The same for the reads of a store.read, refused once the store is
    // closed (or broken), not while it closes: close() waits for the read.
    held: asyncReads(checkLive),
    nearestNow,
  };
}
