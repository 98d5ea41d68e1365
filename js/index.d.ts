// Types of the onestore package. Hand-written; kept true by the type-check
// of tests/types/ (run by tests/js/types.test.js). Needs TypeScript 5.4 or
// later (NoInfer).
//
// A table's row types come from its definition:
//   RowOf<typeof Edits>     what reads return (optional columns may be null)
//   InsertOf<typeof Edits>  what tx.put takes (optional and default columns may be left out)
//   KeyOf<typeof Edits>     a key: a tuple of the key columns, or a bare value for a one-column key

// ---------------------------------------------------------------- columns

/** The column types of defineTable. */
export type ColumnType = "str" | "int" | "bool" | "num" | "json" | "vector";
/** The column types a where or orderBy can use (json cannot). */
export type ScalarType = "str" | "int" | "bool" | "num";
/** The column types a key or an index can use. */
export type KeyType = "str" | "int";

declare const readType: unique symbol;

/**
 * A column of a table: made by str(), int(), bool(), num() or json().
 * `TRead` is what a read returns for it (before null).
 */
export interface Column<
  TType extends ColumnType = ColumnType,
  TRead = unknown,
  TOptional extends boolean = boolean,
  THasDefault extends boolean = boolean,
> {
  readonly type: TType;
  readonly isOptional: TOptional;
  readonly hasDefault: THasDefault;
  readonly default: TRead | undefined;
  /** @internal the value type carried for inference */
  readonly [readType]?: TRead;
  /**
   * The same column, allowing null (and leaving it out of a put).
   * @example defineTable("t", { columns: { id: str(), note: str().optional() }, key: ["id"] })
   */
  optional(): Column<TType, TRead, true, THasDefault>;
}

/** Any column. */
export type AnyColumn = Column<ColumnType, unknown, boolean, boolean>;
/** The columns of a table: a flat record. */
export type Columns = Record<string, AnyColumn>;

/** What a write of this column type takes (before null). */
export type WriteTypeOf<TType extends ColumnType, TRead> = TType extends "int"
  ? number | bigint
  : TType extends "str"
    ? (string extends TRead ? string : TRead)  // narrower only for an edges kind
    : TType extends "bool"
      ? boolean
      : TType extends "num"
        ? number
        : TType extends "vector"
          ? Float32Array | readonly number[]
          : NonNullable<TRead>;  // json: null only in an optional column, as any type

/**
 * A text column (UTF-8 without NUL; a lone surrogate is stored as U+FFFD).
 * @example const T = defineTable("t", { columns: { id: str(), path: str({ default: "" }) }, key: ["id"] });
 */
export function str(): Column<"str", string, false, false>;
export function str(options: { default: string }): Column<"str", string, false, true>;

/**
 * A 64-bit integer column. Writes take safe integers or BigInts; a read
 * returns a number, or a BigInt beyond 2^53. Narrow the read type with
 * `int<number>()` when your values stay below 2^53.
 * @example const T = defineTable("t", { columns: { id: int<number>(), at: int({ default: 0 }) }, key: ["id"] });
 */
export function int<T extends number | bigint = number | bigint>(): Column<"int", T, false, false>;
export function int<T extends number | bigint = number | bigint>(options: { default: NoInfer<T> }): Column<"int", T, false, true>;

/**
 * A boolean column.
 * @example const T = defineTable("t", { columns: { id: str(), done: bool({ default: false }) }, key: ["id"] });
 */
export function bool(): Column<"bool", boolean, false, false>;
export function bool(options: { default: boolean }): Column<"bool", boolean, false, true>;

/**
 * A finite number column.
 * @example const T = defineTable("t", { columns: { id: str(), score: num() }, key: ["id"] });
 */
export function num(): Column<"num", number, false, false>;
export function num(options: { default: number }): Column<"num", number, false, true>;

/**
 * A vector column: `dims` float32 (1 to 16384), written from a Float32Array
 * or an array of numbers, read back as a Float32Array; searched with
 * `handle.nearest`. Never in a key, index, where or orderBy.
 * @example const Docs = defineTable("docs", { columns: { id: str(), embedding: vector(384) }, key: ["id"] });
 */
export function vector(dims: number): Column<"vector", Float32Array, false, false>;
export function vector(dims: number, options: { default: Float32Array | readonly number[] }): Column<"vector", Float32Array, false, true>;
/**
 * A JSON column: any JSON value, typed `T` when read; never in a where, an
 * orderBy, a key or an index. Null is a value of an optional column only
 * (`json().optional()`), as in every column.
 * @example const T = defineTable("t", { columns: { id: str(), meta: json<{ lines: number }>() }, key: ["id"] });
 */
export function json<T = unknown>(): Column<"json", T, false, false>;
export function json<T = unknown>(options: { default: NoInfer<NonNullable<T>> }): Column<"json", T, false, true>;
/**
 * A versioned json column: values carry their version; an older one is given
 * to `migrate(old, from)` when read, a newer one reads as schema/newer.
 * @example const Meta = json<{ title: string; tags: string[] }>({ version: 2, migrate: (old: any, from) => ({ title: old.name, tags: [] }) });
 */
export function json<T = unknown>(options: { version: 1 }): Column<"json", T, false, false>;
export function json<T = unknown>(options: { version: 1; default: NoInfer<NonNullable<T>> }): Column<"json", T, false, true>;
export function json<T = unknown>(options: { version: number; migrate: (old: unknown, from: number) => T }): Column<"json", T, false, false>;
export function json<T = unknown>(options: { version: number; migrate: (old: unknown, from: number) => T; default: NoInfer<NonNullable<T>> }): Column<"json", T, false, true>;

// ---------------------------------------------------------------- tables

/** The names of the columns of `C` whose type is in `TTypes`. */
export type NamesOfType<C extends Columns, TTypes extends ColumnType> = {
  [K in keyof C]: C[K]["type"] extends TTypes ? K : never;
}[keyof C] &
  string;

/** The names of the columns a key can hold: str or int, and not optional. */
export type KeyNames<C extends Columns> = {
  [K in keyof C]: C[K]["type"] extends KeyType ? (C[K]["isOptional"] extends true ? never : K) : never;
}[keyof C] &
  string;

/**
 * One column change of a table (a migration's `alter`): drop, then rename,
 * then add. An added column needs a default or `.optional()`.
 * @example const step: Alter = { rename: { path: "file" }, add: { size: int({ default: 0 }) } };
 */
export interface Alter {
  drop?: readonly string[] | undefined;
  rename?: Readonly<Record<string, string>> | undefined;
  add?: Readonly<Record<string, Column>> | undefined;
}

/**
 * The step that makes one version of a table (keyed by that version in
 * `migrations`).
 * @example const migrations = { 2: { alter: { drop: ["meta"] } } };
 */
export interface Migration {
  alter?: Alter | undefined;
  /** One update of every row: column -> value or expression (as tx.updateWhere's set). */
  update?: Readonly<Record<string, unknown>> | undefined;
  /** Every row, in this version's shape -> the columns to change (all in one commit). */
  rows?: ((row: Record<string, any>) => Record<string, unknown>) | undefined;
}

/** What onProgress gets after each page of an eager migration's rows. */
export interface MigrationProgress {
  table: string;
  version: number;
  done: number;
  total: number;
}

/** A table definition, made by defineTable. */
export interface TableDef<
  TName extends string = string,
  C extends Columns = Columns,
  K extends readonly string[] = readonly string[],
> {
  readonly name: TName;
  readonly version: number;
  readonly columns: C;
  readonly key: K;
  readonly indexes: Readonly<Record<string, readonly string[]>>;
  readonly migrations: Readonly<Record<number, Migration>>;
}
/** Any table definition. */
export type AnyTableDef = TableDef<string, any, readonly string[]>;

/**
 * Defines a table: a flat record of at most 100 columns, a key of str or int
 * columns, and indexes over str or int columns (recorded as declared; each
 * ends with the key in storage). Names are plain: no "/", ":" or '"', no
 * leading "_" or "sqlite_", at most 128 bytes, none differing from another
 * only in letter case (checked when an owner opens the table).
 * @example
 * const Edits = defineTable("edits", {
 *   version: 2,
 *   columns: { id: str(), path: str(), entry: int(), at: int(), meta: json<EditMeta>() },
 *   key: ["id"],
 *   indexes: { byPath: ["path", "at"], byEntry: ["entry"] },
 * });
 */
export function defineTable<
  const TName extends string,
  C extends Columns,
  const K extends readonly [KeyNames<C>, ...KeyNames<C>[]],
>(
  name: TName,
  spec: {
    version?: number | undefined;
    columns: C;
    key: K;
    indexes?: Readonly<Record<string, readonly NamesOfType<C, KeyType>[]>> | undefined;
    /** How an older stored table becomes this version: { 2: { alter }, 3: { alter } }. */
    migrations?: Record<number, Migration> | undefined;
  },
): TableDef<TName, C, K>;

type Simplify<T> = { [K in keyof T]: T[K] } & {};
type ColumnsOf<D> = D extends TableDef<any, infer C, any> ? C : never;
type ReadOf<Col> = Col extends Column<any, infer R, infer O, any> ? (O extends true ? R | null : R) : never;
type WriteOf<Col> = Col extends Column<infer T, infer R, infer O, any>
  ? WriteTypeOf<T, R> | (O extends true ? null : never)
  : never;
type OperandOf<Col> = Col extends Column<infer T, infer R, any, any> ? WriteTypeOf<T, R> : never;
type RequiredNames<C> = { [K in keyof C]: C[K] extends Column<any, any, false, false> ? K : never }[keyof C];

/**
 * A row as reads return it.
 * @example type Edit = RowOf<typeof Edits>;   // { id: string; path: string; ...; meta: EditMeta }
 */
export type RowOf<D extends AnyTableDef> = Simplify<{ [K in keyof ColumnsOf<D>]: ReadOf<ColumnsOf<D>[K]> }>;

/**
 * A row as tx.put takes it: optional columns and columns with a default may
 * be left out.
 * @example const row: InsertOf<typeof Edits> = { id: "e1", path: "a", entry: 1, at: 1, meta: {} };
 */
export type InsertOf<D extends AnyTableDef> = Simplify<
  { [K in RequiredNames<ColumnsOf<D>>]: WriteOf<ColumnsOf<D>[K]> } & {
    [K in Exclude<keyof ColumnsOf<D>, RequiredNames<ColumnsOf<D>>>]?: WriteOf<ColumnsOf<D>[K]> | undefined;
  }
>;

type KeyTuple<C, K> = { -readonly [I in keyof K]: K[I] extends keyof C ? OperandOf<C[K[I]]> : never };
/**
 * A key: the key columns' values in key order; a one-column key may also be
 * given bare.
 * @example await edits.get(["e1"]); await edits.get("e1");
 */
export type KeyOf<D extends AnyTableDef> = D extends TableDef<any, infer C, infer K>
  ? KeyTuple<C, K> | (K extends readonly [infer Only] ? (Only extends keyof C ? OperandOf<C[Only]> : never) : never)
  : never;

/** The columns of a row a set may write: every column but the key. */
type SettableNames<D> = D extends TableDef<any, infer C, infer K> ? Exclude<keyof C, K[number]> : never;

/**
 * The set of an update: column → value or expression.
 * @example const s: SetOf<typeof Edits> = { at: add(col("at"), 1), path: "b/x.ts" };
 */
export type SetOf<D extends AnyTableDef> = {
  [K in SettableNames<D>]?: WriteOf<ColumnsOf<D>[K]> | Expr<WriteOf<ColumnsOf<D>[K]>>;
};

// ---------------------------------------------------------------- expressions

declare const exprValue: unique symbol;
declare const colType: unique symbol;
declare const predicateBrand: unique symbol;

/** A set expression whose value has type T. */
export interface Expr<T = unknown> {
  /** @internal */
  readonly [exprValue]?: T;
}
/** A value or an expression of it: a plain value means value(v). */
export type Operand<T> = T | Expr<T>;

/**
 * A column reference: `e.path` in a where, `col("path")` anywhere.
 */
export interface ColRef<TName extends string = string, T = unknown, TType extends ColumnType = ColumnType> extends Expr<T> {
  readonly col: TName;
  /** @internal */
  readonly [colType]?: TType;
}

/** The column references of a table, the `e` of where and orderBy. */
export type Refs<D extends AnyTableDef> = {
  readonly [K in keyof ColumnsOf<D> & string]: ColRef<K, OperandOf<ColumnsOf<D>[K]>, ColumnsOf<D>[K]["type"]>;
};

/** A where predicate. */
export interface Predicate {
  /** @internal */
  readonly [predicateBrand]: true;
}

/**
 * A column reference by name (untyped: prefer `e.at` in a where).
 * @example await tx.update(edits, ["e1"], { at: add(col("at"), 1) });
 */
export function col<TName extends string>(name: TName): ColRef<TName, any, any>;
/**
 * A literal; a plain value in a set means the same.
 * @example await tx.update(edits, ["e1"], { meta: value({ a: 1 }) });
 */
export function value<T>(v: T): Expr<T>;
/**
 * a + b for ints; overflow is an error, not a float.
 * @example { at: add(col("at"), 1) }
 */
export function add(a: Operand<number | bigint>, b: Operand<number | bigint>): Expr<number | bigint>;
/**
 * a - b for ints; overflow is an error.
 * @example { n: sub(col("n"), 1) }
 */
export function sub(a: Operand<number | bigint>, b: Operand<number | bigint>): Expr<number | bigint>;
/**
 * The largest argument (text by code point); null if one is null.
 * @example { at: max(col("at"), now) }
 */
export function max<T>(...args: Operand<T>[]): Expr<T>;
/**
 * The smallest argument; null if one is null.
 * @example { first: min(col("first"), at) }
 */
export function min<T>(...args: Operand<T>[]): Expr<T>;
/**
 * Text concatenation; null if one is null.
 * @example { path: concat("archive/", col("path")) }
 */
export function concat(...args: Operand<string>[]): Expr<string>;
/**
 * Replaces the prefix `from` of the column being set by `to`.
 * @example await tx.updateWhere(edits, (e) => prefix(e.path, "a/"), { path: replacePrefix("a/", "b/") });
 */
export function replacePrefix(from: string, to: string): Expr<string>;
/**
 * The first non-null argument.
 * @example { title: coalesce(col("title"), "untitled") }
 */
export function coalesce<T>(...args: Operand<T | null>[]): Expr<T>;
/**
 * `a` where the predicate holds, else `b`.
 * @example { size: when(gte(col("n"), 10), "big", col("size")) }
 */
export function when<A, B>(pred: Predicate, a: Operand<A>, b: Operand<B>): Expr<A | B>;

// ---------------------------------------------------------------- predicates and queries

/** A column that a where may compare (not json). */
type ScalarRef<T> = ColRef<string, T, ScalarType>;

/**
 * column = value (null never matches: use isNull).
 * @example query(Edits).where((e) => eq(e.path, "src/app.ts"))
 */
export function eq<T>(column: ScalarRef<T>, v: NoInfer<T>): Predicate;
/** column <> value. @example query(Edits).where((e) => ne(e.path, "x")) */
export function ne<T>(column: ScalarRef<T>, v: NoInfer<T>): Predicate;
/** column < value. @example query(Edits).where((e) => lt(e.at, 10)) */
export function lt<T>(column: ScalarRef<T>, v: NoInfer<T>): Predicate;
/** column <= value. @example query(Edits).where((e) => lte(e.at, 10)) */
export function lte<T>(column: ScalarRef<T>, v: NoInfer<T>): Predicate;
/** column > value. @example query(Edits).where((e) => gt(e.at, 10)) */
export function gt<T>(column: ScalarRef<T>, v: NoInfer<T>): Predicate;
/** column >= value. @example query(Edits).where((e) => and(gte(e.at, from), lt(e.at, to))) */
export function gte<T>(column: ScalarRef<T>, v: NoInfer<T>): Predicate;
/** column is one of the values. @example query(Edits).where((e) => inArray(e.entry, [812, 813])) */
export function inArray<T>(column: ScalarRef<T>, values: readonly NoInfer<T>[]): Predicate;
/** column is null. @example query(Items).where((e) => isNull(e.note)) */
export function isNull(column: ColRef<string, any, ScalarType>): Predicate;
/** A str column starts with `p`. @example query(Edits).where((e) => prefix(e.path, "a/")) */
export function prefix(column: ColRef<string, string, "str">, p: string): Predicate;
/** Every predicate holds; undefined ones are skipped. @example and(eq(e.a, 1), maybe) */
export function and(...preds: (Predicate | undefined)[]): Predicate;
/** One predicate holds; undefined ones are skipped. @example or(eq(e.path, "a"), eq(e.path, "b")) */
export function or(...preds: (Predicate | undefined)[]): Predicate;
/** The predicate does not hold. @example not(prefix(e.path, "tmp/")) */
export function not(pred: Predicate): Predicate;

/** A where: a function of the column references, a predicate, or undefined (every row). */
export type Where<D extends AnyTableDef> = ((e: Refs<D>) => Predicate | undefined) | Predicate | undefined;
/**
 * The where of updateWhere and deleteWhere: a callback must return a
 * predicate (one that returns nothing is refused with invalid/args, never
 * taken for every row); no where at all (undefined or null) means every row.
 */
export type BulkWhere<D extends AnyTableDef> = ((e: Refs<D>) => Predicate) | Predicate | null | undefined;

/** An immutable query over table D. */
export interface Query<D extends AnyTableDef> {
  readonly table: D;
  /**
   * A new query that also requires the predicate (several wheres are and-ed).
   * @example query(Edits).where((e) => eq(e.path, "a"))
   */
  where(w: Where<D>): Query<D>;
  /**
   * A new query also ordered by a column ("asc" by default); the key ends every order.
   * @example query(Edits).orderBy((e) => e.at, "desc")
   */
  orderBy(
    column: ((e: Refs<D>) => ColRef<string, any, ScalarType>) | NamesOfType<ColumnsOf<D>, ScalarType>,
    direction?: "asc" | "desc",
  ): Query<D>;
  /** The wire form. */
  toJSON(): { where: unknown; orderBy: readonly (readonly [string, "asc" | "desc"])[] };
}

/**
 * A query over a table, every row in key order until narrowed.
 * @example const recent = query(Edits).where((e) => eq(e.path, "src/app.ts")).orderBy((e) => e.at, "desc");
 */
export function query<D extends AnyTableDef>(def: D): Query<D>;

// ---------------------------------------------------------------- the store

/** Who did it: recorded with each commit. */
export interface Actor {
  kind: string;
  id: string;
  /** On whose behalf: another actor. */
  for?: Actor | undefined;
  /** Through what (a tool, a channel): any JSON value. */
  via?: unknown;
}
/** The context, always the last argument. */
export interface Context {
  actor?: Actor | undefined;
  /** The app's own fields travel with it (a link hands them to the worker's method). */
  [field: string]: unknown;
}

/** Open options. */
export type OpenOptions = BackendOpenOptions & SnapshotOpenOptions & VectorCacheOpenOptions;

/** openReplica's options (and a relay's `open`): openStore's but for the snapshot ones, which a replica refuses. */
export type ReplicaOpenOptions = BackendOpenOptions & VectorCacheOpenOptions & { keepSnapshots?: never; snapshotEvery?: never };

/** Each backend's own open options. */
export type BackendOpenOptions =
  | { backend: "memory"; id?: string | undefined }
  | {
      backend: "sqlite";
      /** A file (its folder is created) or ":memory:"; no NUL character. */
      path: string;
      id?: string | undefined;
      durability?: "full" | "relaxed" | undefined;
      /** ms the open waits for another process to hand the file over (default 10000). */
      lockTimeout?: number | undefined;
      /** Open a SQLite database of another application (tables, but no store's) and add the store's tables to it; default false: refused with invalid/args. */
      adoptForeign?: boolean | undefined;
      /** Node files: called once, with the `fenced` StoreError, when another opener (another process, or another store of this one) takes the file over. */
      onFenced?: ((error: StoreError) => void) | undefined;
    }
  | OpfsOpenOptions
  | DurableOpenOptions;

/**
 * How many bytes `nearest` may keep of vector columns in the core, so that a
 * SQLite store searches without reading every row (docs/architecture.md,
 * "The vector cache"); 0 turns it off. Default: 256 MiB for a sqlite file and
 * opfs, 32 MiB for durable, 0 for memory.
 */
export interface VectorCacheOpenOptions {
  vectorCache?: number | undefined;
}

/** What the vector cache holds: `store.vectorCache()`. */
export interface VectorCacheInfo {
  /** The most bytes it may hold (openStore's `vectorCache`). */
  budget: number;
  /** The bytes it holds now (vectors and keys). */
  bytes: number;
  /** How many columns it has built since the store opened. */
  builds: number;
}

/** The snapshot options of openStore (docs/api.md, "Snapshots and restore"). */
export interface SnapshotOpenOptions {
  /** How many snapshots to keep (integer >= 1, default 10). */
  keepSnapshots?: number | undefined;
  /** A snapshot after every commit whose seq is a multiple of K (default 0: never). */
  snapshotEvery?: number | undefined;
}

/**
 * Browsers only, in a dedicated Worker: SQLite in OPFS under `name`.
 * Opening takes the store over (its Web Lock, stolen from any other owner,
 * which is fenced); `lockTimeout` bounds the wait for the fenced owner's file
 * handles; `onFenced` is called once if another owner takes this one over
 * after the open resolved (a take-over during the open rejects it with
 * `fenced` instead).
 */
export interface OpfsOpenOptions {
  backend: "opfs";
  name: string;
  id?: string | undefined;
  durability?: "full" | "relaxed" | undefined;
  lockTimeout?: number | undefined;
  /** Open a SQLite database of another application (tables, but no store's) and add the store's tables to it; default false: refused with invalid/args. */
  adoptForeign?: boolean | undefined;
  onFenced?: ((error: StoreError) => void) | undefined;
}

/**
 * A store in a Cloudflare Durable Object's own SQLite (the package's workerd
 * root): every table, the outbox and `_meta` through `storage.sql.exec`, each
 * commit inside `storage.transactionSync`.
 */
export interface DurableOpenOptions {
  backend: "durable";
  /** `ctx.storage` of a Durable Object whose class has SQLite (`new_sqlite_classes`). */
  storage: DurableObjectStorageLike;
  id?: string | undefined;
}

/** The part of a Durable Object's `ctx.storage` the durable backend uses. */
export interface DurableObjectStorageLike {
  sql: { exec(query: string, ...bindings: unknown[]): unknown };
  transactionSync<T>(fn: () => T): T;
}

/** An object address: its host kind ("session" by default) and type. */
export interface ObjectAddress {
  host?: string | undefined;
  type: string;
}

/** A page of rows: pass `next` as `after` for the following page. */
/**
 * A page of rows. `next`, the cursor of the following page, is absent on the
 * last; a page whose rows hold more than about 8 MiB of text stops there with
 * fewer rows than its limit, so follow `next`, not the count.
 */
export interface Page<R> {
  rows: R[];
  next?: string | undefined;
}

/** An op in the wire format (outbox records, store.commit). */
export type WireOp =
  | { op: "put"; table: string; row: Record<string, unknown> }
  | { op: "update"; table: string; key: unknown[]; set: Record<string, unknown> }
  | { op: "delete"; table: string; key: unknown[] }
  | { op: "update"; table: string; where: unknown; set: Record<string, unknown>; count?: number }
  | { op: "delete"; table: string; where: unknown; count?: number }
  | { op: "table"; table: string; version: number; columns: Record<string, unknown>; key: string[]; indexes?: Record<string, string[]> }
  | { op: "alter"; table: string; version: number; drop?: string[]; rename?: Record<string, string>; add?: Record<string, unknown> }
  | { op: "index"; table: string; version: number; drop?: string[]; create?: Record<string, string[]> }
  | { op: "doc.create"; owner: string; id: number; kind: string; key?: string; value: unknown; version?: number }
  | { op: "doc.change"; owner: string; id: number; patch: JsonPatchOp[]; base?: boolean; version?: number; checkpointWhen?: CheckpointWhen }
  | { op: "doc.retire"; owner: string; id: number; version?: number }
  | { op: "restore"; snapshot: string; seq: number; undo: string };

/** One commit's outbox record. */
export interface OutboxRecord {
  seq: number;
  from: number;
  at: number;
  owner: string;
  actor?: Actor | undefined;
  ops: WireOp[];
}
/** A batch of the outbox. */
export interface OutboxBatch {
  from: number;
  to: number;
  commits: OutboxRecord[];
}

/** A table handle: the table of one owner, with its runners (committed state). */
export interface TableHandle<D extends AnyTableDef = AnyTableDef> {
  /** The full name: "<owner>/<table>". */
  readonly name: string;
  readonly def: D;
  readonly owner: Owner;
  /**
   * The row with this key, or undefined. A key whose JSON is longer than
   * any key can be (above 6 MiB a key column) rejects with `invalid/args`.
   * @example const e1 = await edits.get(["e1"], ctx);
   */
  get(key: KeyOf<D>, ctx?: Context): Promise<RowOf<D> | undefined>;
  /** @example const { rows, next } = await edits.page(q, 20, ctx, { after: cursor }); */
  page(q: Query<D> | undefined, limit: number, ctx?: Context, options?: { after?: string | undefined }): Promise<Page<RowOf<D>>>;
  /** @example for await (const row of edits.rows(q, ctx)) use(row); */
  rows(q?: Query<D>, ctx?: Context): AsyncIterable<RowOf<D>>;
  /** @example const n = await edits.count(q, ctx); */
  count(q?: Query<D>, ctx?: Context): Promise<number>;
  /**
   * The k rows whose vector column is nearest `vector`, nearest first, ties
   * by key (docs/guide.md, "Search by meaning").
   * @example const hits = await docs.nearest((e) => e.embedding, q, 10, { metric: "cosine", where: (e) => eq(e.kind, "message") });
   */
  nearest(
    column: ((e: Refs<D>) => ColRef<string, any, "vector">) | VectorNames<D>,
    vector: Float32Array | readonly number[],
    k: number,
    options?: NearestOptions<D>,
  ): Promise<Array<NearestHit<RowOf<D>>>>;
}
/** The names of a table's vector columns (nearest takes one by name too). */
type VectorNames<D> = D extends TableDef<any, infer C, any> ? NamesOfType<C, "vector"> : string;

/** The metric of nearest: cosine distance (1 - cos), Euclidean distance, or the negated dot product. */
export type Metric = "cosine" | "l2" | "dot";
/** The options of nearest. */
export interface NearestOptions<D extends AnyTableDef = AnyTableDef> {
  /** Default "cosine". */
  metric?: Metric | undefined;
  /** Narrows the rows searched. */
  where?: Where<D> | undefined;
}
/** One hit of nearest: the row and its distance (smaller is nearer). */
export interface NearestHit<R> {
  row: R;
  distance: number;
}

// ---------------------------------------------------------------- edges

/** The columns of an edges table: from, to, kind (one of K), then the data columns. */
export type EdgeColumns<K extends string, C extends Columns> = {
  from: Column<"str", string, false, false>;
  to: Column<"str", string, false, false>;
  kind: Column<"str", K, false, false>;
} & C;

/** A table definition made by defineEdges: key (from, kind, to), index byTo (to, kind, from). */
export interface EdgesDef<TName extends string = string, K extends string = string, C extends Columns = Columns>
  extends TableDef<TName, EdgeColumns<K, C>, readonly ["from", "kind", "to"]> {
  readonly edges: { readonly kinds: readonly K[] };
}
/** Any edges definition. */
export type AnyEdgesDef = EdgesDef<string, string, any>;

/**
 * Defines a table of edges between nodes (document or row ids as text):
 * from, to and kind, with `data`'s columns after them. One edge per
 * (from, kind, to); a write of a kind not in `kinds` is invalid/args.
 * @example const Links = defineEdges("links", { kinds: ["cites", "replies"], data: { at: int({ default: 0 }) } });
 */
export function defineEdges<const TName extends string, const K extends string, C extends Columns = {}>(
  name: TName,
  spec: {
    kinds: readonly [K, ...K[]];
    data?: C | undefined;
    version?: number | undefined;
    migrations?: Record<number, Migration> | undefined;
  },
): EdgesDef<TName, K, C>;

/** Which edges of a node: from it ("out"), to it ("in") or both. */
export type EdgeDirection = "out" | "in" | "both";

/** The options of neighbours. */
export interface NeighboursOptions<K extends string = string> {
  /** Only edges of this kind. */
  kind?: K | undefined;
  /** Default "out". */
  direction?: EdgeDirection | undefined;
  /** Default 100, at most 100000. */
  limit?: number | undefined;
  /** The next of an earlier page of the same node, direction and kind. */
  after?: string | undefined;
}

/** The handle of an edges table: the usual reads, and neighbours. */
export interface EdgesHandle<D extends AnyEdgesDef = AnyEdgesDef> extends TableHandle<D> {
  /**
   * One page of a node's edges. out: by kind, then to; in: by kind, then
   * from; both: by kind, then the other node, out before in (a self-loop once).
   * @example const { rows, next } = await links.neighbours("a", { kind: "cites", direction: "out", limit: 20 });
   */
  neighbours(node: string, options?: NeighboursOptions<D extends EdgesDef<any, infer K, any> ? K : string>): Promise<Page<RowOf<D>>>;
}

/** A table argument of tx and read methods: a handle, or (in tx) the owner's definition. */
type TableArg = TableHandle<any> | AnyTableDef;
type DefOf<T> = T extends TableHandle<infer D> ? D : T extends AnyTableDef ? T : never;
/** What tx.mintId gives for a table: its single key column's read type. */
type MintOf<D> = D extends TableDef<any, infer C, infer K>
  ? K extends readonly [infer Only]
    ? (Only extends keyof C ? (C[Only] extends Column<"int", any, any, any> ? Exclude<ReadOf<C[Only]>, null> : never) : never)
    : never
  : number | bigint;

/** A document's address inside its owner: one live document per address. */
export interface DocAddress {
  kind: string;
  key?: string | undefined;
}

/** One RFC 6902 JSON Patch op. */
export type JsonPatchOp =
  | { op: "add" | "replace" | "test"; path: string; value: unknown }
  | { op: "remove"; path: string }
  | { op: "move" | "copy"; from: string; path: string };

/** When an owner writes a new base: once the deltas since the last one pass either threshold. */
export interface CheckpointWhen {
  /** Default 50: loading reads one base and at most this many deltas. */
  deltas?: number | undefined;
  /** Default 65536: the bytes of the patches since the last base. */
  bytes?: number | undefined;
}

/** A document as find, load and list give it. */
export interface DocRecord<T = unknown> {
  id: number;
  address: DocAddress;
  version: number;
  /** The seq of its last change (at or before `at`, when given). */
  seq: number;
  value: T;
}

/** One version of a document (documents.versions). */
export interface DocVersion {
  version: number;
  seq: number;
  /** The commit's time (ms since the epoch). */
  at: number;
  op: "create" | "change" | "retire";
  actor?: Actor | undefined;
}

/** tx.documents: the owner's document writes, in the transaction's commit. */
export interface TxDocuments {
  /** A new document; a second live one at the address fails the commit (invalid/args). @example const id = await tx.documents.create({ kind: "note", key: "n1" }, { title: "Plan" }); */
  create(address: DocAddress, value: unknown): Promise<number>;
  /** RFC 6902; a patch that does not apply fails the commit (invalid/args). @example await tx.documents.change(id, [{ op: "replace", path: "/title", value: "Plan v2" }]); */
  change(id: number, patch: readonly JsonPatchOp[]): Promise<void>;
  /** @example await tx.documents.retire(id); */
  retire(id: number): Promise<void>;
}

/** owner.documents: reads of committed documents. */
export interface OwnerDocuments {
  /** @example const doc = await notes.documents.find({ kind: "note", key: "n1" }); */
  find<T = unknown>(address: DocAddress, options?: { at?: number | undefined }): Promise<DocRecord<T> | undefined>;
  /** As it was at seq `at`; not_found when the deltas it needs are not retained. @example const old = await notes.documents.load(id, { at: 57 }); */
  load<T = unknown>(id: number, options?: { at?: number | undefined }): Promise<DocRecord<T> | undefined>;
  /** Live documents by kind then key. @example const { rows, next } = await notes.documents.list({ kind: "note" }, 50, { after }); */
  list<T = unknown>(filter?: { kind?: string | undefined }, limit?: number, options?: { after?: string | undefined }): Promise<Page<DocRecord<T>>>;
  /** @example const history = await notes.documents.versions(id); */
  versions(id: number): Promise<DocVersion[]>;
}

/**
 * A transaction of one owner: writes are buffered and committed together at the end.
 * Valid inside the transaction's callback only. Call its methods on it
 * (`tx.put(...)`): a method taken off it has no transaction and throws invalid/args.
 */
export interface Tx {
  /** @example await tx.put(edits, { id: "e1", path: "a/x.ts", entry: 812, at: 1, meta: {} }); */
  put<T extends TableArg>(table: T, row: InsertOf<DefOf<T>>): Promise<void>;
  /** @example await tx.update(edits, ["e1"], { at: add(col("at"), 1) }); */
  update<T extends TableArg>(table: T, key: KeyOf<DefOf<T>>, set: SetOf<DefOf<T>>): Promise<void>;
  /** @example await tx.delete(edits, ["e1"]); */
  delete<T extends TableArg>(table: T, key: KeyOf<DefOf<T>>): Promise<void>;
  /** @example await tx.updateWhere(edits, (e) => prefix(e.path, "a/"), { path: replacePrefix("a/", "b/") }); */
  updateWhere<T extends TableArg>(table: T, where: BulkWhere<DefOf<T>>, set: SetOf<DefOf<T>>): Promise<void>;
  /** @example await tx.deleteWhere(edits, (e) => lt(e.at, 10)); */
  deleteWhere<T extends TableArg>(table: T, where?: BulkWhere<DefOf<T>>): Promise<void>;
  /**
   * Deletes a node's edges (a table made by defineEdges): direction "both" by
   * default, of one kind when given. One delete-where op in the outbox.
   * @example await tx.deleteEdges(links, "a", { direction: "both" });
   */
  deleteEdges<T extends EdgesHandle<any> | AnyEdgesDef>(
    table: T,
    node: string,
    options?: { direction?: EdgeDirection | undefined; kind?: DefOf<T> extends EdgesDef<any, infer K, any> ? K : string },
  ): Promise<void>;
  /** Sees this transaction's own writes; read_after_bulk after a bulk op on the table. @example await tx.get(edits, ["e2"]) */
  get<T extends TableArg>(table: T, key: KeyOf<DefOf<T>>): Promise<RowOf<DefOf<T>> | undefined>;
  /** Committed state. @example await tx.page(edits, q, 100) */
  page<T extends TableArg>(table: T, q: Query<DefOf<T>> | undefined, limit: number, options?: { after?: string | undefined }): Promise<Page<RowOf<DefOf<T>>>>;
  /** Committed state. @example for await (const row of tx.rows(edits, q)) ... */
  rows<T extends TableArg>(table: T, q?: Query<DefOf<T>>): AsyncIterable<RowOf<DefOf<T>>>;
  /** Committed state. @example await tx.count(edits, q) */
  count<T extends TableArg>(table: T, q?: Query<DefOf<T>>): Promise<number>;
  /**
   * An id above every stored and minted id of an int-keyed table, and every
   * id this transaction has put in it: a number,
   * or beyond 2^53 a BigInt (typed as the key column reads, so an
   * `int<number>()` key gives `number`). Past 2^63−1 it throws `limit`.
   * @example const id = tx.mintId(tasks);
   */
  mintId<T extends TableArg>(table: [MintOf<DefOf<T>>] extends [never] ? never : T): MintOf<DefOf<T>>;
  /** The owner's documents: create, change, retire. */
  readonly documents: TxDocuments;
}

/** The hooks of an owner. */
export interface OwnerHooks {
  /**
   * Runs inside each of the owner's commit steps, after the commit is durable,
   * with the commit's ops as its outbox record holds them (defaults filled in,
   * bulk counts, table records). Treat them as read-only: watches and links
   * get the same objects.
   */
  adopt?(seq: number, ops: readonly WireOp[]): void;
  /** When this owner's documents get a new base (default { deltas: 50, bytes: 65536 }). */
  checkpointWhen?: CheckpointWhen | undefined;
}

/** The owner of an object address: its tables and its line of transactions. */
export interface Owner {
  /** "<type>", or "<host>:<type>" for a host kind other than "session". */
  readonly name: string;
  readonly address: Readonly<Required<ObjectAddress>>;
  /**
   * Opens a table; an older stored version is migrated first, in one commit
   * (onProgress: after each page of an eager migration's rows).
   * @example const edits = fileHistory.table(Edits, { onProgress: (p) => console.log(p.done, p.total) });
   */
  table<D extends AnyEdgesDef>(def: D, options?: { onProgress?: (progress: MigrationProgress) => void }): EdgesHandle<D>;
  table<D extends AnyTableDef>(def: D, options?: { onProgress?: (progress: MigrationProgress) => void }): TableHandle<D>;
  /**
   * Runs fn on the owner's line; resolves to its value after the commit and adoption.
   * All or nothing: a write refused inside fn fails the whole tx, even if
   * fn caught it. Never await a tx of the same owner inside fn (it waits
   * for this one until close(), which rejects both with `closed`).
   * @example await fileHistory.tx(async (tx) => { await tx.put(edits, row); }, ctx);
   */
  tx<R>(fn: (tx: Tx) => Promise<R> | R, ctx?: Context): Promise<R>;
  /** After each commit that touched the table, in seq order. See "watches, derives and links". @example const off = fileHistory.watch(edits, (ops, seq) => log(seq)); */
  watch(table: TableHandle<any> | AnyTableDef, listener: WatchListener): Unsubscribe;
  /** The owner's documents (committed state). */
  readonly documents: OwnerDocuments;
}

/** The reader of store.read: runners taking a table handle first. */
export interface Reader {
  /**
   * The row with this key, or undefined.
   * @example const row = await store.read((r) => r.get(edits, ["e1"]));
   */
  get<D extends AnyTableDef>(table: TableHandle<D>, key: KeyOf<D>): Promise<RowOf<D> | undefined>;
  /**
   * One page of a query (every row in key order without one): `rows`, and
   * `next` (the `after` of the next page) when more may follow.
   * @example const { rows, next } = await store.read((r) => r.page(edits, query(Edits), 20, { after }));
   */
  page<D extends AnyTableDef>(table: TableHandle<D>, q: Query<D> | undefined, limit: number, options?: { after?: string | undefined }): Promise<Page<RowOf<D>>>;
  /**
   * Every row of a query, read page by page as it is iterated.
   * @example for await (const row of r.rows(edits)) total += row.size;
   */
  rows<D extends AnyTableDef>(table: TableHandle<D>, q?: Query<D>): AsyncIterable<RowOf<D>>;
  /**
   * The number of rows of a query (every row without one).
   * @example const n = await store.read((r) => r.count(edits));
   */
  count<D extends AnyTableDef>(table: TableHandle<D>, q?: Query<D>): Promise<number>;
}

/** The outbox: one record per commit. */
export interface Outbox {
  /**
   * The records after `after`, oldest first: at most `limit`, and fewer once
   * they hold about 8 MiB (one at least); read on from `batch.to`.
   * @example const batch = await store.outbox.read(0, 100);
   */
  read(after?: number, limit?: number): Promise<OutboxBatch>;
  /** @example await store.outbox.trim(batch.to); */
  trim(upTo: number): Promise<number>;
}

/** What blobs.list resolves to: hashes in order; `next` when more may follow. */
export interface BlobPage {
  hashes: string[];
  /** The `after` of the next page; absent on the last page. */
  next?: string | undefined;
}

/**
 * A replica's blobs: read them, and store those that arrive with their hash.
 * A hash is 64 lowercase hex digits (sha256).
 */
export interface BlobReader {
  /** The bytes of a blob (a new Uint8Array), or undefined. @example const bytes = await store.blobs.get(hash); */
  get(hash: string): Promise<Uint8Array | undefined>;
  /** @example if (!(await store.blobs.has(hash))) await upload(hash); */
  has(hash: string): Promise<boolean>;
  /** Hashes in order after `after`, at most `limit` (default 1000, at most 10000). @example const { hashes, next } = await store.blobs.list({ limit: 100 }); */
  list(options?: { after?: string | undefined; limit?: number | undefined }): Promise<BlobPage>;
  /**
   * Stores bytes under `hash`; rejects with invalid/args when their sha256
   * differs. Resolves to the hash once the blob is durable.
   * @example await replica.blobs.putWithHash(hash, bytes);
   */
  putWithHash(hash: string, bytes: Uint8Array | ArrayBuffer): Promise<string>;
}

/** The largest blob, in bytes (64 MiB); store.blobs.put refuses more with `limit`. */
export const MAX_BLOB_BYTES: number;

/** A store's blobs: bytes named by their sha256, kept for the session. */
export interface Blobs extends BlobReader {
  /**
   * Stores bytes (at most 64 MiB; more: `limit`) and resolves to their
   * sha256 (hex) once they are durable, so a commit that names the hash may
   * follow. A put of a blob already stored is a no-op.
   * @example const hash = await store.blobs.put(new TextEncoder().encode("hello"));
   */
  put(bytes: Uint8Array | ArrayBuffer): Promise<string>;
}

/** A store: one seq, one outbox, one commit queue. */
export interface Store {
  /** The session id. */
  readonly id: string;
  /** The last committed seq. */
  readonly head: number;
  /**
   * The session this store split off when its sync lost the lease
   * (`{ id, seq }`: the original session and the last seq both share), or
   * null. @example if (store.origin) console.log(`split off ${store.origin.id} at ${store.origin.seq}`);
   */
  readonly origin: SessionOrigin | null;
  /** @example const fileHistory = store.object({ host: "session", type: "file-history" }); */
  object(address: ObjectAddress, hooks?: OwnerHooks): Owner;
  /**
   * The low-level commit seam; adopt runs inside the step. An empty `writes`
   * takes no seq: it resolves to the head and adopt is not called.
   * @example const seq = await store.commit(ops, (seq) => { view.seq = seq; }, ctx);
   */
  commit(writes: readonly WireOp[], adopt?: (seq: number) => void, ctx?: Context): Promise<number>;
  /** @example const n = await store.read(async (r) => r.count(edits)); */
  read<R>(fn: (r: Reader) => Promise<R> | R): Promise<R>;
  /** A value computed synchronously from committed tables. See "watches, derives and links". @example const count = store.derive("count", (read) => read.count(notes)); */
  derive<T>(name: string, fn: (read: DeriveReader) => NotPromise<T>): Derive<T>;
  readonly outbox: Outbox;
  /** Bytes named by their sha256 (docs/api.md "Blobs"). @example const hash = await store.blobs.put(bytes); */
  readonly blobs: Blobs;
  /**
   * A short digest ("f1-" and 32 hex digits; "f2-" once the store holds a
   * blob) of the content at the head: every table's schema and rows,
   * documents, blob hashes; not the head or the outbox. Equal content gives
   * equal fingerprints on every backend, replicas included.
   * @example const fp = await store.fingerprint();
   */
  fingerprint(): Promise<string>;
  /**
   * What nearest keeps of vector columns in the core (docs/architecture.md,
   * "The vector cache"). Synchronous.
   * @example const { bytes } = store.vectorCache();
   */
  vectorCache(): VectorCacheInfo;
  /**
   * What one commit changed: its outbox record (ops, owner, actor, time).
   * Rejects with not_found when the commit was trimmed or is beyond the head.
   * @example const { ops, actor, at } = await store.log({ seq: 42 });
   */
  log(request: { seq: number }): Promise<OutboxRecord>;
  /**
   * One page of the retained commits that match, oldest first; pass `next`
   * as `after` for the following page (a page may be short and still have a
   * next: one call reads at most 4096 records).
   * @example const { commits, next } = await store.log({ owner: "notes", actor: { id: "ana" }, limit: 20 });
   */
  log(request?: LogFilter): Promise<LogPage>;
  /**
   * A read view of the whole store as it was at `seq`, rebuilt in memory
   * from the retained outbox (its cost: the commits 1..seq). Rejects with
   * not_found when records it needs were trimmed. Close it to free it.
   * @example const view = await store.at(12); const n = await view.table(items).count(); await view.close();
   */
  at(seq: number): Promise<StoreView>;
  /**
   * The store as one POSIX tar archive at its current head (docs/formats.md,
   * "Archive"): every table (of every owner, opened here or not), the
   * documents, the retained outbox, every blob and a manifest. The commit
   * queue is held until the stream was read to its end or cancelled: read it
   * promptly. Every backend (a Durable Object: `new Response(store.export())`).
   * @example await exportToFile(store, "session.tar"); // Node; or: new Response(store.export())
   */
  export(options?: ExportOptions): ByteStream;
  /**
   * A snapshot of the content at the current head, kept beside the store
   * (memory: in the core; a sqlite file: `<file>.snapshots/`; opfs: the
   * store's OPFS folder `snapshots/`; durable: copies of the tables inside
   * the Durable Object's SQLite). A memory store's copy that the wasm heap
   * cannot take rejects with `limit`; nothing is added.
   * @example const snap = await store.snapshot({ label: "before the run" });
   */
  snapshot(options?: { label?: string | undefined }): Promise<SnapshotInfo>;
  /** The kept snapshots, newest first. @example const [newest] = await store.snapshots(); */
  snapshots(): Promise<SnapshotInfo[]>;
  /**
   * Gives back snapshot `id` (the newest when omitted) in one commit, after
   * a snapshot of the current state (`undo`): `store.restore()` again undoes it.
   * Rejects with `limit` when the wasm heap cannot hold the snapshot's rows
   * it compares, or its commit; nothing is changed.
   * @example const { undo } = await store.restore(snap.id);
   */
  restore(id?: string, ctx?: Context): Promise<RestoreResult>;
  /**
   * Runs fn holding the advisory lock `name` (across processes sharing a
   * sqlite file, tabs sharing an OPFS store, callers of this store); waiting
   * longer than `timeout` ms rejects with "lock/timeout".
   * @example await store.lock("import", async () => { await run(); }, { timeout: 5000 });
   */
  lock<R>(name: string, fn: () => Promise<R> | R, options?: { timeout?: number | undefined }): Promise<R>;
  /**
   * Closes after the queued commits. Rejects with storage_failed when
   * releasing the backend failed (closed anyway, every acknowledged commit kept).
   * @example await store.close();
   */
  close(): Promise<void>;
}

/** A kept snapshot. */
export interface SnapshotInfo {
  /** Its UTC time as "YYYYMMDD-HHMMSS.mmm" (with "-2", "-3"... within one ms). */
  readonly id: string;
  /** The head it holds. */
  readonly seq: number;
  /** When it was taken, in ms since the epoch. */
  readonly at: number;
  readonly label: string | null;
}

/** What store.restore did. */
export interface RestoreResult {
  /** The restore's commit. */
  readonly seq: number;
  /** The snapshot restored. */
  readonly snapshot: string;
  /** The snapshot taken just before: restore it to undo this restore. */
  readonly undo: string;
}

/** A sqlite store found by listStores (Node). */
export interface ListedSqliteStore {
  readonly path: string;
  readonly id: string;
  readonly head: number;
  /** Bytes of the database file and its journal. */
  readonly size: number;
  readonly replica: boolean;
}

/** An OPFS store found by listStores (browsers); id and head are read from a private copy of its files when it is open, and are null only when they cannot be read. */
export interface ListedOpfsStore {
  readonly name: string;
  readonly id: string | null;
  readonly head: number | null;
  readonly size: number;
  readonly open: boolean;
}

/**
 * The stores of a backend, read without opening (taking over) any of them.
 * @example const stores = await listStores({ backend: "sqlite", dir: ".data/sessions" });
 */
export function listStores(options: { backend: "sqlite"; dir: string }): Promise<ListedSqliteStore[]>;
export function listStores(options: { backend: "opfs"; prefix?: string | undefined }): Promise<ListedOpfsStore[]>;

/** Progress of an export or import. */
export interface ArchiveProgress {
  /** Items done: rows, outbox records and blobs (one each). */
  readonly done: number;
  /** All items of the archive. */
  readonly total: number;
  /** Tar bytes made (export) or read (import) so far. */
  readonly bytes: number;
  /** Bytes of blobs done. */
  readonly blobBytes: number;
  /** Bytes of all the archive's blobs. */
  readonly blobTotal: number;
}

/** Options of store.export and importStore. */
export interface ArchiveOptions {
  /** Called after the manifest and after each page or blob entry. */
  onProgress?: ((progress: ArchiveProgress) => void) | undefined;
}

/** Options of store.export. */
export interface ExportOptions extends ArchiveOptions {
  /**
   * Fails the export with `lock/timeout` (and lets the commits it held run)
   * when its reader reads nothing for this many ms. Default 60000; 0: none.
   */
  idleTimeout?: number | undefined;
}

/** A web ReadableStream of bytes, as far as onestore uses one (for projects whose lib has none). */
export interface ByteStreamLike {
  getReader(): { read(): Promise<{ done: boolean; value?: Uint8Array }>; releaseLock(): void; cancel(reason?: unknown): Promise<void> };
  cancel(reason?: unknown): Promise<void>;
}
declare global {
  // Merged into the lib's ReadableStream where the project's lib declares
  // one (DOM, @types/node, @cloudflare/workers-types: each as an interface
  // with this parameter), and empty where none does.
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  interface ReadableStream<R = any> {}
}
/** The global ReadableStream where the project's lib declares one (DOM, workers, Node), else ByteStreamLike. */
export type ByteStream = keyof ReadableStream<Uint8Array> extends never ? ByteStreamLike : ReadableStream<Uint8Array>;

/** What importStore reads: a ReadableStream, the bytes, or an async iterable of byte chunks (a Node stream). */
export type ArchiveSource = ByteStream | ByteStreamLike | Uint8Array | ArrayBuffer | AsyncIterable<Uint8Array>;

/**
 * Restores an archive of store.export() as the store of `openOptions` and
 * opens it, with the archive's session id, head, outbox, rows and blobs, on
 * every backend: memory; a sqlite file (a new generation beside the file,
 * renamed over it); opfs (a new generation folder in OPFS, switched in);
 * durable (staged, then switched in one transactionSync). The switch comes
 * only once the whole archive was read and checked; close the store at
 * those options first. A broken or hostile archive rejects with
 * "invalid/archive" ("schema/newer" for a newer format) and the previous
 * store is untouched.
 * @example const store = await importStore(createReadStream("session.tar"), { backend: "sqlite", path: ".data/s.sqlite" });
 */
export function importStore(archive: ArchiveSource, openOptions: OpenOptions, options?: ArchiveOptions): Promise<Store>;

/**
 * Node: writes store.export() to `path` ("<path>.<8 hex digits>.part", a
 * file of this call's own, then renamed) and resolves to the bytes written. Elsewhere it rejects with invalid/args.
 * @example await exportToFile(store, "session.tar", { onProgress: (p) => bar.set(p.done / p.total) });
 */
export function exportToFile(store: Store, path: string, options?: ExportOptions): Promise<number>;

/**
 * Opens a store.
 * @example const store = await openStore({ backend: "sqlite", path: ".data/s.sqlite" });
 */
export function openStore(options: OpenOptions): Promise<Store>;

/** A store.log filter: every given field must match. */
export interface LogFilter {
  /** An owner's name ("notes", "host:type") or its address. */
  owner?: string | ObjectAddress | undefined;
  /** The actor's kind and/or id. */
  actor?: { kind: string; id?: string | undefined } | { kind?: string | undefined; id: string } | undefined;
  /** The first seq to consider (default 1). */
  from?: number | undefined;
  /** The last seq to consider (default the head). */
  to?: number | undefined;
  /** The `next` of the previous page. */
  after?: number | undefined;
  /** At most this many commits (1 to 1000, default 100). */
  limit?: number | undefined;
}

/** One page of store.log. */
export interface LogPage {
  commits: OutboxRecord[];
  /** Present when more commits may match: pass it as `after`. */
  next?: number | undefined;
}

/** A read view of a store at one past seq (store.at). */
export interface StoreView {
  /** The seq it shows. */
  readonly seq: number;
  /** A table as it was then: by stored name, by the store's handle, or by definition. @example const items = view.table(Items); */
  table(t: string | TableHandle | AnyTableDef): ReplicaTable;
  /** The stored table names then, in byte order. */
  tables(): string[];
  /** An owner's documents as they were then. @example const note = await view.documents(notes).find({ kind: "note", key: "n1" }); */
  documents(owner: Owner | ObjectAddress | string): OwnerDocuments;
  /** The fingerprint of the content then. */
  fingerprint(): Promise<string>;
  /** Frees the view; later calls reject with closed. */
  close(): Promise<void>;
}

/** What replica.applyBatch resolves to. */
export interface ApplyResult {
  /** The replica's head after the batch. */
  head: number;
  /** The commits the batch added (0: it was already applied). */
  applied: number;
}

/** A replica's reader of one stored table: the schema comes from the log. */
export interface ReplicaTable {
  /** The stored name ("<owner>/<table>"). */
  readonly name: string;
  /** A definition built from the stored table record, for query(def). */
  readonly def: AnyTableDef;
  /** @example const q = items.query().where((e) => eq(e.path, "a")); */
  query(): Query<AnyTableDef>;
  /** @example const row = await items.get(["e1"]); */
  get(key: unknown): Promise<Record<string, unknown> | undefined>;
  /** @example const { rows, next } = await items.page(items.query(), 50, { after }); */
  page(q: Query<AnyTableDef> | undefined, limit: number, options?: { after?: string | undefined }): Promise<Page<Record<string, unknown>>>;
  /** @example for await (const row of items.rows()) console.log(row); */
  rows(q?: Query<AnyTableDef>): AsyncIterable<Record<string, unknown>>;
  /** @example const n = await items.count(); */
  count(q?: Query<AnyTableDef>): Promise<number>;
  /** @example const hits = await items.nearest((e) => e.embedding, q, 5, { metric: "l2" }); */
  nearest(
    column: string | ((e: Refs<AnyTableDef>) => ColRef),
    vector: Float32Array | readonly number[],
    k: number,
    options?: NearestOptions<AnyTableDef>,
  ): Promise<Array<NearestHit<Record<string, unknown>>>>;
  /**
   * The edges of a node in a table made by defineEdges (from, to, kind),
   * one page, as a store's links.neighbours; any kind is read (the kinds
   * are not in the stored record), except on a view's table named by its
   * defineEdges definition or the store's handle, which checks them.
   * @example const { rows, next } = await links.neighbours("a", { direction: "both", limit: 20 });
   */
  neighbours(node: string, options?: NeighboursOptions<string>): Promise<Page<Record<string, unknown>>>;
}

/** A replica: applies a driver's outbox batches, takes no owner writes. */
export interface Replica {
  /** The replica's own id. */
  readonly id: string;
  /** The seq of the last applied commit. */
  readonly head: number;
  /** Why it stopped applying batches (sync/diverged), or undefined. */
  readonly diverged: string | undefined;
  /**
   * Applies a batch whole when batch.from <= head; a no-op when already applied.
   * Rejects with sync/gap, sync/diverged or invalid/args, applying nothing.
   * @example await replica.applyBatch(await store.outbox.read(replica.head, 500));
   */
  applyBatch(batch: OutboxBatch | string): Promise<ApplyResult>;
  /** @example const items = replica.table("notes/items"); */
  table(name: string): ReplicaTable;
  /** The stored table names, in byte order. */
  tables(): string[];
  /** @example assert.equal(await replica.fingerprint(), await store.fingerprint()); */
  fingerprint(): Promise<string>;
  /** The records it applied, as the driver wrote them, to serve them on. */
  readonly outbox: Outbox;
  /** Its blobs: reads, and putWithHash (no put). @example const bytes = await replica.blobs.get(hash); */
  readonly blobs: BlobReader;
  /**
   * A host's small text notes, kept in the replica's own storage (the relay
   * keeps its lease there). Synchronous; names are 1 to 64 of a-z 0-9 _ . -.
   * @example replica.hostNotes.set("relay.lease", JSON.stringify(lease));
   */
  readonly hostNotes: HostNotes;
  /** Refused: a replica has no owners (throws invalid/args). */
  object(address: ObjectAddress, hooks?: OwnerHooks): never;
  /** Refused: a replica takes no owner writes (rejects with invalid/args). */
  commit(writes: readonly WireOp[], adopt?: (seq: number) => void, ctx?: Context): Promise<never>;
  /**
   * Rejects with storage_failed when releasing its file failed (closed
   * anyway, every applied batch kept).
   * @example await replica.close();
   */
  close(): Promise<void>;
}

/** Where a split-off session comes from: the original session and the last seq both share. */
export interface SessionOrigin {
  readonly id: string;
  readonly seq: number;
}

/** Options of startSync. */
export interface SyncOptions {
  /** The relay's URL ("https://edge.example"), or a session's ("https://edge.example/sessions/42"). */
  relay: string;
  /** Batches in flight (1 to 64; default 4). */
  parallel?: number | undefined;
  /** Commits per push (default 100). */
  batch?: number | undefined;
  /** The fetch to call with each request (default globalThis.fetch); a relay's `fetch` works as is. */
  fetch?: ((request: FetchRequest) => Promise<FetchResponse>) | undefined;
  /**
   * Sent as `Authorization: Bearer <token>`; a function is asked before each
   * call. A function that throws is retried as an unreachable relay is
   * (`storage_failed`); one that gives other than a string is `invalid/args`.
   */
  token?: string | (() => string | undefined | Promise<string | undefined>) | undefined;
  /** This device's id in the lease (random by default). */
  device?: string | undefined;
  /** Milliseconds a relay call may go without an answer before it counts as offline (default 30000). */
  timeout?: number | undefined;
}

/** A running sync (startSync). */
export interface Sync {
  /** "connecting" | "driving" | "offline" | "lost" */
  readonly state: "connecting" | "driving" | "offline" | "lost";
  /** The highest seq the relay acknowledged. */
  readonly acked: number;
  /** The relay session it drives. */
  readonly session: string;
  /** The lease epoch it holds (0 before taking it). */
  readonly epoch: number;
  /** The error that stopped it by itself, or null. */
  readonly error: StoreError | null;
  /** Resolves once everything committed so far is acknowledged. @example await sync.settled(); */
  settled(): Promise<number>;
  /** @example sync.on("lost", ({ id, origin }) => console.log(id, origin)); */
  on(event: "lost", fn: (e: { id: string; origin: SessionOrigin }) => void): () => void;
  on(event: "state", fn: (state: Sync["state"]) => void): () => void;
  on(event: "error", fn: (e: StoreError) => void): () => void;
  /** Stops and releases the lease. @example await sync.stop(); */
  stop(): Promise<void>;
}

/**
 * Makes the store its session's driver on a relay (docs/api.md "Sync").
 * @example const sync = startSync(store, { relay: "https://edge.example", parallel: 4 });
 */
export function startSync(store: Store, options: SyncOptions): Sync;

/**
 * Downloads a relay's session into a new local store, ready to drive.
 * @example const store = await pullSession({ relay: "https://edge.example/sessions/42" }, { backend: "memory" });
 */
export function pullSession(remote: { relay: string; fetch?: SyncOptions["fetch"]; token?: SyncOptions["token"]; timeout?: number | undefined }, openOptions: OpenOptions): Promise<Store>;
/** A replica's host notes (Replica.hostNotes). */
export interface HostNotes {
  /** The note's text, or undefined. @example const text = replica.hostNotes.get("relay.lease"); */
  get(name: string): string | undefined;
  /** Writes it durably in a transaction of its own ("" removes it; at most 64 KiB). @example replica.hostNotes.set("app.cursor", "42"); */
  set(name: string, text: string): void;
}

// ---------------------------------------------------------------- the relay

/** The fetch API's Request as much as the relay reads of it, for a lib without one. */
export interface RequestLike {
  readonly method: string;
  readonly url: string;
  readonly headers: { get(name: string): string | null };
  readonly body: unknown;
}
/** The fetch API's Response as much as the relay gives of it, for a lib without one. */
export interface ResponseLike {
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  json(): Promise<unknown>;
  arrayBuffer(): Promise<ArrayBuffer>;
}
/** The global Request where the project's lib declares one (DOM, workers, Node), else RequestLike. */
export type FetchRequest = typeof globalThis extends { Request: { prototype: infer P } } ? P : RequestLike;
/** The global Response where the project's lib declares one, else ResponseLike. */
export type FetchResponse = typeof globalThis extends { Response: { prototype: infer P } } ? P : ResponseLike;

/** What a relay's authorize is asked (docs/formats.md, "The relay protocol"). */
export interface RelayAccess {
  /** The request being answered. */
  request: FetchRequest;
  /** The session id from the URL. */
  session: string;
  /** "read": the session, pull, download, blob reads; "drive": the lease, pushes, blob uploads. */
  access: "read" | "drive";
  /** The bearer token of `Authorization: Bearer <token>`, or undefined. */
  token: string | undefined;
}

/** Options of createRelay. */
export interface RelayOptions {
  /** The open options of a session's replica (its id defaults to the session id). */
  open(sessionId: string): ReplicaOpenOptions | Promise<ReplicaOpenOptions>;
  /** true allows the request; anything else refuses it (401 without a token, 403 with one). Everything is allowed when omitted. */
  authorize?(access: RelayAccess): boolean | Promise<boolean>;
  /** The largest JSON body in bytes (default 8 MiB); larger: 413 limit. */
  maxBody?: number | undefined;
  /** The largest blob in bytes (default and at most 64 MiB); larger: 413 limit. */
  maxBlob?: number | undefined;
  /** The lease's time to live in ms (default 30000). */
  leaseTtl?: number | undefined;
  /** Whether a string a commit writes names a blob (default: 64 lowercase hex digits); false checks none. */
  isBlobName?: (((value: string) => boolean) | false) | undefined;
  /** CORS: true (any origin, the default), false (no CORS headers) or the one origin allowed. */
  cors?: boolean | string | undefined;
  /** The clock, ms since 1970 (default Date.now). */
  now?(): number;
}

/** A relay: answers the relay protocol with the standard Request and Response. */
export interface Relay {
  /** @example const response = await relay.fetch(request); */
  fetch(request: FetchRequest): Promise<FetchResponse>;
  /** Closes every open replica; later requests get 503 closed. @example await relay.close(); */
  close(): Promise<void>;
}

/**
 * A relay over replicas of this runtime (docs/formats.md, "The relay protocol").
 * @example const relay = createRelay({ open: (id) => ({ backend: "sqlite", path: `.data/relay/${id}.sqlite` }) });
 */
export function createRelay(options: RelayOptions): Relay;

/** A Durable Object namespace as relayFetch uses it (env.SESSIONS). */
export interface RelayNamespace {
  idFromName(name: string): unknown;
  get(id: unknown): { fetch(request: FetchRequest): Promise<FetchResponse> | FetchResponse };
}

/**
 * The relay of one session as a Durable Object class (workerd root; elsewhere
 * constructing it throws invalid/args). Subclass it for authorize and
 * relayOptions; declare it under new_sqlite_classes.
 * @example export class Sessions extends SessionRelay { authorize({ token }) { return token === this.env.RELAY_TOKEN; } }
 */
export declare class SessionRelay<Env = any> {
  constructor(ctx: any, env: Env);
  /** The Durable Object's state (ctx.storage holds the session). */
  readonly ctx: any;
  /** The Worker's bindings. */
  readonly env: Env;
  /** true allows the request; allows everything unless overridden. */
  authorize(access: RelayAccess): boolean | Promise<boolean>;
  /** createRelay's options besides open and authorize; none unless overridden. */
  relayOptions(): Omit<RelayOptions, "open" | "authorize">;
  /** Answers one request of the relay protocol. */
  fetch(request: FetchRequest): Promise<FetchResponse>;
}

/**
 * The Worker's router: /sessions/<id>/… to env[binding].idFromName(id)
 * (binding "SESSIONS" unless given); anything else 404 not_found.
 * @example export default { fetch: (request, env) => relayFetch(request, env) };
 */
export function relayFetch(request: FetchRequest, env: object, options?: { binding?: string | undefined }): Promise<FetchResponse>;

/**
 * Opens a replica on any backend of the runtime (openStore's options).
 * @example const replica = await openReplica({ backend: "sqlite", path: ".data/copy.sqlite" });
 */
export function openReplica(options: ReplicaOpenOptions): Promise<Replica>;
/**
 * Opens a PostgreSQL mirror of one session (Node only; needs the optional
 * peer dependency `pg`): its tables are real tables in the schema named by
 * `session` (docs/guide.md, "A server copy in PostgreSQL").
 * @example const mirror = await openReplica({ backend: "postgres", url: "postgres://app@db/app", session: "s1" });
 */
export function openReplica(options: PostgresReplicaOptions): Promise<PostgresReplica>;

/** Options of a PostgreSQL mirror (openReplica with backend "postgres"). */
export interface PostgresReplicaOptions {
  backend: "postgres";
  /** A PostgreSQL connection string; or pass `pool`. */
  url?: string | undefined;
  /** The session mirrored: its schema's name (default "default"); 1 to 128 of A-Z a-z 0-9 _ . -. */
  session?: string | undefined;
  /** A pg.Pool shared by many sessions' mirrors (left open by close()). */
  pool?: unknown | undefined;
}

/**
 * A PostgreSQL mirror: applies batches like every replica and reads its
 * tables with the same queries; documents are rows of its `_documents`
 * (with their current value); it keeps no outbox, blobs or host notes
 * (docs/architecture.md, "The PostgreSQL mirror").
 */
export interface PostgresReplica {
  /** The session it mirrors. */
  readonly id: string;
  /** The PostgreSQL schema of its tables. */
  readonly schema: string;
  /** The seq of the last applied commit. */
  readonly head: number;
  /** Why it stopped applying batches (sync/diverged), or undefined. */
  readonly diverged: string | undefined;
  /** @example await mirror.applyBatch(await store.outbox.read(mirror.head, 500)); */
  applyBatch(batch: OutboxBatch | string): Promise<ApplyResult>;
  /** @example const items = mirror.table("notes/items"); */
  table(name: string): ReplicaTable;
  /** The stored table names, in byte order. */
  tables(): string[];
  /** Refused: a replica has no owners (throws invalid/args). */
  object(address: ObjectAddress, hooks?: OwnerHooks): never;
  /** Refused: a replica takes no owner writes (rejects with invalid/args). */
  commit(writes: readonly WireOp[], adopt?: (seq: number) => void, ctx?: Context): Promise<never>;
  /** @example await mirror.close(); */
  close(): Promise<void>;
}

/** Options of followRelay. */
export interface FollowRelayOptions {
  /** The relay's base URL ("https://edge.example"). */
  relay: string;
  /** The replica to keep up to date (a PostgreSQL mirror, or any replica). */
  replica: Pick<Replica, "head" | "applyBatch"> & { readonly id: string };
  /** The relay session (default: the replica's id, a mirror's session). */
  session?: string | undefined;
  /**
   * Sent as `Authorization: Bearer <token>`; a function is asked before each
   * call. A function that throws is retried as an unreachable relay is
   * (`storage_failed`); one that gives other than a string is `invalid/args`.
   */
  token?: string | (() => string | undefined | Promise<string | undefined>) | undefined;
  /** Records a pull (1 to 1000; default 500). */
  limit?: number | undefined;
  /** Pull again every this many ms until stop(); without it only sync() pulls. */
  interval?: number | undefined;
  /** Called with a failed background pull's error; polling stops on sync/diverged. */
  onError?: ((e: StoreError) => void) | undefined;
  /** The fetch to call (default globalThis.fetch); a relay's `fetch` works as is. */
  fetch?: ((request: FetchRequest) => Promise<FetchResponse>) | undefined;
  /** ms a pull may go without an answer, the token function's included (1 to 3600000; default 30000). */
  timeout?: number | undefined;
}

/** A running followRelay. */
export interface Follower {
  /** Pulls and applies until the replica holds the relay's records. @example await follower.sync(); */
  sync(): Promise<ApplyResult>;
  /** Stops polling. @example await follower.stop(); */
  stop(): Promise<void>;
  /** The replica's head. */
  readonly head: number;
}

/**
 * Keeps a replica following one session of a relay: pulls the records
 * after its head and applies them (docs/api.md, "followRelay").
 * @example const follower = followRelay({ relay: "https://edge.example", replica: mirror, interval: 1000 });
 */
export function followRelay(options: FollowRelayOptions): Follower;

/**
 * Compares two strings by Unicode code point, as the store does: -1, 0 or 1.
 * @example ["测试😀", "测试（一）"].sort(compareText)   // ["测试（一）", "测试😀"]
 */
export function compareText(a: string, b: string): -1 | 0 | 1;

// ---------------------------------------------------- watches, derives and links

/** Stops a watch or a hold. */
export type Unsubscribe = () => void;

/** A watch's listener: that commit's ops for the table. A returned promise is awaited before the next call. */
export type WatchListener = (ops: WireOp[], seq: number) => void | Promise<void>;

/** `T`, or never for a promise: a derive's function is synchronous (an async one is a type error at the call). */
export type NotPromise<T> = T extends PromiseLike<unknown> ? never : T;

/** The synchronous reader a derive gets: committed state; a table is a handle or its full name. */
export interface DeriveReader {
  /**
   * The row with this key, or undefined; the derive depends on that key only.
   * @example store.derive("draft", (read) => read.get(notes, ["draft"])?.text ?? "");
   */
  get<D extends AnyTableDef>(table: TableHandle<D>, key: KeyOf<D>): RowOf<D> | undefined;
  /**
   * The row with this key of a table named in full ("owner/table"), or undefined.
   * @example store.derive("draft", (read) => read.get("notes/notes", ["draft"]));
   */
  get(table: string, key: unknown): Record<string, unknown> | undefined;
  /**
   * One page of a query: `rows`, and `next` when more may follow (pass it
   * as `after` for the next page).
   * @example store.derive("recent", (read) => read.page(notes, query(Notes).orderBy((n) => n.at, "desc"), 20).rows);
   */
  page<D extends AnyTableDef>(table: TableHandle<D>, q: Query<D> | undefined, limit: number, options?: { after?: string | undefined }): Page<RowOf<D>>;
  /**
   * One page of a query on a table named in full ("owner/table").
   * @example store.derive("recent", (read) => read.page("notes/notes", undefined, 20).rows);
   */
  page(table: string, q: Query<any> | undefined, limit: number, options?: { after?: string | undefined }): Page<Record<string, unknown>>;
  /**
   * The number of rows of a query (every row without one).
   * @example store.derive("open", (read) => read.count(notes, query(Notes).where((n) => eq(n.done, false))));
   */
  count<D extends AnyTableDef>(table: TableHandle<D> | string, q?: Query<D>): number;
  /**
   * Every row of a query, as an array (read page by page).
   * @example store.derive("tags", (read) => read.all(tags).map((t) => t.name));
   */
  all<D extends AnyTableDef>(table: TableHandle<D>, q?: Query<D>): RowOf<D>[];
  /**
   * Every row of a query on a table named in full ("owner/table").
   * @example store.derive("tags", (read) => read.all("notes/tags").length);
   */
  all(table: string, q?: Query<any>): Record<string, unknown>[];
  /** The head seq; a derive that reads it is recomputed after every commit. */
  readonly head: number;
  /** The outbox records after `after`; a derive that reads it is recomputed after every commit. */
  outbox(after?: number, limit?: number): OutboxBatch;
}

/** What a derive's holder gets: its value at a seq, or what it threw. */
export type DeriveEvent<T> = { seq: number; value: T; error?: undefined } | { seq: number; value?: undefined; error: Error };

/** A derive of this store. */
export interface Derive<T> {
  readonly name: string;
  /** The current value (computed now if dirty); throws what the derive threw. */
  readonly value: T;
  /** @example const off = count.hold(({ value, error }) => render(value, error)); */
  hold(listener: (event: DeriveEvent<T>) => void): Unsubscribe;
  /** Removes the derive; its name is free again. */
  close(): void;
}

/** What a link's table hold gets: the current rows first, then each commit's ops, or an error. */
export type TableEvent<R> =
  | { seq: number; rows: R[]; ops?: undefined; error?: undefined }
  | { seq: number; ops: WireOp[]; rows?: undefined; error?: undefined }
  | { seq: number; error: Error; rows?: undefined; ops?: undefined };

/** What a link's document hold gets: the live document at its address (undefined when none), now and after each commit that changed it, or an error. */
export type DocumentEvent<T = unknown> =
  | { seq: number; document: DocRecord<T> | undefined; error?: undefined }
  | { seq: number; error: Error; document?: undefined };

/** A document held through a link: its owner's name and its address. */
export interface HeldDocument {
  owner: string;
  kind: string;
  key?: string | undefined;
}

/** A method a worker serves: its args, then the tab's context. */
export type LinkMethod = (args: any, ctx?: Context) => unknown;
/** The methods a worker serves. */
export type LinkMethods = Record<string, LinkMethod>;

/** Anything with postMessage and a message listener: a Worker, a worker's global scope, a MessagePort, a Node worker or port. */
export interface Endpoint {
  postMessage(message: any, ...rest: any[]): void;
  addEventListener?(type: string, listener: (event: any) => void): void;
  removeEventListener?(type: string, listener: (event: any) => void): void;
  start?(): void;
  on?(event: string, listener: (data: any) => void): unknown;
  off?(event: string, listener: (data: any) => void): unknown;
}

/** The server serve() returns. */
export interface LinkServer {
  /** The number of links connected. */
  readonly links: number;
  /** Stops serving; the store stays open. */
  close(): void;
}

/**
 * Serves a store to linked tabs, on `port` (the worker's global scope by default).
 * One store per endpoint: while a server listens on it, another serve there
 * throws invalid/args (close that server, or its store, first).
 * @example serve(store, { methods: { addNote: ({ text }, ctx) => notes.tx(async (tx) => { ... }, ctx) } });
 */
export function serve<M extends LinkMethods>(store: Store, options: { methods?: M; port?: Endpoint }): LinkServer;

/** A tab's link to a served store. */
export interface Link<M extends LinkMethods = LinkMethods> {
  /** The newest seq the link has heard of. */
  readonly seq: number;
  /** True once closed (by close(), or because the store closed). */
  readonly closed: boolean;
  /** @example const r = await link.call("addNote", { text: "hi" }, ctx); */
  call<K extends keyof M & string>(method: K, args?: Parameters<M[K]>[0], ctx?: Context): Promise<Awaited<ReturnType<M[K]>>>;
  /** A table by full name: its current rows, then each commit's ops. @example link.hold("chat/messages", ({ rows, ops }) => ...) */
  hold<R = Record<string, unknown>>(table: `${string}/${string}`, listener: (event: TableEvent<R>) => void): Unsubscribe;
  hold<D extends AnyTableDef>(table: `${string}/${string}`, q: Query<D> | null | undefined, listener: (event: TableEvent<RowOf<D>>) => void): Unsubscribe;
  /** A derive by name. @example link.hold("count", ({ value }) => ...) */
  hold<T = unknown>(derive: string, listener: (event: DeriveEvent<T>) => void): Unsubscribe;
  /** A document by owner and address: its value and version now, then after each commit that changed, retired or created it. @example link.hold({ document: { owner: "notes", kind: "note", key: "n1" } }, ({ document }) => show(document?.value)) */
  hold<T = unknown>(spec: { document: HeldDocument }, listener: (event: DocumentEvent<T>) => void): Unsubscribe;
  /** Closes the link; pending calls reject with `closed`. */
  close(): void;
}

/**
 * Links this tab to a store served in a worker.
 * @example const link = connect<typeof methods>(new Worker(new URL("./store-worker.js", import.meta.url), { type: "module" }));
 */
export function connect<M extends LinkMethods = LinkMethods>(target: Endpoint): Link<M>;

// ---------------------------------------------------------------- errors

/** The stable error codes. */
export declare const ErrorCodes: {
  readonly InvalidArgs: "invalid/args";
  readonly InvalidCursor: "invalid/cursor";
  readonly ReadAfterBulk: "read_after_bulk";
  readonly StorageFailed: "storage_failed";
  readonly Fenced: "fenced";
  readonly SchemaNewer: "schema/newer";
  readonly SyncGap: "sync/gap";
  readonly SyncDiverged: "sync/diverged";
  readonly NotFound: "not_found";
  readonly Closed: "closed";
  readonly Limit: "limit";
  readonly InvalidArchive: "invalid/archive";
  readonly Unauthorized: "unauthorized";
  readonly LockTimeout: "lock/timeout";
};
/** One of the stable error codes. */
export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/**
 * The one error class: a stable code and a message naming the value.
 * @example catch (e) { if (e instanceof StoreError && e.code === "fenced") stop(); }
 */
export declare class StoreError extends Error {
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown });
  readonly code: ErrorCode;
  readonly name: "StoreError";
}

/**
 * Browsers: where the core's .wasm is fetched from, for a bundler that does
 * not emit it by itself (esbuild: its file loader and the package's
 * "onestore/onestore-core.wasm" export) or a server that moves it. Call before
 * the first openStore. In Node it has no effect (the Node loader reads the
 * .wasm beside its module).
 * @example import wasmUrl from "onestore/onestore-core.wasm"; configureBrowserCore({ wasmUrl: new URL(wasmUrl, import.meta.url) });
 */
export function configureBrowserCore(options: { wasmUrl?: string | { readonly href: string } }): void;

/**
 * Deletes a store. In a browser, an OPFS store, fencing its owner in any tab;
 * in Node, a closed sqlite store's file and side files (a store open in any
 * process is refused with invalid/args). Resolves to false when there was
 * no such store.
 * @example await deleteStore({ backend: "opfs", name: "session-42" });
 * @example await deleteStore({ backend: "sqlite", path: ".data/s.sqlite" });
 */
export function deleteStore(options: { backend: "opfs"; name: string; lockTimeout?: number } | { backend: "sqlite"; path: string }): Promise<boolean>;
