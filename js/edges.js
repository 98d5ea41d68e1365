// Edges: links between documents or rows, as a table of a fixed shape.
//
// `defineEdges` makes a table definition (js/schema.js) with the columns
// from, to, kind (and the caller's data columns), the key (from, kind, to)
// and the index byTo (to, kind, from). Everything else is the table
// machinery: puts and deletes are the usual wire ops, deleting a node's
// edges is one `delete … where`, and `neighbours` is one or two page
// queries over the key or the index. So the outbox, replicas, export and
// sync carry edges with no op of their own (docs/guide.md, "Link
// documents"). The kinds are checked here, by the code that writes.

import { ErrorCodes, StoreError, invalidArgs, refuseUnknownOptions } from "./errors.js";
import { describe, defineTable, sameDeclaration, str } from "./schema.js";
import { and, eq, gt, gte, ne, or, query } from "./query.js";
import { col } from "./expr.js";
import { compareText, fromBase64Url, toBase64Url } from "./text.js";

const SHAPE = ["from", "to", "kind"];
const DIRECTIONS = ["out", "in", "both"];

/**
 * Defines a table of edges: `from`, `to` and `kind` (str), with `data`'s
 * columns after them; key (from, kind, to), so one edge of a kind between
 * two nodes; index `byTo` (to, kind, from) for the incoming edges. `kinds`
 * lists the kinds a write may use.
 *
 * @example
 * const Links = defineEdges("links", { kinds: ["cites", "replies"], data: { at: int({ default: 0 }) } });
 */
export function defineEdges(name, spec) {
  if (spec === null || typeof spec !== "object") {
    throw invalidArgs(`defineEdges(${describe(name)}): the second argument must be { kinds, data?, version? }, got ${describe(spec)}`);
  }
  const { kinds, data = {}, version = 1, migrations = {} } = spec;
  for (const k of Object.keys(spec)) {
    if (!["kinds", "data", "version", "migrations"].includes(k)) {
      throw invalidArgs(`defineEdges(${describe(name)}): unknown option ${describe(k)} (it takes kinds, data, version and migrations)`);
    }
  }
  if (!Array.isArray(kinds) || kinds.length === 0) {
    throw invalidArgs(`defineEdges(${describe(name)}): kinds must be a non-empty array of strings, got ${describe(kinds)}`);
  }
  const seen = new Set();
  for (const k of kinds) {
    if (typeof k !== "string" || k === "") throw invalidArgs(`defineEdges(${describe(name)}): a kind must be a non-empty string, got ${describe(k)}`);
    if (seen.has(k)) throw invalidArgs(`defineEdges(${describe(name)}): kind ${describe(k)} is listed twice`);
    seen.add(k);
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw invalidArgs(`defineEdges(${describe(name)}): data must be an object of columns such as { at: int() }, got ${describe(data)}`);
  }
  for (const c of Object.keys(data)) {
    if (SHAPE.includes(c)) throw invalidArgs(`defineEdges(${describe(name)}): data column ${describe(c)} is one of the edge's own columns (from, to, kind)`);
  }
  const def = defineTable(name, {
    version,
    columns: { from: str(), to: str(), kind: str(), ...data },
    key: ["from", "kind", "to"],
    indexes: { byTo: ["to", "kind", "from"] },
    migrations,
  });
  return sameDeclaration(Object.freeze({ ...def, edges: Object.freeze({ kinds: Object.freeze([...kinds]) }) }), def);
}

/**
 * True for a definition made by defineEdges.
 *
 * @example
 * isEdgesDef(Links)   // true
 */
export function isEdgesDef(def) {
  return def !== null && typeof def === "object" && def.edges !== undefined && Array.isArray(def.edges.kinds);
}

/**
 * Refuses a kind that the edges definition does not list (invalid/args
 * naming it). Other tables pass.
 *
 * @example
 * checkKind(h, "cites", "tx.put")
 */
export function checkKind(h, kind, what) {
  if (!isEdgesDef(h.def) || kind === undefined) return;
  if (typeof kind !== "string" || !h.def.edges.kinds.includes(kind)) {
    throw invalidArgs(`${what}(${h.name}): kind ${describe(kind)} is not one of the table's kinds ${describe(h.def.edges.kinds)}`);
  }
}

function checkNode(h, node, what) {
  if (typeof node !== "string") throw invalidArgs(`${what}(${h.name}): the node must be a string (a from or to value), got ${describe(node)}`);
}

/**
 * The predicate of "the edges of `node`": out (from = node), in (to =
 * node) or both, of one kind when `kind` is given. The where of
 * tx.deleteEdges.
 *
 * @example
 * edgesWhere(h, "a", { direction: "both" }, "tx.deleteEdges")   // or(eq(from, "a"), eq(to, "a"))
 */
export function edgesWhere(h, node, options, what) {
  if (!isEdgesDef(h.def)) throw invalidArgs(`${what}: table ${h.name} was not made by defineEdges`);
  checkNode(h, node, what);
  const { direction, kind } = edgeOptions(h, options, "both", what);
  const of = (c) => (kind === undefined ? eq(col(c), node) : and(eq(col(c), node), eq(col("kind"), kind)));
  const out = of("from");
  const inn = of("to");
  return direction === "out" ? out : direction === "in" ? inn : or(out, inn);
}

function edgeOptions(h, options, defaultDirection, what, known = ["kind", "direction"]) {
  if (options !== undefined && (options === null || typeof options !== "object" || Array.isArray(options))) {
    throw invalidArgs(`${what}(${h.name}): options must be { ${known.map((k) => `${k}?`).join(", ")} }, got ${describe(options)}`);
  }
  // A misspelt direction or kind would widen the call: a deleteEdges of
  // every edge of the node, where one kind was meant.
  refuseUnknownOptions(options, known, `${what}(${h.name})`);
  const direction = options?.direction ?? defaultDirection;
  if (!DIRECTIONS.includes(direction)) {
    throw invalidArgs(`${what}(${h.name}): direction must be "out", "in" or "both", got ${describe(direction)}`);
  }
  const kind = options?.kind;
  if (kind !== undefined) checkKind(h, kind, what);
  return { direction, kind };
}

// ---------------------------------------------------------------- cursors

// A neighbours cursor is "n1." + base64url(JSON of [table, node, direction,
// kind, position]) + "." + a hash of that JSON. It binds the call (table,
// node, direction, kind); the position is the last edge given: [kind, the
// other node, 0 for out or 1 for in].

function hash(text) {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c ^ (a >>> 7), 0x5bd1e995) >>> 0;
  }
  return a.toString(16).padStart(8, "0") + b.toString(16).padStart(8, "0");
}

function encodeCursor(call, position) {
  const text = JSON.stringify([...call, position]);
  return `n1.${toBase64Url(text)}.${hash(text)}`;
}

function badCursor(h, after, why) {
  return new StoreError(ErrorCodes.InvalidCursor, `${h.name}.neighbours: ${describe(after)} is not a cursor of this call (${why}); use the next of an earlier page of the same node, direction and kind`);
}

function decodeCursor(h, call, after) {
  if (typeof after !== "string") throw badCursor(h, after, "not a string");
  const parts = after.split(".");
  if (parts.length !== 3 || parts[0] !== "n1") throw badCursor(h, after, "not a neighbours cursor");
  let text;
  let parsed;
  try {
    text = fromBase64Url(parts[1]);
    parsed = JSON.parse(text);
  } catch {
    throw badCursor(h, after, "unreadable");
  }
  if (hash(text) !== parts[2]) throw badCursor(h, after, "altered");
  if (!Array.isArray(parsed) || parsed.length !== call.length + 1 || JSON.stringify(parsed.slice(0, call.length)) !== JSON.stringify(call)) {
    throw badCursor(h, after, "made for another call");
  }
  const p = parsed[call.length];
  if (!Array.isArray(p) || p.length !== 3 || typeof p[0] !== "string" || typeof p[1] !== "string" || (p[2] !== 0 && p[2] !== 1)) {
    throw badCursor(h, after, "bad position");
  }
  return p;
}

// ---------------------------------------------------------------- neighbours

/**
 * `handle.neighbours(node, { kind, direction, limit, after })` over a
 * handle state `h` (js/owner.js), with the store's reads (js/reads.js).
 * Resolves to { rows, next? }: the edge rows, in the order
 *   out:  by kind, then to;
 *   in:   by kind, then from;
 *   both: by kind, then the other node, an out edge before an in edge to
 *         the same node; a self-loop (from = to = node) once, as out.
 *
 * @example
 * const { rows, next } = await neighbours(reads, h, "a", { kind: "cites", direction: "out", limit: 20 });
 */
export async function neighbours(reads, h, node, options) {
  return neighboursWith(h, node, options, async () => {
    if (!h.settled || h.failed) await reads.ready(h);
  }, (q, limit) => reads.pageNow(h, q, limit));
}

/**
 * neighbours over any reader of an edges-shaped table (`from`, `to`, `kind`
 * str columns): `t` is { name, def }, `ready()` waits until it can be read,
 * `pageOf(q, limit)` gives one page of a query, now or as a promise. A
 * replica's and a PostgreSQL mirror's tables use it; the kinds are checked
 * only when `t.def` was made by defineEdges (a replica's def is built from
 * the stored record, which does not hold them).
 *
 * @example
 * await neighboursWith({ name, def }, "a", { direction: "in" }, async () => {}, (q, limit) => handle.page(q, limit));
 */
export async function neighboursWith(h, node, options, ready, pageOf) {
  const what = "neighbours";
  for (const c of ["from", "to", "kind"]) {
    if (h.def.columns?.[c]?.type !== "str") {
      throw invalidArgs(`${h.name}.neighbours: the table has no str column "${c}"; neighbours reads a table made by defineEdges (from, to, kind)`);
    }
  }
  checkNode(h, node, what);
  const { direction, kind } = edgeOptions(h, options, "out", what, ["kind", "direction", "limit", "after"]);
  const limit = options?.limit ?? 100;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 100000) {
    throw invalidArgs(`${h.name}.neighbours: limit must be an integer from 1 to 100000, got ${describe(limit)}`);
  }
  const call = [h.name, node, direction, kind ?? null];
  const after = options?.after;
  const position = after === undefined || after === null ? undefined : decodeCursor(h, call, after);
  await ready();

  const streams = [];
  if (direction !== "in") streams.push(streamOf(h.def, node, kind, 0, position));
  if (direction !== "out") streams.push(streamOf(h.def, node, kind, 1, position, direction === "both"));
  // Both pages are asked for before any await: on a store they are read
  // in one synchronous step, so they belong to one head.
  const pages = streams.map((s) => ({ s, page: pageOf(s.q, limit) }));
  for (const p of pages) p.page = await p.page;
  let rows;
  if (pages.length === 1) {
    rows = pages[0].page.rows.map((row) => ({ row, d: pages[0].s.d }));
  } else {
    rows = [...pages[0].page.rows.map((row) => ({ row, d: 0 })), ...pages[1].page.rows.map((row) => ({ row, d: 1 }))];
    rows.sort((x, y) => compareText(x.row.kind, y.row.kind)
      || compareText(other(x.row, x.d), other(y.row, y.d))
      || x.d - y.d);
  }
  const more = rows.length > limit || pages.some((p) => p.page.next !== undefined);
  rows = rows.slice(0, limit);
  const out = { rows: rows.map((r) => r.row) };
  if (more && rows.length > 0) {
    const last = rows[rows.length - 1];
    out.next = encodeCursor(call, [last.row.kind, other(last.row, last.d), last.d]);
  }
  return out;
}

function other(row, d) {
  return d === 0 ? row.to : row.from;
}

// One direction's query: its edges after the position (kind, other, d) in
// the order (kind, other node, d). `noSelf` leaves self-loops to the out
// stream (direction "both").
function streamOf(def, node, kind, d, position, noSelf = false) {
  const here = d === 0 ? "from" : "to";
  const there = d === 0 ? "to" : "from";
  const parts = [eq(col(here), node)];
  if (kind !== undefined) parts.push(eq(col("kind"), kind));
  if (noSelf) parts.push(ne(col(there), node));
  if (position !== undefined) {
    const [k0, o0, d0] = position;
    // (kind, other, d) > (k0, o0, d0); for this stream d is fixed.
    const sameOther = d > d0 ? gte(col(there), o0) : gt(col(there), o0);
    parts.push(or(gt(col("kind"), k0), and(eq(col("kind"), k0), sameOther)));
  }
  const q = query(def).where(and(...parts)).orderBy(col("kind")).orderBy(col(there));
  return { q, d };
}
