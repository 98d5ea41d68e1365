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
import { compareText, fromBase64Url, toBase64Url } from "./text.js";

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

// ---- pages read by another column ----
//
// A page whose where does not pin the first key column would depend on every
// row of its table. It depends on less: on its window, the rows the core read
// for it (the page's rows, and with a next the one row after them, whose key
// the core gives as `peek`), and on which rows its where admits. A commit
// cannot change such a page when each of its ops on the table is
// - a put whose key is outside the window and whose new row the where
//   surely rejects (`rejects`): the row is not in the page after the commit,
//   and if its old row was admitted it lay before the page's cursor or past
//   the window, where leaving changes neither the rows nor whether there is
//   a next;
// - a delete by a key outside the window (the same reasons);
// - an update by a key outside the window that sets no column of the where
//   or the order: the row stays admitted or not, in its place.
// Anything else (a bulk op, a schema op, a key the window cannot name, a
// row the where may admit) may change it. Key columns are str or int here;
// otherwise the page depends on every row, as before.

// A key's identity in a window: its values, each tagged by its column kind
// ("s" str, "i" int: a number or a BigInt, or the digits the core writes
// for an int beyond 2^53), or null when a value does not fit the kind. A
// key of one str column is its text.
function keyId(kinds, values) {
  if (!Array.isArray(values) || values.length !== kinds.length) return null;
  if (kinds.length === 1 && kinds[0] === "s") return typeof values[0] === "string" ? values[0] : null;
  let id = "";
  for (let i = 0; i < kinds.length; i++) {
    const v = values[i];
    if (kinds[i] === "s") {
      if (typeof v !== "string") return null;
      id += `s${v.length}:${v}`;
    } else if (typeof v === "bigint" || Number.isSafeInteger(v) || (typeof v === "string" && /^-?\d+$/.test(v))) {
      id += `i${BigInt(v)};`;
    } else {
      return null;
    }
  }
  return id;
}

// A table definition's key columns, their kinds and every column's type
// (null when a key column is not str or int: no windows), made once.
const tableShapes = new WeakMap();
function tableShape(def) {
  if (!tableShapes.has(def)) {
    const keyCols = def?.key;
    const kinds = Array.isArray(keyCols) ? keyCols.map((c) => ({ str: "s", int: "i" })[def.columns?.[c]?.type]) : [undefined];
    const types = {};
    for (const [c, spec] of Object.entries(def?.columns ?? {})) types[c] = spec?.type;
    tableShapes.set(def, kinds.some((k) => k === undefined) ? null : { keyCols, kinds, types, keyOrder: null });
  }
  return tableShapes.get(def);
}

// The key values of a row (an object) of a table of shape `table`.
function rowKey({ keyCols }, row) {
  return keyCols.length === 1 ? [row[keyCols[0]]] : keyCols.map((c) => row[c]);
}

// The key id (keyId) of each op of `ops` on a table of shape `table`, null
// where it names no key. A flush makes them once for all its derives'
// windows of one table (opIdsOf in makeDerives): with 100 held derives, each
// window made them again, a key array and an id a window an op, which was
// most of a one-put commit's flush when one derive of the 100 was dirty.
function opIds(table, ops) {
  const ids = new Array(ops.length);
  for (let i = 0; i < ops.length; i++) {
    const key = opKey(table, ops[i]);
    ids[i] = key === null ? null : keyId(table.kinds, key);
  }
  return ids;
}

// The key values op `op` names on a table of shape `table`, or null when it
// names none (a bulk op, a schema op, a put without a row).
function opKey(table, op) {
  if (op.op === "put") return op.row !== null && typeof op.row === "object" ? rowKey(table, op.row) : null;
  return (op.op === "delete" || op.op === "update") && op.where === undefined ? op.key : null;
}

// The columns a where (its wire form) names, added to `out`; false for a
// form this does not know.
function whereColumns(w, out) {
  if (w === null || typeof w !== "object" || Array.isArray(w)) return false;
  const names = Object.keys(w);
  if (names.length !== 1) return false;
  const a = w[names[0]];
  switch (names[0]) {
    case "and":
    case "or":
      return Array.isArray(a) && a.every((p) => whereColumns(p, out));
    case "not":
      return whereColumns(a, out);
    case "isNull":
      if (typeof a !== "string") return false;
      out.add(a);
      return true;
    case "eq": case "ne": case "lt": case "lte": case "gt": case "gte": case "inArray": case "prefix":
      if (!Array.isArray(a) || typeof a[0] !== "string") return false;
      out.add(a[0]);
      return true;
    default:
      return false;
  }
}

// Whether an int cell or literal is an integer (a safe number or a BigInt:
// JS compares the two kinds exactly, with no BigInt made).
const isInt = (v) => typeof v === "bigint" || Number.isSafeInteger(v);

// Whether a where (its wire form) surely rejects `row` (a put's new row,
// whole): true only where the core's answer cannot differ (js/derive.js is
// not the evaluator; anything it does not know may admit the row): str
// cells against str literals by equality and prefix (code points, as the
// core compares them: JS's === and startsWith for well-formed strings),
// int cells against integer literals, bool cells by equality, isNull on
// those, and the and, or and not of those. `types` maps a column to its
// type.
function rejects(w, row, types) {
  return verdict(w, row, types) === false;
}
// A where node's one key (its operator), or null when it has more or none;
// kept per node (a query's where is made once: pageShape), so that each
// verdict of a flush makes no array of keys.
const whereOps = new WeakMap();
function whereOp(w) {
  let op = whereOps.get(w);
  if (op === undefined) {
    const names = Object.keys(w);
    op = names.length === 1 ? names[0] : null;
    whereOps.set(w, op);
  }
  return op;
}
// true (admits), false (rejects) or null (cannot tell).
function verdict(w, row, types) {
  if (w === null || typeof w !== "object" || Array.isArray(w)) return null;
  const op = whereOp(w);
  if (op === null) return null;
  const a = w[op];
  if (op === "and" || op === "or") {
    if (!Array.isArray(a)) return null;
    let all = true;
    for (const p of a) {
      const v = verdict(p, row, types);
      if (v === (op === "or")) return v;  // one true decides an or, one false an and
      if (v === null) all = false;
    }
    return all ? op === "and" : null;
  }
  if (op === "not") {
    const v = verdict(a, row, types);
    return v === null ? null : !v;
  }
  if (op === "isNull") {
    if (typeof a !== "string" || (types[a] !== "str" && types[a] !== "int" && types[a] !== "bool")) return null;
    return row[a] === null || row[a] === undefined;
  }
  if (!Array.isArray(a) || typeof a[0] !== "string") return null;
  const type = types[a[0]];
  const cell = row[a[0]];
  if (cell === null || cell === undefined) return null;  // SQL's unknown: the core decides
  const same = (lit) => (type === "str" ? (wellFormed(cell) && wellFormed(lit) ? cell === lit : null)
    : type === "bool" ? (typeof cell === "boolean" && typeof lit === "boolean" ? cell === lit : null)
    : type === "int" && isInt(cell) && isInt(lit) ? cell == lit : null);  // eslint-disable-line eqeqeq -- 2 equals 2n
  switch (op) {
    case "eq": return same(a[1]);
    case "ne": {
      const v = same(a[1]);
      return v === null ? null : !v;
    }
    case "inArray": {
      if (!Array.isArray(a[1])) return null;
      let known = true;
      for (const lit of a[1]) {
        const v = same(lit);
        if (v === true) return true;
        if (v === null) known = false;
      }
      return known ? false : null;
    }
    case "prefix":
      return type === "str" && wellFormed(cell) && wellFormed(a[1]) ? cell.startsWith(a[1]) : null;
    case "lt": case "lte": case "gt": case "gte": {
      const x = cell;
      const y = a[1];
      if (type !== "int" || !isInt(x) || !isInt(y)) return null;
      return op === "lt" ? x < y : op === "lte" ? x <= y : op === "gt" ? x > y : x >= y;
    }
    default:
      return null;
  }
}

// query -> { cols, where } | null: the columns its where and order name.
const EVERY_ROW = { cols: new Set(), where: null };
const pageShapes = new WeakMap();
function pageShape(q) {
  if (!isQuery(q)) return null;
  if (!pageShapes.has(q)) {
    const { where, orderBy } = q.toJSON();
    const cols = new Set();
    let known = where === null || whereColumns(where, cols);
    for (const o of orderBy ?? []) {
      const c = Array.isArray(o) ? o[0] : o;
      if (typeof c === "string") cols.add(c);
      else known = false;
    }
    pageShapes.set(q, known ? { cols, where } : null);
  }
  return pageShapes.get(q);
}

// A window's key ids as something with includes(id): the array itself for
// a page's few (a scan of a dozen is cheaper to make and to ask than a
// Set, and a flush makes one per recomputed derive), a Set's view for an
// all's many.
function keySet(ids) {
  if (ids.length <= 32) return ids;
  const set = new Set(ids);
  return { includes: (id) => set.has(id) };
}

// The window of the rows `rows` of `h` read with query `q` (undefined: every
// row) and, when `more` rows follow, `peek`, the key of the next one
// ({ table: tableShape, keys, cols, where, page }), or null when it cannot
// be told (the read then depends on every row). `page`, for a first page or
// an all, is what patching it needs (see patchWindow), or null.
function pageWindow(h, q, rows, more, peek, page = null) {
  const table = h.def ? tableShape(h.def) : null;
  const shape = q === undefined || q === null ? EVERY_ROW : pageShape(q);
  if (table === null || shape === null) return null;
  const { kinds } = table;
  const keys = [];
  for (const row of rows) {
    const id = keyId(kinds, rowKey(table, row));
    if (id === null) return null;
    keys.push(id);
  }
  if (more) {
    const id = keyId(kinds, peek);
    if (id === null) return null;  // no peek: the row after the page is not known
    keys.push(id);
  }
  return { table, keys: keySet(keys), cols: shape.cols, where: shape.where, page: page && pageState(h, q, table, more, peek, page) };
}

// Whether `ops` (one table's, from a commit) may change the page of window
// `w`.
function windowTouched(w, ops, ids = opIds(w.table, ops)) {
  const { types } = w.table;
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i];
    const id = ids[i];
    if (id === null || w.keys.includes(id)) return true;
    if (op.op === "put") {
      if (w.where === null || !rejects(w.where, op.row, types)) return true;
    } else if (op.op === "update") {
      if (op.set === null || typeof op.set !== "object") return true;
      for (const c of Object.keys(op.set)) if (w.cols.has(c)) return true;
    }
  }
  return false;
}

// ---- pages patched in place ----
//
// The flush recomputes a held derive whose window a commit touched. Its
// first pages (and alls) read by another column need not be read again:
// the window keeps the page's rows as the core's cells, whether a next
// follows and the key of the row after them, so when the commit's ops on
// the table are puts, updates and deletes by key, the flush reads once the
// row each key now has (a get, shared by every derive) and makes the new
// page from the old one (patchWindow). It does so only where it can tell
// exactly: the where's verdict on each such row is known, and the order's
// columns are str, int or bool (compared as the core compares them: code
// points, integers, false before true, null first). The derive's read then
// gets the patched page with no page read; anything else reads the core,
// as before. A page's next is the core's cursor for its last row: its
// head (the query's fingerprints) taken from an earlier next, its position
// the last row's order values, written as the core writes them.
//
// What the old page tells: its rows are the first rows of the answer (all
// of them when no next followed), and with a next, the peek is a row after
// them. A key op removes its key's old row from those rows (they stay the
// first rows of the new answer) and puts its new row among them when the
// where admits it and it sorts before their last one (or anywhere, when
// they are the whole answer); a new row that sorts after them is a row
// after them. The patched page holds when the rows known at the end fill
// it and say whether a next follows.

// The most ops one commit may have on a table for its pages to be patched
// (each names a key: one get, shared by every derive).
const PATCH_KEYS = 32;

// The total order of query `q` (undefined: every row) on `table` as
// [column, desc, type] terms, as the core makes it (src/query/query.cc,
// ParseQuery: the orderBy's columns, then the key's not named, in the
// direction of the last term), or null when a column is not str, int or
// bool.
const orderTerms = new WeakMap();
function orderOf(q, table) {
  if (q === undefined || q === null) return (table.keyOrder ??= termsOf([], table));
  if (!orderTerms.has(q)) orderTerms.set(q, termsOf(q.toJSON().orderBy ?? [], table));
  return orderTerms.get(q);
}
function termsOf(orderBy, { keyCols, types }) {
  const terms = [];
  const used = new Set();
  let desc = false;
  for (const o of orderBy) {
    const c = Array.isArray(o) ? o[0] : o;
    desc = Array.isArray(o) && o[1] === "desc";
    if (used.has(c)) continue;
    used.add(c);
    terms.push([c, desc, types[c]]);
  }
  for (const c of keyCols) if (!used.has(c)) terms.push([c, desc, types[c]]);
  return terms.every(([, , type]) => type === "str" || type === "int" || type === "bool") ? terms : null;
}

// Two cells of one column, as the core orders them: -1, 0, 1, or NaN when
// a value is not of its column's kind.
function compareCell(type, x, y) {
  const nx = x === null || x === undefined;
  const ny = y === null || y === undefined;
  if (nx || ny) return nx && ny ? 0 : nx ? -1 : 1;
  if (type === "str") return typeof x === "string" && typeof y === "string" ? compareText(x, y) : NaN;
  if (type === "bool") return typeof x === "boolean" && typeof y === "boolean" ? (x === y ? 0 : x ? 1 : -1) : NaN;
  if (!isInt(x) || !isInt(y)) return NaN;
  return x < y ? -1 : x > y ? 1 : 0;  // a number and a BigInt compare exactly
}

// Row `a` against row `b` (decoded) in order `terms`.
function compareRows(terms, a, b) {
  for (const [c, desc, type] of terms) {
    const d = compareCell(type, a[c], b[c]);
    if (d !== 0) return desc ? -d : d;
  }
  return 0;
}

// The core's cursor for the row `row` (decoded) in order `terms` after
// `head` ({ b64, rest }: the base64url of the head's first bytes, a
// multiple of three, and the rest of its text; the head is ASCII), or
// null when a value is not one this writes exactly as the core does
// (Value::AppendJson: a str's escapes are JSON.stringify's but for \b and
// \f, which the core writes as \u00XX).
function cursorOf(head, terms, row) {
  let text = head.rest;
  for (let i = 0; i < terms.length; i++) {
    const v = row[terms[i][0]];
    let cell;
    if (v === null || v === undefined) cell = "null";
    else if (typeof v === "string") {
      if (!wellFormed(v) || /[\b\f]/.test(v)) return null;
      cell = JSON.stringify(v);
    } else if (typeof v === "boolean" || typeof v === "bigint" || Number.isSafeInteger(v)) cell = String(v);
    else return null;
    text += i ? `,${cell}` : cell;
  }
  return `c1.${head.b64}${toBase64Url(`${text}]]`)}`;
}

// The head of a core cursor (its text up to the position's values, the
// query's fingerprints in hex and its direction) as cursorOf takes it, or
// null.
function headOf(next) {
  if (typeof next !== "string" || !next.startsWith("c1.")) return null;
  try {
    const text = fromBase64Url(next.slice(3));
    const at = text.indexOf("[", 1);
    if (at < 0 || !/^[\x20-\x7e]*$/.test(text.slice(0, at))) return null;
    const cut = (at + 1) - ((at + 1) % 3);
    return { b64: toBase64Url(text.slice(0, cut)), rest: text.slice(cut, at + 1) };
  } catch {
    return null;
  }
}

// What patching a window's page needs: { h, q, limit, raw, rows, more,
// peek, next, head, terms, chars } (limit Infinity for an all; `rows` the
// page's rows decoded for patchWindow, { raw, row, id } each, and `head`
// its cursors' head, both made when first needed; `chars` a bound on its
// rows' text in UTF-16 units, see patchWindow), or null when its order
// cannot be told.
function pageState(h, q, table, more, peek, { limit, raw, next, chars = 0 }) {
  const terms = orderOf(q, table);
  if (terms === null || !Array.isArray(raw)) return null;
  return { h, q, limit, raw, rows: null, more, peek: more ? keyId(table.kinds, peek) : null, next, head: undefined, terms, chars };
}

// The core cuts a page once its rows hold kReadBytes of text
// (src/backends/backend.h); a patched page whose rows may hold that much
// is read from the core instead, which cuts it where a fresh read would.
const READ_BYTES = 8 << 20;

// The keys a commit's ops on a table of shape `table` name, each once
// ([id, key values], in commit order; a later op of a key adds nothing: the
// flush reads the row the commit left), or null when an op names no key or
// there are more than PATCH_KEYS.
function keyChanges(ops, table) {
  if (ops.length > PATCH_KEYS) return null;
  const out = [];
  const seen = new Set();
  for (const op of ops) {
    const key = opKey(table, op);
    const id = key === null ? null : keyId(table.kinds, key);
    if (id === null) return null;
    if (!seen.has(id)) {
      seen.add(id);
      out.push([id, key]);
    }
  }
  return out;
}

// The window `w` after a commit whose ops on its table name the keys
// `changes` (keyChanges), its page made from the old one, or null when that
// cannot be told exactly (the read then goes to the core). `rowOf(h, id,
// key)` gives the row the commit left at key `key` ({ raw, row, id }),
// null for none, undefined when it cannot; `decode` is the table's row
// decoder.
function patchWindow(w, changes, rowOf, decode) {
  const p = w.page;
  if (!p) return null;
  const { kinds, types } = w.table;
  if (p.rows === null) {
    p.rows = p.raw.map((raw) => {
      const row = decode(raw);
      return { raw, row, id: keyId(kinds, rowKey(w.table, row)) };
    });
  }
  const { limit, terms } = p;
  // A bound on the rows' text: the old page's answer plus every row added
  // (rows removed are not taken off; a read from the core starts it again).
  let chars = p.chars;
  const rows = p.rows.slice();
  let complete = !p.more;
  let beyond = p.peek;  // a key whose row comes after `rows`, or null
  for (const [id, key] of changes) {
    for (let i = 0; i < rows.length; i++) {
      if (rows[i].id === id) {
        rows.splice(i, 1);
        break;
      }
    }
    if (id === beyond) beyond = null;
    const now = rowOf(p.h, id, key);
    if (now === undefined) return null;
    if (now === null) continue;
    const admitted = w.where === null ? true : verdict(w.where, now.row, types);
    if (admitted === null) return null;
    if (!admitted) continue;
    let i = rows.length;
    if (!complete) {
      const last = i === 0 ? 1 : compareRows(terms, now.row, rows[i - 1].row);
      if (Number.isNaN(last)) return null;
      if (last > 0) {  // after the known rows
        beyond ??= id;
        continue;
      }
    }
    while (i > 0) {
      const c = compareRows(terms, now.row, rows[i - 1].row);
      if (Number.isNaN(c)) return null;
      if (c > 0) break;
      i--;
    }
    rows.splice(i, 0, now);
    chars += now.chars;
    if (rows.length > limit + 1) {  // the last is past the page and its next row
      rows.pop();
      complete = false;
    }
  }
  let more;
  if (rows.length > limit) more = true;
  else if (complete) more = false;
  else if (rows.length === limit && beyond !== null) more = true;
  else return null;  // a row of the page left it; the row after it is not known
  if (limit !== Infinity && chars * 3 >= READ_BYTES) return null;  // the core may cut it
  const peek = more ? (rows.length > limit ? rows.pop().id : beyond) : null;
  let next;
  if (more) {
    const last = rows[rows.length - 1];
    if (p.more && last.raw === p.raw[p.raw.length - 1]) next = p.next;  // the same last row
    else {
      if (p.head === undefined) p.head = p.more ? headOf(p.next) : null;
      if (p.head === null || (next = cursorOf(p.head, terms, last.row)) === null) return null;
    }
  }
  const keys = new Array(rows.length);
  const raw = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    keys[i] = rows[i].id;
    raw[i] = rows[i].raw;
  }
  if (peek !== null) keys.push(peek);
  const page = { h: p.h, q: p.q, limit, raw, rows, more, peek, next, head: p.head, terms, chars };
  return { table: w.table, keys: keySet(keys), cols: w.cols, where: w.where, page };
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
    // The handle of table `t`. One not open yet (or still being declared)
    // names nothing to depend on: the derive is then computed again after
    // every commit, until the table opens and the read succeeds.
    const handle = (t, what) => {
      try {
        return settled(t, `derive(${d.name}): ${what}`);
      } catch (e) {
        d.every = true;
        throw e;
      }
    };
    // The table's handle, its read added to what `d` depends on: the range
    // `range(col)` gives for a str key column `col`, else every row.
    const table = (t, what, range) => {
      use(what);
      const h = handle(t, what);
      const col = rangeColumn(h);
      depend(d.deps, h.name, col, col !== undefined && range ? range(col) : null);
      return h;
    };
    // A page or all of query `q`: the table's handle, and whether the where
    // pins its key (that range added to what `d` depends on); when it does
    // not, the read's window is kept once read (keepWindow).
    const byQuery = (t, what, q) => {
      use(what);
      const h = handle(t, what);
      const col = rangeColumn(h);
      const r = col !== undefined ? queryRange(col, q) : null;
      if (r !== null) depend(d.deps, h.name, col, r);
      return { h, keyed: r !== null };
    };
    // The window the flush kept for a read of `q` with `limit` (Infinity:
    // an all), patched or untouched, taken; or null.
    const takeKept = (h, q, limit) => {
      const i = d.kept === null ? -1 : d.kept.findIndex((w) => w.page.h === h && w.page.q === q && w.page.limit === limit);
      return i < 0 ? null : d.kept.splice(i, 1)[0];
    };
    // A page's window (null: the page depends on every row of the table).
    const keepWindow = (h, w) => {
      if (w === null) depend(d.deps, h.name, undefined, null);
      else if (d.deps.get(h.name) !== null) {
        if (!d.pages.has(h.name)) d.pages.set(h.name, []);
        d.pages.get(h.name).push(w);
      }
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
      page: (t, q, limit, options) => {
        const { h, keyed } = byQuery(t, "read.page", q);
        if (keyed) return io.pageNow(h, q, limit, options);
        // Not by key: the page's window ("pages read by another column"),
        // a first page's served patched when the flush could ("pages
        // patched in place").
        const first = options === undefined || (options !== null && typeof options === "object" && (options.after ?? "") === "");
        const kept = first ? takeKept(h, q, limit) : null;
        if (kept !== null) {
          keepWindow(h, kept);
          const page = { rows: kept.page.raw.map(io.decoderOf(h)) };
          if (kept.page.more) page.next = kept.page.next;
          return page;
        }
        const info = {};
        const page = io.pageNow(h, q, limit, options, info);
        keepWindow(h, pageWindow(h, q, page.rows, page.next !== undefined, info.peek, first ? { limit, raw: info.raw, next: page.next, chars: info.chars } : null));
        return page;
      },
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
        const { h, keyed } = byQuery(t, "read.all", q);
        const kept = keyed ? null : takeKept(h, q, Infinity);
        if (kept !== null) {
          keepWindow(h, kept);
          return kept.page.raw.map(io.decoderOf(h));
        }
        const rows = [];
        const raw = [];
        let after;
        for (;;) {
          const info = {};
          const page = io.pageNow(h, q, PAGE_SIZE, after === undefined ? undefined : { after }, info);
          rows.push(...page.rows);
          raw.push(...info.raw);
          if (!page.next) break;
          after = page.next;
        }
        // Every row the where admits: a window with no row after it.
        if (!keyed) keepWindow(h, pageWindow(h, q, rows, false, undefined, { limit: Infinity, raw }));
        return rows;
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
    // New maps, not clear(): a cleared Map's old table keeps a link to its
    // new one (for live iterators), so once an old table is promoted each
    // compute's windows were kept alive through the young generation's
    // scavenges by the one before, and promoted in turn (docs/performance.md,
    // "Session 48").
    d.deps = new Map();
    d.pages = new Map();
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
      d.kept = null;
    }
    d.result = result;
    d.dirty = false;
    return result;
  }

  // The windows of `d`'s first pages and alls whose pages after the commit
  // of `opsByTable` are known: untouched, or patched (patchWindow).
  // `changesOf(ops, table)` is keyChanges, made once a flush. `touched`: a
  // window the flush's dirty check already found touched (not asked again).
  function keptWindows(d, opsByTable, rowOf, changesOf, touched) {
    const kept = [];
    for (const [t, windows] of d.pages) {
      const ops = opsByTable.get(t);
      for (const w of windows) {
        if (!w.page) continue;
        if (w !== touched && (ops === undefined || !windowTouched(w, ops))) {
          kept.push(w);
          continue;
        }
        try {
          const changes = changesOf(ops, w.table);
          const patched = changes && patchWindow(w, changes, rowOf, io.decoderOf(w.page.h));
          if (patched) kept.push(patched);
        } catch {
          // Not patched: the read goes to the core, which words any error.
        }
      }
    }
    return kept;
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
    const d = { name, fn, deps: new Map(), pages: new Map(), kept: null, every: false, dirty: true, result: null, holds: 0, listeners: new Set(), closed: false, reader: null };
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
    flush(opsByTable, seq) {
      const recomputed = new Set();
      // The rows the commit left at the keys it wrote, read once for every
      // derive's patched pages: `${table}\0${key id}` -> { raw, row, id },
      // null (no row) or undefined (the read failed).
      const left = new Map();
      const rowOf = (h, id, key) => {
        const at = `${h.name}\0${id}`;
        if (!left.has(at)) {
          let got;
          try {
            const size = { chars: 0 };
            const raw = io.cellsNow(h, key, size);
            got = raw === null ? null : { raw, row: io.decoderOf(h)(raw), id, chars: size.chars };
          } catch {
            got = undefined;
          }
          left.set(at, got);
        }
        return left.get(at);
      };
      // A table's ops -> [a table shape, opIds]: the ops' key ids, made once
      // for every derive's windows of that table.
      const idsByOps = new Map();
      const idsOf = (ops, table) => {
        let c = idsByOps.get(ops);
        if (c === undefined || c[0] !== table) idsByOps.set(ops, (c = [table, opIds(table, ops)]));
        return c[1];
      };
      const changed = new Map();  // a table's ops -> [its table shape, keyChanges]
      const written = [...opsByTable.keys()];
      const writtenOps = [...opsByTable.values()];
      const changesOf = (ops, table) => {
        let c = changed.get(ops);
        if (c === undefined || c[0] !== table) changed.set(ops, (c = [table, keyChanges(ops, table)]));
        return c[1];
      };
      for (const d of byName.values()) {
        // Computed at this commit already (first held or read inside its
        // adopt hook): its value is this seq's, and its holders had it.
        // Before, it was computed and sent again, the same seq twice.
        if (!d.dirty && d.result !== null && d.result.seq >= seq) continue;
        // Its windows are those of the state before this commit.
        const current = !d.dirty && d.result !== null;
        let touched;  // the window that made it dirty, if one did
        if (!d.dirty) {
          if (d.every) d.dirty = true;
          else {
            // By the commit's tables (most often one), each looked up in
            // the derive's reads: no iterator a derive.
            for (let i = 0; i < written.length && !d.dirty; i++) {
              const r = d.deps.get(written[i]);
              if (r !== undefined && touches(r, writtenOps[i])) d.dirty = true;
            }
            for (let i = 0; i < written.length && !d.dirty; i++) {
              const windows = d.pages.get(written[i]);
              if (windows === undefined) continue;
              const ops = writtenOps[i];
              for (const w of windows) {
                if (windowTouched(w, ops, idsOf(ops, w.table))) {
                  touched = w;
                  d.dirty = true;
                  break;
                }
              }
            }
          }
        }
        if (d.dirty && d.holds > 0) {
          if (current && d.pages.size > 0) d.kept = keptWindows(d, opsByTable, rowOf, changesOf, touched);
          compute(d);
          recomputed.add(d);
          notify(d);
        }
      }
      return recomputed;
    },
    // The store closed: no derive computes again; the values already
    // queued for holders (each for an acknowledged commit) are still
    // delivered, as a watch's calls are (js/watch.js, clear).
    clear() {
      for (const d of byName.values()) d.closed = true;
      byName.clear();
    },
  };
}
