// The PostgreSQL mirror: a replica whose tables live in PostgreSQL
// (openReplica({ backend: "postgres", url, session }) in Node; design.md,
// "PostgreSQL mirror"; docs/architecture.md, "The PostgreSQL mirror").
//
// Node only, and only when asked for: js/index.js imports this file (and
// this file imports `pg`, an optional peer dependency) dynamically, so the
// browser and workerd bundles never see either.
//
// Each session is one PostgreSQL schema holding one real table per stored
// table (real columns, COLLATE "C" text, the key as primary key, the
// declared indexes) and its own: _meta (head, divergence), _tables (the
// table records, as applied), and with documents the core's _documents
// (plus each one's current value) and _deltas. A batch is one PostgreSQL transaction,
// the new head in it. Writes and reads compile the wire JSON of where, set
// and order (docs/formats.md) to PostgreSQL SQL here, in JS: the rules are
// the core's (src/query/sql.cc), checked by the conformance vectors run on
// this replica (tests/js/postgres.test.js).

import { createHash } from "node:crypto";

import { ErrorCodes, invalidArgs, refuseUnknownOptions, StoreError } from "./errors.js";
import { encodeJson, parseJsonExact } from "./encode.js";
import { columnRefs, isQuery, query as makeQuery, resolveWhere } from "./query.js";
import { col, isCol } from "./expr.js";
import { vectorWire } from "./vectors.js";
import { neighboursWith } from "./edges.js";
import { defOf } from "./replica.js";
import { describe } from "./schema.js";

// ---------------------------------------------------------------------------
// Names and types

const MAX_IDENT = 63;  // PostgreSQL's NAMEDATALEN - 1, in bytes

/**
 * The PostgreSQL identifier of a stored name: the name itself when it fits
 * PostgreSQL's 63 bytes, else its first bytes (whole code points), "~" and
 * 12 hex digits of its sha256, so two long names never collide.
 *
 * @example pgName("notes/items")   // "notes/items"
 */
export function pgName(name) {
  if (Buffer.byteLength(name) <= MAX_IDENT) return name;
  const hash = createHash("sha256").update(name).digest("hex").slice(0, 12);
  let head = "";
  for (const ch of name) {
    if (Buffer.byteLength(head + ch) > MAX_IDENT - 13) break;
    head += ch;
  }
  return `${head}~${hash}`;
}

/** A quoted identifier ("notes/items"). */
function ident(name) {
  return `"${pgName(name).replace(/"/g, '""')}"`;
}

/**
 * A column type's PostgreSQL type: the one place where the mirror maps
 * column types (docs/architecture.md, "The PostgreSQL mirror"). A new
 * column type (vector(n): real[] or bytea) adds its line here and its
 * value conversions in toParam and fromPg.
 */
export const PG_TYPES = Object.freeze({
  str: 'text COLLATE "C"',
  int: "bigint",
  bool: "boolean",
  num: "double precision",
  json: "jsonb",
  // float32 × n, little-endian, as SQLite keeps it (docs/formats.md, "Vectors").
  vector: "bytea",
});

/** The cast of a bound parameter of a column type. */
const PARAM_CASTS = Object.freeze({ str: "text", int: "bigint", bool: "boolean", num: "double precision", json: "jsonb", vector: "bytea" });

// A value as a text parameter: exact for ints beyond 2^53 and for -0. A
// value of another type than its column's is a malformed record (the core
// of every other replica refuses it): a TypeError, which apply() answers
// with sync/diverged. PostgreSQL would have cast it (3 into a text column
// as "3", "1" into a boolean as true).
function toParam(type, v) {
  if (v === null || v === undefined) return null;
  if (!fitsType(type, v)) throw new TypeError(`${typeName(v)} ${describe(v)} is not a value of a ${type} column`);
  switch (type) {
    case "int": return typeof v === "bigint" ? v.toString() : String(v);
    case "num": return Object.is(v, -0) ? "-0" : String(v);
    case "bool": return v ? "true" : "false";
    case "json": return encodeJson(v, "value");
    // The wire's base64 of the float32 bytes -> bytea's hex input form.
    case "vector": return `\\x${Buffer.from(v, "base64").toString("hex")}`;
    default: return String(v);
  }
}

// Whether `v` (not null) is a value of a column of `type` as a record
// holds it: an int beyond 2^53 is a BigInt, a vector its base64.
function fitsType(type, v) {
  switch (type) {
    case "str": return typeof v === "string";
    case "int": return (typeof v === "number" && Number.isSafeInteger(v)) || (typeof v === "bigint" && v >= INT64_MIN && v <= INT64_MAX);
    case "num": return (typeof v === "number" && Number.isFinite(v)) || typeof v === "bigint";
    case "bool": return typeof v === "boolean";
    case "vector": return typeof v === "string";
    default: return true;
  }
}

// JSON text -> its value, its numbers read as the core reads them: an
// integer past 64 bits is a double. jsonb writes a number as its exact
// decimal, never with an exponent (the float 1e20 comes back as
// 100000000000000000000), and a batch's text may hold one (2 ** 64 written
// by JSON.stringify): parseJsonExact reads those as BigInts that no int can
// hold, which encodeJson refuses.
function parseAsCore(text) {
  const v = parseJsonExact(text);
  return /\d{19}/.test(text) ? floatsPast64(v) : v;
}
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
function floatsPast64(v) {
  if (typeof v === "bigint") return v < INT64_MIN || v > INT64_MAX ? Number(v) : v;
  if (v === null || typeof v !== "object") return v;
  for (const k of Object.keys(v)) v[k] = floatsPast64(v[k]);
  return v;
}

// A cell as PostgreSQL's text gives it -> the value every backend reads.
function fromPg(type, v) {
  if (v === null) return null;
  switch (type) {
    case "int": {
      const n = Number(v);
      return Number.isSafeInteger(n) ? n : BigInt(v);
    }
    case "num": return Number(v);
    case "bool": return v === true || v === "t" || v === "true";
    case "json": return parseAsCore(v);
    case "vector": {
      // bytea's hex output (\x...) -> the Float32Array every backend reads.
      const bytes = Buffer.from(v.startsWith("\\x") ? v.slice(2) : v, "hex");
      const out = new Float32Array(bytes.length / 4);
      new Uint8Array(out.buffer).set(bytes);
      return out;
    }
    default: return v;
  }
}

// Every result cell as text, so nothing is rounded on the way (bigint,
// jsonb) and the conversions above see one form.
const rawTypes = { getTypeParser: () => (text) => text };

// ---------------------------------------------------------------------------
// Schemas, as the records say

function columnsOf(record) {
  return Object.entries(record.columns).map(([name, spec]) => ({ name, ...spec }));
}

function columnDdl(name, spec) {
  let sql = `${ident(name)} ${PG_TYPES[spec.type]}`;
  if (!spec.optional) sql += " NOT NULL";
  if ("default" in spec && spec.default !== null) {
    sql += ` DEFAULT ${literal(spec.type, spec.default)}`;
  }
  return sql;
}

// A SQL literal of a column type (only for DDL defaults: values travel as
// parameters everywhere else).
function literal(type, v) {
  const text = toParam(type, v);
  return `'${text.replace(/'/g, "''")}'::${PARAM_CASTS[type]}`;
}

function indexName(table, index) {
  return ident(`${table}#${index}`);
}

// The physical columns of an index: as declared, then the key columns it
// does not list (docs/formats.md, "Ops").
function indexColumns(record, cols) {
  return [...cols, ...record.key.filter((k) => !cols.includes(k))];
}

// ---------------------------------------------------------------------------
// The wire's where, set and order -> SQL with numbered parameters

// PostgreSQL's protocol numbers a statement's parameters in 16 bits: past
// this many, a statement's further values go into one array parameter per
// type, each value read back by its index. A where of any number of values
// (docs/api.md, "Big wheres") then binds at most this many plus a few.
const MAX_BOUND = 65000;

class Sql {
  constructor() {
    this.params = [];
    this.spill = new Map();  // cast -> { slot, values }
  }

  param(type, v) {
    const cast = PARAM_CASTS[type];
    if (this.params.length < MAX_BOUND) {
      this.params.push(toParam(type, v));
      return `$${this.params.length}::${cast}`;
    }
    let spill = this.spill.get(cast);
    if (spill === undefined) {
      spill = { slot: this.params.push([]), values: null };
      spill.values = this.params[spill.slot - 1];
      this.spill.set(cast, spill);
    }
    spill.values.push(toParam(type, v));
    return `($${spill.slot}::${cast}[])[${spill.values.length}]`;
  }
}

function typeName(v) {
  return v === null ? "null" : Array.isArray(v) ? "an array" : typeof v;
}

function tableColumn(record, name, what) {
  if (typeof name !== "string" || !(name in record.columns)) {
    throw invalidArgs(`${what}: table "${record.table}" has no column ${describe(name)}`);
  }
  return record.columns[name];
}

// Checks an operand against its column's type (never null: isNull is for that).
function operand(record, column, v, what) {
  const spec = tableColumn(record, column, what);
  const t = spec.type;
  const ok = v !== null && fitsType(t, v);
  if (t === "json") throw invalidArgs(`${what}: column "${column}" is a json column, which a where cannot compare`);
  if (t === "vector") throw invalidArgs(`${what}: column "${column}" is a vector column, which a where cannot use (search a vector with nearest)`);
  if (!ok) {
    throw invalidArgs(`${what}: column "${column}" is ${t}, got ${v === null ? "null (use isNull)" : `${typeName(v)} ${describe(v)}`}`);
  }
  return t === "num" && typeof v === "bigint" ? Number(v) : v;
}

// The least string above every string that starts with `p`, by code point
// (PrefixUpperBoundUtf8 in src/query/sql.cc); "" when there is none.
function prefixUpper(p) {
  const cps = [...p].map((c) => c.codePointAt(0));
  while (cps.length > 0) {
    let cp = cps.pop();
    if (cp >= 0x10ffff) continue;
    cp++;
    if (cp === 0xd800) cp = 0xe000;
    cps.push(cp);
    return String.fromCodePoint(...cps);
  }
  return "";
}

const COMPARISONS = { eq: "=", ne: "<>", lt: "<", lte: "<=", gt: ">", gte: ">=" };

/** A wire where (docs/formats.md, "Where") as SQL on `record`'s table. */
function whereSql(record, w, sql, what, depth = 0) {
  if (depth > 64) throw invalidArgs(`${what}: a where nests at most 64 levels`);
  if (w === null || typeof w !== "object" || Array.isArray(w) || Object.keys(w).length !== 1) {
    throw invalidArgs(`${what}: a where is an object of one operator such as {"eq":[col,v]}, got ${describe(w)}`);
  }
  const [op] = Object.keys(w);
  const a = w[op];
  if (op in COMPARISONS) {
    if (!Array.isArray(a) || a.length !== 2) throw invalidArgs(`${what}.${op}: expected [column, value], got ${describe(a)}`);
    const v = operand(record, a[0], a[1], `${what}.${op}`);
    const type = record.columns[a[0]].type;
    return `(${ident(a[0])} ${COMPARISONS[op]} ${sql.param(type, v)})`;
  }
  switch (op) {
    case "inArray": {
      if (!Array.isArray(a) || a.length !== 2 || !Array.isArray(a[1])) throw invalidArgs(`${what}.inArray: expected [column, [values]], got ${describe(a)}`);
      const values = a[1].map((v) => operand(record, a[0], v, `${what}.inArray`));
      if (values.length === 0) return "(FALSE)";
      const type = record.columns[a[0]].type;
      sql.params.push(values.map((v) => toParam(type, v)));
      return `(${ident(a[0])} = ANY($${sql.params.length}::${PARAM_CASTS[type]}[]))`;
    }
    case "isNull": {
      const t = tableColumn(record, a, `${what}.isNull`).type;
      if (t === "json" || t === "vector") {
        throw invalidArgs(`${what}.isNull: column "${a}" is a ${t} column, which a where cannot use`);
      }
      return `(${ident(a)} IS NULL)`;
    }
    case "prefix": {
      if (!Array.isArray(a) || a.length !== 2) throw invalidArgs(`${what}.prefix: expected [column, text], got ${describe(a)}`);
      const spec = tableColumn(record, a[0], `${what}.prefix`);
      if (spec.type !== "str") throw invalidArgs(`${what}.prefix: column "${a[0]}" is ${spec.type}, prefix takes a str column`);
      const p = operand(record, a[0], a[1], `${what}.prefix`);
      const c = ident(a[0]);
      const upper = prefixUpper(p);
      return upper === ""
        ? `(${c} >= ${sql.param("str", p)})`
        : `(${c} >= ${sql.param("str", p)} AND ${c} < ${sql.param("str", upper)})`;
    }
    case "and":
    case "or": {
      if (!Array.isArray(a)) throw invalidArgs(`${what}.${op}: expected a list of wheres, got ${describe(a)}`);
      if (a.length === 0) return op === "and" ? "(TRUE)" : "(FALSE)";
      return `(${joinedTerms(record, op, a, sql, what, depth).join(op === "and" ? " AND " : " OR ")})`;
    }
    case "not":
      return `(NOT ${whereSql(record, a, sql, `${what}.not`, depth + 1)})`;
    default:
      throw invalidArgs(`${what}: unknown where operator ${JSON.stringify(op)}`);
  }
}

// The terms of an and or an or as SQL. The equalities of an or on one
// column are one `= ANY(array)`, and the inequalities of an and one
// `<> ALL(array)`: the same rows (a NULL cell matches neither way), one
// parameter instead of one a value, and a plan PostgreSQL makes at once
// where 70,000 ORs took it half a minute.
function joinedTerms(record, op, terms, sql, what, depth) {
  const fold = op === "or" ? "eq" : "ne";
  const byColumn = new Map();  // column -> [index, value] of the terms folded
  terms.forEach((x, i) => {
    const c = foldable(record, x, fold);
    if (c === undefined) return;
    if (!byColumn.has(c)) byColumn.set(c, []);
    byColumn.get(c).push(i);
  });
  const out = [];
  const folded = new Set();
  for (const [c, at] of byColumn) {
    if (at.length < 2) continue;
    const type = record.columns[c].type;
    const values = at.map((i) => toParam(type, operand(record, c, terms[i][fold][1], `${what}.${op}[${i}].${fold}`)));
    sql.params.push(values);
    out.push(`(${ident(c)} ${fold === "eq" ? "= ANY" : "<> ALL"}($${sql.params.length}::${PARAM_CASTS[type]}[]))`);
    for (const i of at) folded.add(i);
  }
  terms.forEach((x, i) => {
    if (!folded.has(i)) out.push(whereSql(record, x, sql, `${what}.${op}[${i}]`, depth + 1));
  });
  return out;
}

// The column of `{ [fold]: [column, value] }` whose value can go into an
// array of the column's type: a str, int, bool or num column, a value not
// null; undefined for any other term.
function foldable(record, x, fold) {
  if (x === null || typeof x !== "object" || Array.isArray(x)) return undefined;
  const keys = Object.keys(x);
  if (keys.length !== 1 || keys[0] !== fold) return undefined;
  const a = x[fold];
  if (!Array.isArray(a) || a.length !== 2 || a[1] === null || typeof a[0] !== "string") return undefined;
  if (!Object.prototype.hasOwnProperty.call(record.columns, a[0])) return undefined;
  const t = record.columns[a[0]].type;
  return t === "str" || t === "int" || t === "bool" || t === "num" ? a[0] : undefined;
}

/** A set expression (docs/formats.md, "Set expressions") for column `target`. */
function exprSql(record, target, e, sql, what, depth = 0) {
  if (depth > 64) throw invalidArgs(`${what}: an expression nests at most 64 levels`);
  const type = record.columns[target].type;
  if (e === null || typeof e !== "object" || Array.isArray(e)) return sql.param(type, e);
  const keys = Object.keys(e);
  if (keys.length !== 1) throw invalidArgs(`${what}: an expression is an object of one operator, got ${describe(e)}`);
  const [op] = keys;
  const a = e[op];
  const sub = (x, i) => exprSql(record, target, x, sql, `${what}.${op}[${i}]`, depth + 1);
  const list = () => {
    if (!Array.isArray(a) || a.length === 0) throw invalidArgs(`${what}.${op}: expected a list of expressions, got ${describe(a)}`);
    return a.map(sub);
  };
  switch (op) {
    case "value": return a === null ? `NULL::${PARAM_CASTS[type]}` : sql.param(type, a);
    case "col": {
      const spec = tableColumn(record, a, `${what}.col`);
      if (spec.type !== type) throw invalidArgs(`${what}.col: column "${a}" is ${spec.type}, the target "${target}" is ${type}`);
      return ident(a);
    }
    case "add":
    case "sub": {
      if (type !== "int") throw invalidArgs(`${what}.${op}: arithmetic is for int columns, "${target}" is ${type}`);
      const [x, y] = list();
      return `(${x} ${op === "add" ? "+" : "-"} ${y})`;
    }
    case "max":
    case "min": {
      const args = list();
      // GREATEST and LEAST skip NULLs; a null argument gives null here.
      return `(CASE WHEN ${args.map((x) => `${x} IS NULL`).join(" OR ")} THEN NULL ELSE ${op === "max" ? "GREATEST" : "LEAST"}(${args.join(", ")}) END)`;
    }
    case "concat": return `(${list().join(" || ")})`;
    case "coalesce": return `COALESCE(${list().join(", ")})`;
    case "replacePrefix": {
      if (!Array.isArray(a) || typeof a[0] !== "string" || typeof a[1] !== "string") throw invalidArgs(`${what}.replacePrefix: expected [from, to], got ${describe(a)}`);
      const c = ident(target);
      const from = sql.param("str", a[0]);
      return `(CASE WHEN starts_with(${c}, ${from}) THEN ${sql.param("str", a[1])} || substr(${c}, length(${from}) + 1) ELSE ${c} END)`;
    }
    case "when": {
      if (!Array.isArray(a) || a.length !== 3) throw invalidArgs(`${what}.when: expected [where, a, b], got ${describe(a)}`);
      const w = whereSql(record, a[0], sql, `${what}.when`, depth + 1);
      return `(CASE WHEN ${w} THEN ${sub(a[1], 1)} ELSE ${sub(a[2], 2)} END)`;
    }
    default:
      throw invalidArgs(`${what}: unknown expression ${JSON.stringify(op)}`);
  }
}

function keyWhere(record, key, sql, what) {
  if (!Array.isArray(key) || key.length !== record.key.length) {
    throw invalidArgs(`${what}: a key of "${record.table}" lists ${record.key.length} value(s) (${record.key.join(", ")}), got ${describe(key)}`);
  }
  return record.key.map((c, i) => `${ident(c)} = ${sql.param(record.columns[c].type, operand(record, c, key[i], what))}`).join(" AND ");
}

// The total order of a query: the terms asked for, then the key columns not
// among them, in the direction of the last term asked for (src/query/query.h).
function effectiveOrder(record, orderBy, what) {
  const terms = [];
  for (const term of orderBy ?? []) {
    const [c, dir] = Array.isArray(term) ? term : [term, "asc"];
    const spec = tableColumn(record, c, `${what}.orderBy`);
    if (spec.type === "json" || spec.type === "vector") throw invalidArgs(`${what}.orderBy: column "${c}" is a ${spec.type} column, which cannot be ordered by`);
    if (dir !== "asc" && dir !== "desc") throw invalidArgs(`${what}.orderBy(${c}): the direction must be "asc" or "desc", got ${describe(dir)}`);
    if (!terms.some((t) => t.column === c)) terms.push({ column: c, desc: dir === "desc" });
  }
  const desc = terms.length > 0 ? terms[terms.length - 1].desc : false;
  for (const k of record.key) if (!terms.some((t) => t.column === k)) terms.push({ column: k, desc });
  return terms;
}

// NULLs first ascending, last descending: the core's order on every backend.
function orderSql(order) {
  return order.map((t) => `${ident(t.column)} ${t.desc ? "DESC NULLS LAST" : "ASC NULLS FIRST"}`).join(", ");
}

// The rows after a cursor's position (AppendAfterFrom in src/query/sql.cc).
function afterSql(record, order, pos, sql, i = 0) {
  const t = order[i];
  const c = ident(t.column);
  const type = record.columns[t.column].type;
  const v = pos[i];
  const last = i + 1 === order.length;
  const rest = () => afterSql(record, order, pos, sql, i + 1);
  if (!t.desc) {
    if (v === null) return last ? `(${c} IS NOT NULL)` : `(${c} IS NOT NULL OR (${c} IS NULL AND ${rest()}))`;
    const p = sql.param(type, v);
    return last ? `(${c} > ${p})` : `(${c} > ${p} OR (${c} = ${p} AND ${rest()}))`;
  }
  if (v === null) return last ? "(FALSE)" : `(${c} IS NULL AND ${rest()})`;
  const p = sql.param(type, v);
  return last ? `(${c} < ${p} OR ${c} IS NULL)` : `(${c} < ${p} OR ${c} IS NULL OR (${c} = ${p} AND ${rest()}))`;
}

// A cursor: the query's fingerprint and the order values of the last row,
// as base64url JSON (opaque to callers, like the core's).
function queryPrint(record, wire, order) {
  return createHash("sha256").update(encodeJson([record.table, wire.where ?? null, order], "query")).digest("hex").slice(0, 16);
}

function encodeCursor(print, values) {
  return Buffer.from(encodeJson([print, values], "cursor")).toString("base64url");
}

function decodeCursor(record, print, order, text, what) {
  const bad = () => new StoreError(ErrorCodes.InvalidCursor, `${what}: ${describe(text)} is not a cursor of this query (use the next of an earlier page of the same query)`);
  let parsed;
  try {
    parsed = parseJsonExact(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    throw bad();
  }
  if (!Array.isArray(parsed) || parsed[0] !== print || !Array.isArray(parsed[1]) || parsed[1].length !== order.length) throw bad();
  return parsed[1];
}

// ---------------------------------------------------------------------------
// Batches

function isSeq(v) {
  return (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) || (typeof v === "bigint" && v >= 0n && v < 2n ** 63n);
}

// The batch's shape, whole, before anything is applied (docs/formats.md,
// "Batches"); the same refusals as the core's Replica::ApplyBatch.
function checkBatch(batch) {
  if (batch === null || typeof batch !== "object" || Array.isArray(batch)) {
    throw invalidArgs(`applyBatch: a batch is {from, to, commits} as store.outbox.read gives it, got ${describe(batch)}`);
  }
  for (const k of Object.keys(batch)) if (k !== "from" && k !== "to" && k !== "commits") throw invalidArgs(`applyBatch: unknown batch field "${k}"`);
  if (!isSeq(batch.from)) throw invalidArgs(`applyBatch: from must be a seq (a safe integer >= 0), got ${describe(batch.from)}`);
  const from = Number(batch.from);
  if (!isSeq(batch.to) || Number(batch.to) < from) throw invalidArgs(`applyBatch: to must be a seq >= from (${from}), got ${describe(batch.to)}`);
  const to = Number(batch.to);
  if (!Array.isArray(batch.commits)) throw invalidArgs(`applyBatch: commits must be a list of records, got ${describe(batch.commits)}`);
  if (batch.commits.length !== to - from) throw invalidArgs(`applyBatch: a batch from ${from} to ${to} holds ${to - from} commits, this one ${batch.commits.length}`);
  batch.commits.forEach((rec, i) => {
    const where = `applyBatch: commits[${i}]`;
    if (rec === null || typeof rec !== "object" || Array.isArray(rec)) throw invalidArgs(`${where}: a record must be an object, got ${describe(rec)}`);
    for (const k of Object.keys(rec)) {
      if (!["seq", "from", "at", "owner", "actor", "ops"].includes(k)) throw invalidArgs(`${where}: unknown record field "${k}"`);
    }
    const seq = from + i + 1;
    if (!isSeq(rec.seq) || Number(rec.seq) !== seq) throw invalidArgs(`${where}.seq: expected ${seq} (the batch's seqs are contiguous), got ${describe(rec.seq)}`);
    if (!isSeq(rec.from) || Number(rec.from) !== seq - 1) throw invalidArgs(`${where}.from: expected ${seq - 1} (the previous seq), got ${describe(rec.from)}`);
    if (!(typeof rec.at === "number" && Number.isSafeInteger(rec.at)) && typeof rec.at !== "bigint") throw invalidArgs(`${where}.at: expected milliseconds since the epoch, got ${describe(rec.at)}`);
    if (typeof rec.owner !== "string") throw invalidArgs(`${where}.owner: expected the owner's name, got ${describe(rec.owner)}`);
    if (!Array.isArray(rec.ops)) throw invalidArgs(`${where}.ops: expected a list of ops, got ${describe(rec.ops)}`);
    rec.ops.forEach((op, k) => {
      if (op === null || typeof op !== "object" || typeof op.op !== "string") throw invalidArgs(`${where}.ops[${k}]: an op is an object with "op", got ${describe(op)}`);
      if ((op.op === "update" || op.op === "delete") && "where" in op && !isSeq(op.count)) {
        throw invalidArgs(`${where}.ops[${k}] on table "${op.table}": a bulk op in a record carries its count`);
      }
    });
  });
  return { from, to };
}

// A divergence: what the driver's store took and this replica cannot.
// A connection string pg reads as the server's address: postgres:// or
// postgresql:// with a host (or a socket folder as ?host=). Anything else
// ("not a url", "postgres//host") pg would take for a host name and fail
// on as a lookup (storage_failed, naming no option).
function postgresUrl(url) {
  let u;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  return (u.protocol === "postgres:" || u.protocol === "postgresql:") && (u.hostname !== "" || u.searchParams.has("host"));
}

class Diverged extends Error {}

// An error of this file's own code reading a record of another shape than
// formats.md's (a table record without its key, an index that is no list,
// a vector that is no base64 string): a malformed batch, which this mirror
// answers with sync/diverged (docs/api.md), not a failure of the server to
// retry for ever.
function isShapeError(e) {
  return e instanceof TypeError || e instanceof RangeError;
}

// PostgreSQL's refusals that mean the record does not fit this replica's
// data (a null, an overflow, an unknown column or table, a duplicate
// name), as opposed to a lost connection or a full disk.
function isDataRefusal(e) {
  // 42501 (insufficient privilege) is the server's setup, not the record:
  // put right, the same batch applies (storage_failed, retried).
  return typeof e?.code === "string" && /^(22|23|42)/.test(e.code) && e.code !== "42501";
}

// The table record after an alter or index op (docs/formats.md, "Schema changes").
function changedRecord(record, op) {
  const columns = { ...record.columns };
  let indexes = { ...(record.indexes ?? {}) };
  let key = [...record.key];
  if (op.op === "alter") {
    for (const c of op.drop ?? []) {
      if (!(c in columns)) throw new Diverged(`alter drops column "${c}", which table "${record.table}" does not have`);
      if (key.includes(c)) throw new Diverged(`alter drops the key column "${c}"`);
      delete columns[c];
      indexes = Object.fromEntries(Object.entries(indexes).filter(([, cols]) => !cols.includes(c)));
    }
    const rename = (c) => op.rename?.[c] ?? c;
    for (const c of Object.keys(op.rename ?? {})) if (!(c in columns)) throw new Diverged(`alter renames column "${c}", which table "${record.table}" does not have`);
    const renamed = {};
    for (const [c, spec] of Object.entries(columns)) renamed[rename(c)] = spec;
    key = key.map(rename);
    indexes = Object.fromEntries(Object.entries(indexes).map(([n, cols]) => [n, cols.map(rename)]));
    return { ...record, version: op.version, columns: { ...renamed, ...(op.add ?? {}) }, key, indexes };
  }
  for (const n of op.drop ?? []) {
    if (!(n in indexes)) throw new Diverged(`index drops "${n}", which table "${record.table}" does not have`);
    delete indexes[n];
  }
  return { ...record, version: op.version, indexes: { ...indexes, ...(op.create ?? {}) } };
}

// ---------------------------------------------------------------------------
// Documents: the core's own two tables (src/documents/documents.cc), kept
// row for row, and the current value of each document as jsonb

// The records of the core's document tables (DocumentsTable, DeltasTable).
const DOC_RECORDS = Object.freeze({
  _documents: {
    op: "table", table: "_documents", version: 1, key: ["id"], indexes: { address: ["owner", "kind", "key"] },
    columns: {
      id: { type: "int" }, owner: { type: "str" }, kind: { type: "str" }, key: { type: "str", optional: true },
      version: { type: "int" }, seq: { type: "int" }, retired: { type: "int", optional: true },
      base: { type: "int" }, deltas: { type: "int" }, bytes: { type: "int" },
    },
  },
  _deltas: {
    op: "table", table: "_deltas", version: 1, key: ["doc", "version"], indexes: {},
    columns: {
      doc: { type: "int" }, version: { type: "int" }, seq: { type: "int" }, at: { type: "int" },
      actor: { type: "json", optional: true }, op: { type: "str" }, patch: { type: "json", optional: true },
      value: { type: "json", optional: true }, base: { type: "int" },
    },
  },
});

// The checkpoint thresholds of a change whose record carries no base
// (docs/api.md, "checkpointWhen": the defaults).
const MAX_DELTAS = 50;
const MAX_DELTA_BYTES = 65536;

function pointerTokens(p, what) {
  if (typeof p !== "string" || (p !== "" && p[0] !== "/")) throw new Diverged(`${what}: ${describe(p)} is not a JSON pointer`);
  return p === "" ? [] : p.slice(1).split("/").map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function arrayIndex(token, length, end) {
  if (!/^(0|[1-9][0-9]*)$/.test(token)) return -1;
  const i = Number(token);
  return i < length || (end && i === length) ? i : -1;
}

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

// { value } at the tokens, or undefined when there is nothing there.
function resolvePointer(doc, tokens) {
  let cur = doc;
  for (const t of tokens) {
    if (Array.isArray(cur)) {
      const i = arrayIndex(t, cur.length, false);
      if (i < 0) return undefined;
      cur = cur[i];
    } else if (isObject(cur) && Object.hasOwn(cur, t)) {
      cur = cur[t];
    } else {
      return undefined;
    }
  }
  return { value: cur };
}

// JSON equality: objects by members in any order, numbers by value as
// their JSON text says it (as the core reads both from text): 2 equals 2n,
// and 2 ** 60, whose text is 1152921504606847000, equals that integer read
// back from jsonb as a BigInt.
function sameJson(a, b) {
  const num = (v) => typeof v === "number" || typeof v === "bigint";
  if (num(a) && num(b)) return typeof a === typeof b ? a === b : String(a) === String(b);
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]));
  }
  return a === b;
}

/**
 * Applies an RFC 6902 JSON Patch to `doc` (not changed) and returns the
 * result, as the core's ApplyJsonPatch does; a patch that does not apply
 * throws Diverged naming patch[i] (the driver's store applied it).
 */
function applyJsonPatch(doc, patch, what) {
  if (!Array.isArray(patch)) throw new Diverged(`${what}: ${describe(patch)} is not a JSON Patch (an array)`);
  let work = structuredClone(doc);
  const add = (tokens, value, fail) => {
    if (tokens.length === 0) {
      work = value;
      return;
    }
    const parent = resolvePointer(work, tokens.slice(0, -1));
    const last = tokens[tokens.length - 1];
    if (parent && Array.isArray(parent.value)) {
      const i = last === "-" ? parent.value.length : arrayIndex(last, parent.value.length, true);
      if (i < 0) fail("(not an index of its array)");
      parent.value.splice(i, 0, value);
    } else if (parent && isObject(parent.value)) {
      parent.value[last] = value;
    } else {
      fail("(no such parent)");
    }
  };
  const remove = (tokens) => {
    const parent = resolvePointer(work, tokens.slice(0, -1)).value;
    const last = tokens[tokens.length - 1];
    if (Array.isArray(parent)) parent.splice(arrayIndex(last, parent.length, false), 1);
    else delete parent[last];
  };
  patch.forEach((op, i) => {
    const w = `${what}.patch[${i}]`;
    if (!isObject(op) || typeof op.op !== "string") throw new Diverged(`${w}: ${describe(op)} is not a JSON Patch op`);
    const path = pointerTokens(op.path, `${w}.path`);
    const fail = (why) => { throw new Diverged(`${w}: the patch does not apply: ${op.op} at ${describe(op.path)} ${why}`); };
    switch (op.op) {
      case "test": {
        const target = resolvePointer(work, path);
        if (!target) fail("(no such path)");
        if (!sameJson(target.value, op.value)) fail(`failed: the value there is ${describe(target.value)}`);
        return;
      }
      case "remove":
        if (!resolvePointer(work, path)) fail("(no such path)");
        if (path.length === 0) fail("(the whole document cannot be removed)");
        remove(path);
        return;
      case "replace":
        if (!resolvePointer(work, path)) fail("(no such path)");
        if (path.length === 0) work = structuredClone(op.value);
        else {
          remove(path);
          add(path, structuredClone(op.value), fail);
        }
        return;
      case "add":
        if (!("value" in op)) fail("(no value)");
        add(path, structuredClone(op.value), fail);
        return;
      case "move":
      case "copy": {
        const from = pointerTokens(op.from, `${w}.from`);
        const source = resolvePointer(work, from);
        if (!source) fail(`(no such from ${describe(op.from)})`);
        const value = structuredClone(source.value);
        if (op.op === "move") {
          const prefix = from.length < path.length && from.every((t, k) => t === path[k]);
          if (from.length === 0 || prefix) fail("(a value cannot move into itself)");
          if (from.length === path.length && from.every((t, k) => t === path[k])) return;
          remove(from);
        }
        add(path, value, fail);
        return;
      }
      default:
        fail("(not a JSON Patch op: add, remove, replace, move, copy, test)");
    }
  });
  return work;
}

// ---------------------------------------------------------------------------
// The replica

const SESSION_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

let pgModule;
async function loadPg() {
  if (!pgModule) {
    try {
      pgModule = (await import("pg")).default;
    } catch (e) {
      throw invalidArgs(`openReplica: the postgres backend needs the npm package "pg" (an optional peer dependency: npm install pg): ${e.message}`);
    }
  }
  return pgModule;
}

/**
 * A diverged replica's answer to every batch, as the core's replicas word it
 * (src/sync/replica.cc, Replica::Diverged; js/replica.js).
 *
 * @example
 * throw replicaDiverged("at seq 4, ops[1] on table \"app/notes\": it affected 1 rows, the record says 2");
 */
function replicaDiverged(where) {
  return new StoreError(ErrorCodes.SyncDiverged, `applyBatch: the replica diverged (${where}) and takes no more batches: apply from 0 into a new one`);
}

/**
 * Opens a PostgreSQL mirror of one session: `{ backend: "postgres", url,
 * session?, pool? }`. `url` is a PostgreSQL connection string; `pool` a
 * pg.Pool to share among many sessions' replicas instead (closing the
 * replica leaves a shared pool open). `session` (default "default") names
 * the schema the session's tables live in.
 *
 * @example
 * const replica = await openPostgresReplica({ backend: "postgres", url: "postgres://localhost/app", session: "s1" });
 */
export async function openPostgresReplica(options) {
  // A misspelt session would mirror into the "default" schema, beside
  // another session's tables.
  refuseUnknownOptions(options, ["backend", "url", "session", "pool"], "openReplica");
  const { url, session = "default", pool: shared } = options;
  if (shared !== undefined) {
    if (shared === null || typeof shared !== "object" || typeof shared.connect !== "function" || typeof shared.query !== "function") {
      throw invalidArgs(`openReplica: pool must be a pg.Pool, got ${describe(shared)}`);
    }
    if (url !== undefined) throw invalidArgs("openReplica: give url or pool, not both (the replica would use the pool and ignore url)");
  }
  if (shared === undefined && (typeof url !== "string" || url === "" || !postgresUrl(url))) {
    throw invalidArgs(`openReplica: a postgres replica needs url (a PostgreSQL connection string such as "postgres://user@host/db") or pool, got ${describe(url)}`);
  }
  if (typeof session !== "string" || !SESSION_RE.test(session)) {
    throw invalidArgs(`openReplica: session must be 1 to 128 of A-Z a-z 0-9 _ . - starting with a letter or digit, got ${describe(session)}`);
  }
  // The session names the mirror's schema: PostgreSQL refuses a schema
  // named pg_..., and public and information_schema are schemas it has.
  if (session.startsWith("pg_") || session === "public" || session === "information_schema") {
    throw invalidArgs(`openReplica: session ${JSON.stringify(session)} cannot name the mirror's schema (PostgreSQL reserves names starting with pg_, and has public and information_schema of its own); mirror it under another session name`);
  }
  const pg = shared === undefined ? await loadPg() : null;
  const pool = shared ?? new pg.Pool({ connectionString: url, max: 2 });
  const own = shared === undefined;
  // PostgreSQL can end an idle connection at any time (a restart,
  // pg_terminate_backend, an idle timeout). pg then emits 'error' on the
  // pool, and an 'error' nobody listens to is thrown as an uncaught
  // exception that would end the user's process. The pool has already
  // dropped that client and connects a new one for the next query, so a
  // pool of our own listens and does nothing more. (A pool the caller gives
  // is the caller's to listen on, as pg's docs ask.)
  if (own) pool.on("error", () => {});
  const schema = ident(session);
  const q = (client, text, params) => client.query({ text, values: params, types: rawTypes });
  const storageFailed = (what, e) => (e instanceof StoreError ? e : new StoreError(ErrorCodes.StorageFailed, `${what}: PostgreSQL failed: ${e?.message ?? e}`));

  let records = new Map();  // stored name -> table record
  let head = 0;
  let diverged;
  let closed = false;
  let applying = Promise.resolve();

  try {
    const { client, release } = await checkout();
    try {
      await q(client, "BEGIN");
      // One schema per session: made once, with its own _meta and _tables.
      await q(client, "SELECT pg_advisory_xact_lock(hashtext($1))", [`onestore:${session}`]);
      await q(client, `CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await q(client, `CREATE TABLE IF NOT EXISTS ${schema}."_meta" (name text COLLATE "C" PRIMARY KEY, value text NOT NULL)`);
      await q(client, `CREATE TABLE IF NOT EXISTS ${schema}."_tables" (name text COLLATE "C" PRIMARY KEY, record text NOT NULL)`);
      await q(client, `INSERT INTO ${schema}."_meta" VALUES ('head', '0'), ('session', $1), ('format', '1') ON CONFLICT DO NOTHING`, [session]);
      const meta = await q(client, `SELECT name, value FROM ${schema}."_meta"`);
      for (const r of meta.rows) {
        if (r.name === "head") head = Number(r.value);
        if (r.name === "diverged") diverged = r.value;
      }
      const tables = await q(client, `SELECT name, record FROM ${schema}."_tables"`);
      for (const r of tables.rows) records.set(r.name, parseJsonExact(r.record));
      await q(client, "COMMIT");
    } catch (e) {
      await client.query("ROLLBACK").catch(() => {});
      throw e;
    } finally {
      release();
    }
  } catch (e) {
    if (own) await pool.end().catch(() => {});
    throw storageFailed("openReplica", e);
  }

  // A client checked out for a transaction. If PostgreSQL ends its
  // connection between two queries, pg emits 'error' on the client, which
  // is thrown as an uncaught exception if nothing listens; here the error
  // is kept, the transaction's next query fails (and reaches the caller as
  // storage_failed), and the client goes back to the pool as broken, so the
  // pool drops it instead of handing it out again.
  async function checkout() {
    const client = await pool.connect();
    let broken;
    const onError = (e) => { broken = e; };
    client.on("error", onError);
    return {
      client,
      release() {
        client.removeListener("error", onError);
        client.release(broken);
      },
    };
  }

  function checkOpen(what) {
    if (closed) throw new StoreError(ErrorCodes.Closed, `${what}: the replica is closed`);
  }

  function recordOf(name, what) {
    const record = records.get(name);
    if (!record) throw invalidArgs(`${what}: the replica holds no table ${JSON.stringify(name)} (yet); its tables come from the batches it applied`);
    return record;
  }

  // --- applying one op inside the batch's transaction ----------------------

  async function declare(client, op, declared) {
    const previous = declared.get(op.table) ?? records.get(op.table);
    const record = { op: "table", table: op.table, version: op.version, columns: op.columns, key: op.key, indexes: op.indexes ?? {} };
    const t = `${schema}.${ident(op.table)}`;
    if (!previous) {
      const cols = columnsOf(record).map((c) => columnDdl(c.name, c));
      cols.push(`PRIMARY KEY (${record.key.map(ident).join(", ")})`);
      await q(client, `CREATE TABLE ${t} (${cols.join(", ")})`);
      for (const [n, cols2] of Object.entries(record.indexes)) {
        await q(client, `CREATE INDEX ${indexName(op.table, n)} ON ${t} (${indexColumns(record, cols2).map(ident).join(", ")})`);
      }
    } else {
      if (previous.version > op.version) throw new Diverged(`the record declares version ${op.version}, older than the stored ${previous.version}`);
      // SameStoredColumns of src/backends/sqlite/sqlite_backend.cc: names, types, optional, key.
      const shape = (r) => encodeJson([Object.entries(r.columns).map(([n, c]) => [n, c.type, !!c.optional]), r.key], "shape");
      if (shape(previous) !== shape(op)) {
        throw new Diverged(`the record declares columns or a key other than the stored ones (a table's columns change by alter records)`);
      }
      await syncIndexes(client, previous, record);
      record.columns = previous.columns;
      record.key = previous.key;
    }
    return record;
  }

  async function syncIndexes(client, before, after) {
    const t = `${schema}.${ident(after.table)}`;
    const was = before.indexes ?? {};
    const now = after.indexes ?? {};
    for (const [n, cols] of Object.entries(was)) {
      if (JSON.stringify(now[n]) !== JSON.stringify(cols)) await q(client, `DROP INDEX IF EXISTS ${schema}.${indexName(after.table, n)}`);
    }
    for (const [n, cols] of Object.entries(now)) {
      if (JSON.stringify(was[n]) !== JSON.stringify(cols)) {
        await q(client, `CREATE INDEX ${indexName(after.table, n)} ON ${t} (${indexColumns(after, cols).map(ident).join(", ")})`);
      }
    }
  }

  async function alter(client, op, record) {
    const t = `${schema}.${ident(op.table)}`;
    if (op.op === "alter" ? !(op.version > record.version) : !(op.version >= record.version)) {
      throw new Diverged(`${op.op} to version ${op.version} is ${op.op === "alter" ? "not above" : "below"} the stored ${record.version}`);
    }
    const after = changedRecord(record, op);
    if (op.op === "alter") {
      // PostgreSQL drops an index with a column it covers; the others keep
      // their names (renames follow the columns).
      for (const c of op.drop ?? []) await q(client, `ALTER TABLE ${t} DROP COLUMN ${ident(c)}`);
      for (const [from, to] of Object.entries(op.rename ?? {})) await q(client, `ALTER TABLE ${t} RENAME COLUMN ${ident(from)} TO ${ident(to)}`);
      for (const [c, spec] of Object.entries(op.add ?? {})) {
        if (!spec.optional && !("default" in spec)) throw new Diverged(`alter adds column "${c}" with neither optional nor a default`);
        await q(client, `ALTER TABLE ${t} ADD COLUMN ${columnDdl(c, spec)}`);
      }
    } else {
      await syncIndexes(client, record, after);
    }
    return after;
  }

  // The document tables, made by the first batch with a document op (as
  // the core's EnsureDocumentTables), with `value`: the current value.
  let docTables = false;
  async function ensureDocTables(client) {
    if (docTables) return;
    const d = `${schema}."_documents"`;
    await q(client, `CREATE TABLE IF NOT EXISTS ${d} (${columnsOf(DOC_RECORDS._documents).map((c) => columnDdl(c.name, c)).join(", ")}, value jsonb, PRIMARY KEY (id))`);
    await q(client, `CREATE INDEX IF NOT EXISTS "_documents#address" ON ${d} (owner, kind, key, id)`);
    await q(client, `CREATE TABLE IF NOT EXISTS ${schema}."_deltas" (${columnsOf(DOC_RECORDS._deltas).map((c) => columnDdl(c.name, c)).join(", ")}, PRIMARY KEY (doc, version))`);
  }

  // One doc.create, doc.change or doc.retire (DocWriter::Apply in
  // src/documents/documents.cc): the _documents row, a _deltas row, the
  // current value. A document that is not where the record expects it, or
  // a patch that does not apply, is a divergence.
  async function applyDocOp(client, op, k, ctx) {
    const where = `ops[${k}] (${op.owner} document ${op.id})`;
    await ensureDocTables(client);
    const d = `${schema}."_documents"`;
    if (!(typeof op.version === "number" && Number.isSafeInteger(op.version) && op.version >= 1)) {
      throw new Diverged(`${where}: a document op in a record carries its version, got ${describe(op.version)}`);
    }
    const found = await q(client, `SELECT owner, kind, key, version, retired, base, deltas, bytes, value::text AS value FROM ${d} WHERE id = $1::bigint FOR UPDATE`, [String(op.id)]);
    const doc = found.rows[0];
    let value;
    let patch = null;
    let base = true;
    let row;
    if (op.op === "doc.create") {
      if (doc) throw new Diverged(`${where}: the document already exists`);
      const live = await q(client, `SELECT id FROM ${d} WHERE owner = $1 AND kind = $2 AND key IS NOT DISTINCT FROM $3 AND retired IS NULL LIMIT 1`, [op.owner, op.kind, op.key ?? null]);
      if (live.rows.length > 0) throw new Diverged(`${where}: its address already holds live document ${live.rows[0].id}`);
      if (op.version !== 1) throw new Diverged(`${where}.version: a new document's version is 1, not ${op.version}`);
      value = op.value;
      row = { owner: op.owner, kind: op.kind, key: op.key ?? null, version: 1, retired: null, base: 1, deltas: 0, bytes: 0 };
    } else {
      if (!doc || doc.owner !== op.owner || doc.retired !== null) throw new Diverged(`${where}: owner "${op.owner}" has no live document ${op.id}`);
      const version = Number(doc.version) + 1;
      if (op.version !== version) throw new Diverged(`${where}.version: the document is at version ${doc.version}, so this op makes version ${version}, not ${op.version}`);
      row = { owner: doc.owner, kind: doc.kind, key: doc.key, version, retired: null, base: Number(doc.base), deltas: Number(doc.deltas), bytes: Number(doc.bytes) };
      value = parseAsCore(doc.value);
      if (op.op === "doc.change") {
        value = applyJsonPatch(value, op.patch, where);
        patch = op.patch;
        const bytes = Buffer.byteLength(encodeJson(patch, "patch"));
        base = typeof op.base === "boolean" ? op.base : row.deltas + 1 > MAX_DELTAS || row.bytes + bytes > MAX_DELTA_BYTES;
        if (base) Object.assign(row, { base: version, deltas: 0, bytes: 0 });
        else Object.assign(row, { deltas: row.deltas + 1, bytes: row.bytes + bytes });
      } else if (op.op === "doc.retire") {
        base = false;
        row.retired = ctx.seq;
      } else {
        throw new Diverged(`${where}: unknown document op ${describe(op.op)}`);
      }
    }
    const sql = new Sql();
    const cols = ["id", "owner", "kind", "key", "version", "seq", "retired", "base", "deltas", "bytes"];
    const full = { id: op.id, ...row, seq: ctx.seq };
    const params = cols.map((c) => sql.param(DOC_RECORDS._documents.columns[c].type, full[c]));
    await q(client, `INSERT INTO ${d} (${cols.join(", ")}, value) VALUES (${params.join(", ")}, ${sql.param("json", value)}) ON CONFLICT (id) DO UPDATE SET `
      + `${cols.slice(1).map((c) => `${c} = EXCLUDED.${c}`).join(", ")}, value = EXCLUDED.value`, sql.params);
    const delta = {
      doc: op.id, version: row.version, seq: ctx.seq, at: ctx.at, actor: ctx.actor ?? null,
      op: op.op.slice(4), patch, value: base ? value : null, base: base ? 1 : 0,
    };
    await putRows(client, DOC_RECORDS._deltas, [delta]);
  }

  // The current value of documents whose rows a restore rewrote: their
  // latest base at or below their version, then the patches after it.
  async function recomputeDocs(client, ids) {
    for (const id of ids) {
      const doc = await q(client, `SELECT version FROM ${schema}."_documents" WHERE id = $1::bigint`, [String(id)]);
      if (doc.rows.length === 0) continue;
      const deltas = await q(client, `SELECT version, base, patch::text AS patch, value::text AS value FROM ${schema}."_deltas"
        WHERE doc = $1::bigint AND version <= $2::bigint AND version >= (SELECT max(version) FROM ${schema}."_deltas" WHERE doc = $1::bigint AND base = 1 AND version <= $2::bigint)
        ORDER BY version`, [String(id), doc.rows[0].version]);
      let value = null;
      for (const r of deltas.rows) {
        if (Number(r.base) === 1) value = parseAsCore(r.value);
        else if (r.patch !== null) value = applyJsonPatch(value, parseAsCore(r.patch), `document ${id}`);
      }
      await q(client, `UPDATE ${schema}."_documents" SET value = $2::jsonb WHERE id = $1::bigint`, [String(id), encodeJson(value, "value")]);
    }
  }

  async function applyOp(client, op, k, declared, ctx) {
    const where = `ops[${k}] on table "${op.table}"`;
    if (op.op === "restore") return;  // a restore's marker; its puts and deletes follow
    if (typeof op.op === "string" && op.op.startsWith("doc.")) return applyDocOp(client, op, k, ctx);
    if (op.op === "table") {
      declared.set(op.table, await declare(client, op, declared));
      return;
    }
    // Which seqs' document history a restore took back (the core's
    // _restores): for reads of documents at a past seq, which a mirror
    // does not serve; not content (the fingerprint leaves it out).
    if (op.table === "_restores") return;
    let record = declared.get(op.table) ?? records.get(op.table);
    if (op.table === "_documents" || op.table === "_deltas") {
      // A restore's rows of the document tables: rows like any other, then
      // the current values of the documents they touch.
      record = DOC_RECORDS[op.table];
      await ensureDocTables(client);
      const id = op.op === "put" ? op.row?.[op.table === "_documents" ? "id" : "doc"] : op.key?.[0];
      if (id !== undefined) ctx.docs.add(id);
    }
    if (!record) throw new Diverged(`${where}: the replica holds no such table`);
    if (op.op === "alter" || op.op === "index") {
      try {
        declared.set(op.table, await alter(client, op, record));
      } catch (e) {
        if (e instanceof Diverged) throw new Diverged(`${where}: ${e.message}`);
        throw e;
      }
      return;
    }
    const t = `${schema}.${ident(op.table)}`;
    const sql = new Sql();
    let text;
    if (op.op === "put") {
      if (op.row === null || typeof op.row !== "object") throw new Diverged(`${where}: a put carries its row, got ${describe(op.row)}`);
      for (const c of Object.keys(op.row)) if (!(c in record.columns)) throw new Diverged(`${where}: the row has column "${c}", which the table does not have`);
      // Consecutive puts into one table go as one INSERT (putRows).
      return { put: op.table, record, row: op.row };
    }
    const bulk = "where" in op;
    let filter;
    try {
      filter = bulk ? (op.where === null ? "TRUE" : whereSql(record, op.where, sql, "where")) : keyWhere(record, op.key, sql, "key");
    } catch (e) {
      throw new Diverged(`${where}: ${e.message}`);
    }
    if (op.op === "delete") {
      text = `DELETE FROM ${t} WHERE ${filter}`;
    } else if (op.op === "update") {
      const sets = [];
      try {
        for (const [c, e] of Object.entries(op.set ?? {})) {
          tableColumn(record, c, "set");
          if (record.key.includes(c)) throw invalidArgs(`set: key column "${c}" cannot be set`);
          sets.push(`${ident(c)} = ${exprSql(record, c, e, sql, `set.${c}`)}`);
        }
      } catch (e) {
        throw new Diverged(`${where}: ${e.message}`);
      }
      // An update that sets nothing still counts its rows.
      text = sets.length > 0 ? `UPDATE ${t} SET ${sets.join(", ")} WHERE ${filter}` : `SELECT 1 FROM ${t} WHERE ${filter}`;
    } else {
      throw new Diverged(`${where}: unknown op ${JSON.stringify(op.op)}`);
    }
    const result = await q(client, text, sql.params);
    const n = result.rowCount;
    if (bulk) {
      if (n !== Number(op.count)) throw new Diverged(`${where}: it affected ${n} rows, the record says ${op.count}`);
    } else if (op.op === "update" && n === 0) {
      throw new Diverged(`${where}: no row has the key ${encodeJson(op.key, "key")}`);
    } else if (op.count !== undefined && n !== Number(op.count)) {
      throw new Diverged(`${where}: it affected ${n} rows, the record says ${op.count}`);
    }
  }

  // One INSERT ... ON CONFLICT of whole rows (every column present: a
  // put's row), at most 500 rows of distinct keys.
  async function putRows(client, record, rows) {
    const t = `${schema}.${ident(record.table)}`;
    const cols = Object.keys(record.columns);
    const sql = new Sql();
    const tuples = rows.map((row) => `(${cols.map((c) => sql.param(record.columns[c].type, row[c] ?? null)).join(", ")})`);
    const others = cols.filter((c) => !record.key.includes(c));
    const text = `INSERT INTO ${t} (${cols.map(ident).join(", ")}) VALUES ${tuples.join(", ")} ON CONFLICT (${record.key.map(ident).join(", ")}) DO `
      + (others.length === 0 ? "NOTHING" : `UPDATE SET ${others.map((c) => `${ident(c)} = EXCLUDED.${ident(c)}`).join(", ")}`);
    await q(client, text, sql.params);
  }

  async function apply(text, batch) {
    const { from, to } = checkBatch(batch);
    if (diverged !== undefined) {
      throw replicaDiverged(diverged);
    }
    const { client, release } = await checkout().catch((e) => { throw storageFailed("applyBatch", e); });
    let seq = 0;
    let began = false;
    try {
      await q(client, "BEGIN");
      began = true;
      // The head row, locked: two appliers of one session take turns.
      const row = await q(client, `SELECT value FROM ${schema}."_meta" WHERE name = 'head' FOR UPDATE`);
      const current = Number(row.rows[0].value);
      if (current !== head) {
        // Another process applied batches to this session: its tables too.
        const tables = await q(client, `SELECT name, record FROM ${schema}."_tables"`);
        records = new Map(tables.rows.map((r) => [r.name, parseJsonExact(r.record)]));
        docTables = false;
      }
      head = current;
      if (to <= current) {
        await q(client, "ROLLBACK");
        began = false;
        return { head: current, applied: 0 };
      }
      if (from > current) {
        throw new StoreError(ErrorCodes.SyncGap, `applyBatch: the batch starts after seq ${from}, but the replica's head is ${current}; apply the commits after ${current} first`);
      }
      const declared = new Map();
      // Puts waiting to go as one statement: { table, record, rows (key -> row), seq, k }.
      let puts = null;
      const flush = async () => {
        if (puts === null) return;
        const p = puts;
        puts = null;
        try {
          await putRows(client, p.record, [...p.rows.values()]);
        } catch (e) {
          if (isDataRefusal(e)) throw new Diverged(`at seq ${p.seq}, ops[${p.k}] on table "${p.table}" (or a put after it into that table): PostgreSQL refused it: ${e.message}`);
          if (isShapeError(e)) throw new Diverged(`at seq ${p.seq}, ops[${p.k}] on table "${p.table}" (or a put after it into that table): a row is malformed (${e.message})`);
          throw e;
        }
      };
      for (let i = current - from; i < batch.commits.length; i++) {
        seq = from + i + 1;
        const rec = batch.commits[i];
        const ops = rec.ops;
        const ctx = { seq, at: rec.at, actor: rec.actor, docs: new Set() };
        for (let k = 0; k < ops.length; k++) {
          const op = ops[k];
          try {
            if (op.op !== "put" || puts?.table !== op.table) await flush();
            const put = await applyOp(client, op, k, declared, ctx);
            if (put) {
              puts ??= { table: put.put, record: put.record, rows: new Map(), seq, k };
              // A later put of the same key replaces the earlier one, as it would one statement later.
              const key = encodeJson(put.record.key.map((c) => put.row[c] ?? null), "key");
              puts.rows.delete(key);
              puts.rows.set(key, put.row);
              if (puts.rows.size >= 500) await flush();
            }
          } catch (e) {
            if (e instanceof Diverged) throw e.message.startsWith("at seq ") ? e : new Diverged(`at seq ${seq}, ${e.message}`);
            if (isDataRefusal(e)) throw new Diverged(`at seq ${seq}, ops[${k}] on table "${op.table}": PostgreSQL refused it: ${e.message}`);
            if (isShapeError(e)) throw new Diverged(`at seq ${seq}, ops[${k}] on table "${op.table}": the op is malformed (${e.message})`);
            throw e;
          }
        }
        if (ctx.docs.size > 0) {
          try {
            await flush();
            await recomputeDocs(client, ctx.docs);
          } catch (e) {
            if (e instanceof Diverged) throw e.message.startsWith("at seq ") ? e : new Diverged(`at seq ${seq}, ${e.message}`);
            throw e;
          }
        }
      }
      await flush();
      for (const [name, record] of declared) {
        await q(client, `INSERT INTO ${schema}."_tables" VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET record = EXCLUDED.record`, [name, encodeJson(record, "record")]);
      }
      await q(client, `UPDATE ${schema}."_meta" SET value = $1 WHERE name = 'head'`, [String(to)]);
      await q(client, "COMMIT");
      began = false;
      if (batch.commits.some((r) => r.ops.some((op) => typeof op.op === "string" && op.op.startsWith("doc.")))) docTables = true;
      for (const [name, record] of declared) records.set(name, record);
      head = to;
      return { head: to, applied: to - current };
    } catch (e) {
      if (began) await client.query("ROLLBACK").catch(() => {});
      if (e instanceof Diverged) {
        diverged = e.message;
        // Recorded in a transaction of its own, after the batch rolled back.
        await q(client, `INSERT INTO ${schema}."_meta" VALUES ('diverged', $1) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value`, [diverged]).catch(() => {});
        throw replicaDiverged(diverged);
      }
      if (e instanceof StoreError) throw e;
      throw storageFailed("applyBatch", e);
    } finally {
      release();
    }
  }

  // --- reads ---------------------------------------------------------------

  // nearest's distances, computed as the core computes them
  // (src/vectors/distance.cc) so that they are bit-identical: float32
  // products and sums (Math.fround after each, exact for float32 operands),
  // eight lane sums over the first n - n % 8 elements, folded (0+4, 1+5,
  // 2+6, 3+7, then pairwise), then the tail in order; the final steps in
  // double.
  const f32 = Math.fround;
  function dotSum(a, b) {
    const n = a.length;
    const n8 = n - (n % 8);
    const s = [0, 0, 0, 0, 0, 0, 0, 0];
    for (let i = 0; i < n8; i += 8) for (let j = 0; j < 8; j++) s[j] = f32(s[j] + f32(a[i + j] * b[i + j]));
    let sum = fold(s);
    for (let i = n8; i < n; i++) sum = f32(sum + f32(a[i] * b[i]));
    return sum;
  }
  function squaredDiffSum(a, b) {
    const n = a.length;
    const n8 = n - (n % 8);
    const s = [0, 0, 0, 0, 0, 0, 0, 0];
    for (let i = 0; i < n8; i += 8) {
      for (let j = 0; j < 8; j++) {
        const d = f32(a[i + j] - b[i + j]);
        s[j] = f32(s[j] + f32(d * d));
      }
    }
    let sum = fold(s);
    for (let i = n8; i < n; i++) {
      const d = f32(a[i] - b[i]);
      sum = f32(sum + f32(d * d));
    }
    return sum;
  }
  function fold(s) {
    const t0 = f32(s[0] + s[4]), t1 = f32(s[1] + s[5]), t2 = f32(s[2] + s[6]), t3 = f32(s[3] + s[7]);
    return f32(f32(t0 + t1) + f32(t2 + t3));
  }
  function distance(metric, q, qSelf, v) {
    if (metric === "dot") return 0 - dotSum(q, v);
    if (metric === "l2") return Math.sqrt(squaredDiffSum(q, v));
    const dot = dotSum(q, v);
    const vv = dotSum(v, v);
    if (!Number.isFinite(dot) || !Number.isFinite(vv) || !Number.isFinite(qSelf)) return NaN;
    if (qSelf === 0 || vv === 0) return 1;
    const d = 1 - dot / (Math.sqrt(qSelf) * Math.sqrt(vv));
    return d < 0 ? 0 : d > 2 ? 2 : d;
  }

  function queryWire(record, def, qq, what) {
    const qv = qq === undefined || qq === null ? makeQuery(def) : qq;
    if (!isQuery(qv)) throw invalidArgs(`${what}: expected a query such as query(${def.name}).where(...), got ${describe(qq)}`);
    if (qv.table !== def && qv.table.name !== def.name) {
      throw invalidArgs(`${what}: the query is over table ${JSON.stringify(qv.table.name)}, not ${JSON.stringify(def.name)}`);
    }
    return qv.toJSON();
  }

  function decodeRow(record, row) {
    const out = {};
    for (const c of columnsOf(record)) out[c.name] = fromPg(c.type, row[pgName(c.name)]);
    return out;
  }

  function selectList(record) {
    return columnsOf(record).map((c) => (c.type === "json" ? `${ident(c.name)}::text AS ${ident(c.name)}` : ident(c.name))).join(", ");
  }

  async function read(what, text, params) {
    checkOpen(what);
    try {
      return await q(pool, text, params);
    } catch (e) {
      throw storageFailed(what, e);
    }
  }

  function makeHandle(name) {
    const current = () => recordOf(name, `replica.table(${JSON.stringify(name)})`);
    const def = defOf(current());
    const t = `${schema}.${ident(name)}`;
    const handle = {
      name,
      def,
      query: () => makeQuery(def),
      async get(key) {
        const record = current();
        const sql = new Sql();
        const filter = keyWhere(record, Array.isArray(key) ? key : [key], sql, `${name}.get`);
        const r = await read(`${name}.get`, `SELECT ${selectList(record)} FROM ${t} WHERE ${filter}`, sql.params);
        return r.rows.length === 0 ? undefined : decodeRow(record, r.rows[0]);
      },
      async page(qq, limit, options) {
        const what = `${name}.page`;
        checkOpen(what);
        if (!Number.isSafeInteger(limit) || limit < 1) throw invalidArgs(`${what}: limit must be a positive integer, got ${describe(limit)}`);
        if (options !== undefined && (options === null || typeof options !== "object")) throw invalidArgs(`${what}: the last argument must be { after }, got ${describe(options)}`);
        refuseUnknownOptions(options, ["after"], what);
        const after = options?.after ?? "";
        if (typeof after !== "string") throw new StoreError(ErrorCodes.InvalidCursor, `${what}: ${describe(after)} is not a cursor (use the next of an earlier page)`);
        const record = current();
        const wire = queryWire(record, def, qq, what);
        const sql = new Sql();
        const filters = [];
        if (wire.where !== null && wire.where !== undefined) filters.push(whereSql(record, wire.where, sql, "where"));
        const order = effectiveOrder(record, wire.orderBy, what);
        const print = queryPrint(record, wire, order);
        if (after !== "") filters.push(afterSql(record, order, decodeCursor(record, print, order, after, what), sql));
        const text = `SELECT ${selectList(record)} FROM ${t}${filters.length ? ` WHERE ${filters.join(" AND ")}` : ""} ORDER BY ${orderSql(order)} LIMIT ${limit + 1}`;
        const r = await read(what, text, sql.params);
        const rows = r.rows.slice(0, limit).map((row) => decodeRow(record, row));
        const page = { rows };
        if (r.rows.length > limit) page.next = encodeCursor(print, order.map((o) => rows[rows.length - 1][o.column]));
        return page;
      },
      rows(qq) {
        return {
          async *[Symbol.asyncIterator]() {
            let after;
            for (;;) {
              const page = await handle.page(qq, 100, after === undefined ? undefined : { after });
              yield* page.rows;
              if (!page.next) return;
              after = page.next;
            }
          },
        };
      },
      /**
       * The k rows nearest `vector` in a vector column: [{ row, distance }],
       * nearest first, equal distances in key order, the same rows and the
       * same distances (bit for bit) as every other backend. The rows of the
       * where are read in key order and scored here, in JS (the mirror is a
       * server copy; a store or another replica keeps the search fast).
       * @example const hits = await mirror.table("notes/docs").nearest("embedding", queryVector, 10, { metric: "l2" });
       */
      async nearest(column, vector, k, options) {
        const what = `${name}.nearest`;
        checkOpen(what);
        const record = current();
        const ref = typeof column === "function" ? column(columnRefs(def)) : typeof column === "string" ? col(column) : column;
        if (!isCol(ref)) throw invalidArgs(`${what}: the first argument must be a vector column such as (e) => e.embedding, got ${describe(ref)}`);
        if (!Number.isSafeInteger(k) || k < 1 || k > 10000) throw invalidArgs(`${what}.k: ${describe(k)} is not an integer from 1 to 10000`);
        if (options !== undefined && (options === null || typeof options !== "object")) {
          throw invalidArgs(`${what}: the last argument must be { metric, where }, got ${describe(options)}`);
        }
        const { metric = "cosine", where } = options ?? {};
        refuseUnknownOptions(options, ["metric", "where"], what);
        const spec = tableColumn(record, ref.col, what);
        if (spec.type !== "vector") throw invalidArgs(`${what}: column "${ref.col}" is ${spec.type}; nearest searches a vector column`);
        if (vector === undefined || vector === null) throw invalidArgs(`${what}.vector: the query vector is missing (a vector of ${spec.dims} float32)`);
        if (metric !== "cosine" && metric !== "l2" && metric !== "dot") {
          throw invalidArgs(`${what}.metric: ${describe(metric)} is not a metric (use "cosine", "l2" or "dot")`);
        }
        const q = fromPg("vector", toParam("vector", vectorWire(vector, spec.dims, `${what}: the query vector`)));
        const qSelf = dotSum(q, q);
        const w = resolveWhere(def, where, what);
        const sql = new Sql();
        const filter = w === null || w === undefined ? "" : ` WHERE ${whereSql(record, w, sql, "where")}`;
        const keyOrder = orderSql(effectiveOrder(record, undefined, what));
        const r = await read(what, `SELECT ${selectList(record)} FROM ${t}${filter} ORDER BY ${keyOrder}`, sql.params);
        const hits = [];
        for (const row of r.rows) {
          const cell = row[pgName(ref.col)];
          if (cell === null) continue;
          const v = fromPg("vector", cell);
          if (v.length !== spec.dims) continue;
          const d = distance(metric, q, qSelf, v);
          if (Number.isFinite(d)) hits.push({ row, distance: d });
        }
        // Stable: equal distances keep the key order of the SELECT.
        hits.sort((a, b) => a.distance - b.distance);
        return hits.slice(0, k).map((h) => ({ row: decodeRow(record, h.row), distance: h.distance }));
      },
      /**
       * The edges of a node in a table made by defineEdges, one page:
       * { rows, next? }, in the order and with the cursors of a store's
       * links.neighbours (one or two page reads, merged).
       * @example const { rows, next } = await mirror.table("notes/links").neighbours("a", { kind: "cites" });
       */
      neighbours(node, options) {
        checkOpen(`${name}.neighbours`);
        return neighboursWith({ name, def }, node, options, async () => {}, (qq, limit) => handle.page(qq, limit));
      },
      async count(qq) {
        const what = `${name}.count`;
        checkOpen(what);
        const record = current();
        const wire = queryWire(record, def, qq, what);
        const sql = new Sql();
        const filter = wire.where === null || wire.where === undefined ? "" : ` WHERE ${whereSql(record, wire.where, sql, "where")}`;
        const r = await read(what, `SELECT count(*) AS n FROM ${t}${filter}`, sql.params);
        return Number(r.rows[0].n);
      },
    };
    return Object.freeze(handle);
  }

  const handles = new Map();
  const replica = {
    /** The session this replica mirrors (its PostgreSQL schema). */
    get id() {
      return session;
    },
    /** The PostgreSQL schema of the session's tables (quoted if needed). */
    get schema() {
      return pgName(session);
    },
    /** The seq of the last applied commit (0 for a new replica). */
    get head() {
      return head;
    },
    /** Why the replica stopped applying batches, or undefined. */
    get diverged() {
      return diverged;
    },
    /**
     * Applies one batch (an object of store.outbox.read, or its JSON text)
     * in one PostgreSQL transaction with the new head: the same checks and
     * answers as every replica's applyBatch.
     */
    applyBatch(batch) {
      // Asked for before close(): applied (close waits for it), as the
      // core's replicas do; after it, closed.
      const open = !closed;
      const run = async () => {
        if (!open) checkOpen("replica.applyBatch");
        // A diverged replica answers every batch, a malformed one too, with
        // sync/diverged (as the core's replicas do).
        if (diverged !== undefined) {
          throw replicaDiverged(diverged);
        }
        const text = typeof batch === "string" ? batch : encodeJson(batch, "batch");
        let parsed;
        try {
          parsed = parseAsCore(text);
        } catch {
          throw invalidArgs(`applyBatch: the batch is not valid JSON: ${text.slice(0, 60)}`);
        }
        return apply(text, parsed);
      };
      const next = applying.then(run, run);
      applying = next.catch(() => {});
      return next;
    },
    /** A reader of a stored table, by its stored name. */
    table(name) {
      checkOpen("replica.table");
      if (typeof name !== "string" || name === "") throw invalidArgs(`replica.table: expected a stored table name such as "notes/items", got ${describe(name)}`);
      const record = recordOf(name, "replica.table");
      const known = handles.get(name);
      if (known && known.record === record) return known.handle;
      const handle = makeHandle(name);
      handles.set(name, { record, handle });
      return handle;
    },
    /** The stored names of the replica's tables, in byte order. */
    tables() {
      checkOpen("replica.tables");
      return [...records.keys()].sort((a, b) => (Buffer.compare(Buffer.from(a), Buffer.from(b))));
    },
    /** Refused: a replica has no owners. */
    object() {
      throw invalidArgs("replica.object: a replica takes no owner writes; it changes only by replica.applyBatch(batch)");
    },
    /** Refused: a replica takes no owner writes. */
    async commit() {
      throw invalidArgs("replica.commit: a replica takes no owner writes; it changes only by replica.applyBatch(batch)");
    },
    /** Closes the replica (and its pool, unless the pool was given). */
    async close() {
      if (closed) return;
      closed = true;
      await applying;
      if (own) await pool.end().catch(() => {});
    },
    [Symbol.asyncDispose]() {
      return replica.close();
    },
  };
  return Object.freeze(replica);
}
