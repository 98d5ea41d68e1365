// Uses the public API as a TypeScript user would. `npx tsc -p tests/types`
// must pass: every line marked @ts-expect-error must stay an error.

import {
  add, and, col, concat, defineTable, eq, gt, gte, inArray, int, isNull, json, lt, not, openReplica, openStore, or,
  prefix, query, replacePrefix, str, bool, num, StoreError, ErrorCodes, compareText, when, value, coalesce, max,
  type RowOf, type InsertOf, type KeyOf, type ErrorCode, type OutboxBatch, MAX_BLOB_BYTES, type BlobPage,
  importStore, exportToFile, type ArchiveProgress, type Store, type ByteStreamLike,
  startSync, pullSession, type Sync, type SessionOrigin,
  createRelay, type Relay, type RelayAccess, type RequestLike, type ResponseLike, SessionRelay, relayFetch,
  type OutboxRecord, type LogPage, type StoreView, type DocumentEvent, defineEdges, type VectorCacheInfo,
} from "onestore";

type EditMeta = { lines: number; tool?: string };

const Edits = defineTable("edits", {
  version: 2,
  columns: { id: str(), path: str(), entry: int(), at: int<number>(), meta: json<EditMeta>(), note: str().optional(), n: int({ default: 0 }) },
  key: ["id"],
  indexes: { byPath: ["path", "at"], byEntry: ["entry"] },
});

const Ticks = defineTable("ticks", { columns: { id: int<number>(), v: str() }, key: ["id"] });
const Counters = defineTable("counters", { columns: { id: int(), v: str() }, key: ["id"] });
const Pairs = defineTable("pairs", {
  columns: { a: str(), b: int(), done: bool({ default: false }), score: num().optional() },
  key: ["a", "b"],
});

// @ts-expect-error a key names columns of the table
defineTable("bad", { columns: { id: str() }, key: ["nope"] });
// @ts-expect-error a json column cannot be a key
defineTable("bad", { columns: { id: json() }, key: ["id"] });
// A versioned json column at version 1 needs no migrate; above it does.
json<{ title: string }>({ version: 1 });
json<{ title: string }>({ version: 1, default: { title: "" } });
const AnyJson = defineTable("anyJson", { columns: { id: str(), m: json() }, key: ["id"] });
// @ts-expect-error a null default on a column that is not optional
json({ default: null });
// An optional json column takes null.
defineTable("opt", { columns: { id: str(), m: json<{ a: number }>().optional() }, key: ["id"] });
// @ts-expect-error migrate is needed above version 1
json<{ title: string }>({ version: 2 });
// @ts-expect-error a json column cannot be indexed
defineTable("bad", { columns: { id: str(), m: json() }, key: ["id"], indexes: { byM: ["m"] } });
// @ts-expect-error a key is not empty
defineTable("bad", { columns: { id: str() }, key: [] });

// Migrations: each version's alter (drop, rename, add with column builders).
const Edits3 = defineTable("edits", {
  version: 3,
  columns: { id: str(), file: str(), size: int({ default: 0 }) },
  key: ["id"],
  migrations: {
    2: { alter: { rename: { path: "file" }, drop: ["meta"] } },
    3: { alter: { add: { size: int({ default: 0 }) } } },
  },
});
const step: number = Edits3.migrations[3].alter?.add ? 3 : 0;
const Edits4 = defineTable("edits", {
  version: 4,
  columns: { id: str(), file: str(), size: int({ default: 0 }), dir: str({ default: "" }) },
  key: ["id"],
  migrations: {
    ...Edits3.migrations,
    4: { alter: { add: { dir: str({ default: "" }) } }, rows: (row) => ({ dir: String(row.file).split("/")[0] }), update: { size: add(col("size"), 1) } },
  },
});
const Versioned = defineTable("versioned", {
  columns: { id: str(), meta: json<{ title: string; tags: string[] }>({ version: 2, migrate: (old, from) => ({ title: String((old as { name: string }).name) + from, tags: [] }) }) },
  key: ["id"],
});
const vtags: string[] = (null as unknown as RowOf<typeof Versioned>).meta.tags;
// @ts-expect-error migrate gives the column's type
json<{ title: string }>({ version: 2, migrate: () => 1 });
declare const someOwner: import("onestore").Owner;
const seen: string[] = [];
someOwner.table(Edits4, { onProgress: (p) => seen.push(`${p.table} ${p.version} ${p.done / p.total}`) });
// @ts-expect-error onProgress is a function
someOwner.table(Edits4, { onProgress: 1 });
// @ts-expect-error an alter adds column builders
defineTable("bad", { columns: { id: str() }, key: ["id"], migrations: { 2: { alter: { add: { x: 1 } } } } });
// @ts-expect-error an alter's drop is a list of names
defineTable("bad", { columns: { id: str() }, key: ["id"], migrations: { 2: { alter: { drop: "x" } } } });

// Row types.
type Edit = RowOf<typeof Edits>;
const readBack = (e: Edit) => {
  const path: string = e.path;
  const at: number = e.at;
  const entry: number | bigint = e.entry;
  const lines: number = e.meta.lines;
  const note: string | null = e.note;
  // @ts-expect-error an int column reads as number | bigint unless narrowed with int<number>()
  const bad: number = e.entry;
  // @ts-expect-error an optional column may be null
  const bad2: string = e.note;
  return [path, at, entry, lines, note, bad, bad2];
};

const insert: InsertOf<typeof Edits> = { id: "e1", path: "a", entry: 1n, at: 1, meta: { lines: 3 } };
const insertAll: InsertOf<typeof Edits> = { id: "e1", path: "a", entry: 1, at: 1, meta: { lines: 3 }, note: null, n: 5 };
// @ts-expect-error path is required
const missing: InsertOf<typeof Edits> = { id: "e1", entry: 1, at: 1, meta: { lines: 3 } };
// @ts-expect-error meta has its declared shape
const wrongMeta: InsertOf<typeof Edits> = { id: "e1", path: "a", entry: 1, at: 1, meta: { lines: "3" } };

const key1: KeyOf<typeof Edits> = ["e1"];
const key2: KeyOf<typeof Edits> = "e1";
const key3: KeyOf<typeof Pairs> = ["x", 2n];
// @ts-expect-error a two-column key is a tuple
const key4: KeyOf<typeof Pairs> = "x";
// @ts-expect-error key values have their column's type
const key5: KeyOf<typeof Edits> = [1];

// Queries.
const q1 = query(Edits).where((e) => eq(e.path, "src/app.ts")).orderBy((e) => e.at, "desc");
const q2 = query(Edits).where((e) => and(gte(e.at, 1), lt(e.at, 10), undefined));
const q3 = query(Edits).where((e) => or(prefix(e.path, "a/"), inArray(e.entry, [1, 2n]), isNull(e.note), not(gt(e.n, 3))));
const q4 = query(Edits).orderBy("path");
// @ts-expect-error an operand has its column's type
query(Edits).where((e) => eq(e.path, 1));
// @ts-expect-error an operand has its column's type
query(Edits).where((e) => gt(e.at, "now"));
// @ts-expect-error inArray values have the column's type
query(Edits).where((e) => inArray(e.path, [1, 2]));
// @ts-expect-error a json column cannot be in a where
query(Edits).where((e) => eq(e.meta, { lines: 1 }));
// @ts-expect-error a json column cannot be ordered by
query(Edits).orderBy((e) => e.meta);
// @ts-expect-error a json column cannot be ordered by, by name either
query(Edits).orderBy("meta");
// @ts-expect-error prefix takes a str column
query(Edits).where((e) => prefix(e.at, "1"));
// @ts-expect-error an unknown column
query(Edits).where((e) => eq(e.nope, 1));
// @ts-expect-error a direction is asc or desc
query(Edits).orderBy((e) => e.at, "up");

async function session() {
  const store = await openStore({ backend: "sqlite", path: ".data/types.sqlite" });
  // @ts-expect-error a sqlite store needs a path
  await openStore({ backend: "sqlite" });
  await openStore({ backend: "sqlite", path: "other-app.db", adoptForeign: true, lockTimeout: 2000 });
  // @ts-expect-error adoptForeign is a boolean
  await openStore({ backend: "sqlite", path: "other-app.db", adoptForeign: "yes" });
  await openStore({ backend: "sqlite", path: "s.sqlite", onFenced: (e: StoreError) => void e.code });
  // @ts-expect-error onFenced is a function
  await openStore({ backend: "sqlite", path: "s.sqlite", onFenced: true });
  const storage = { sql: { exec: (q: string, ...b: unknown[]) => [q, b] }, transactionSync: <T>(fn: () => T) => fn() };
  await openStore({ backend: "durable", storage });
  // @ts-expect-error a durable store needs the Durable Object's storage
  await openStore({ backend: "durable" });
  const fp: string = await store.fingerprint();
  await openStore({ backend: "sqlite", path: "s.sqlite", vectorCache: 64 * 2 ** 20 });
  // @ts-expect-error vectorCache is a number of bytes
  await openStore({ backend: "memory", vectorCache: "64MB" });
  const cache: VectorCacheInfo = store.vectorCache();
  void (cache.budget + cache.bytes + cache.builds);
  const archive = store.export({ onProgress: (p: ArchiveProgress) => void (p.done + p.total + p.bytes + p.blobBytes / p.blobTotal) });
  const imported: Store = await importStore(archive, { backend: "memory" }, { onProgress: ({ done, total }) => void (done / total) });
  const written: number = await exportToFile(imported, "s.tar");
  // @ts-expect-error an archive is bytes or a stream, not a path
  await importStore("s.tar", { backend: "memory" });
  // @ts-expect-error onProgress is a function
  store.export({ onProgress: 1 });
  const archiveCode: "invalid/archive" = ErrorCodes.InvalidArchive;
  const fromBytes: Store = await importStore(new Uint8Array(0), { backend: "sqlite", path: "s.sqlite" });
  const like: ByteStreamLike = archive;  // without a DOM lib, the structural stream
  const replica = await openReplica({ backend: "memory" });
  const applied: { head: number; applied: number } = await replica.applyBatch(await store.outbox.read(replica.head, 100));
  const items = replica.table("file-history/edits");
  const replicaRows: number = await items.count(items.query().where((e) => eq(e.path, "a")));
  const replicaPage = await items.page(query(items.def), 10, { after: undefined });
  const diverged: string | undefined = replica.diverged;
  const replicaBlob: Uint8Array | undefined = await replica.blobs.get("00".repeat(32));
  // @ts-expect-error a replica's blobs have no put: they arrive with their hash
  await replica.blobs.put(new Uint8Array(0));
  // @ts-expect-error applyBatch takes a batch
  await replica.applyBatch(42);
  replica.hostNotes.set("app.cursor", "42");
  const note: string | undefined = replica.hostNotes.get("app.cursor");
  // @ts-expect-error a host note is text
  replica.hostNotes.set("app.cursor", 42);
  void fp; void applied; void replicaRows; void replicaPage; void diverged; void note;
  await replica.close();
  const sync: Sync = startSync(store, { relay: "https://edge.example", parallel: 4, token: () => "t" });
  const syncState: "connecting" | "driving" | "offline" | "lost" = sync.state;
  sync.on("lost", ({ id, origin }) => void (id + origin.id + origin.seq));
  // A sync's error is a StoreError: its code is there to read.
  sync.on("error", (e) => void e.code.startsWith("sync/"));
  const stoppedBy: string | undefined = sync.error?.code;
  void stoppedBy;
  const acked: number = await sync.settled();
  await sync.stop();
  // @ts-expect-error relay is required
  startSync(store, { parallel: 2 });
  const pulled: Store = await pullSession({ relay: "https://edge.example/sessions/42" }, { backend: "memory" });
  // An option that may be undefined is left out (exactOptionalPropertyTypes).
  const envToken: string | undefined = undefined as string | undefined;
  startSync(store, { relay: "https://edge.example", token: envToken });
  await pullSession({ relay: "https://edge.example/sessions/42", token: envToken, timeout: undefined }, { backend: "memory" });
  const origin: SessionOrigin | null = pulled.origin;
  void syncState; void acked; void origin;
  const relay: Relay = createRelay({
    open: (id: string) => ({ backend: "sqlite", path: `.data/relay/${id}.sqlite` }),
    authorize: ({ access, token }: RelayAccess) => token === "t" || access === "read",
    maxBody: 1 << 20,
    isBlobName: false,
    cors: "https://app.example",
  });
  // @ts-expect-error open gives open options
  createRelay({ open: (id: string) => id });
  // @ts-expect-error access is "read" or "drive"
  createRelay({ open: () => ({ backend: "memory" }), authorize: ({ access }: RelayAccess) => access === "write" });
  const unauthorized: "unauthorized" = ErrorCodes.Unauthorized;
  const asked: RequestLike = { method: "GET", url: "http://relay/sessions/s1", headers: { get: () => null }, body: null };
  const answer: ResponseLike = await relay.fetch(asked as never);
  const status: number = answer.status;
  void unauthorized; void status;
  await relay.close();
  class Sessions extends SessionRelay<{ RELAY_TOKEN: string }> {
    override authorize({ token }: RelayAccess) { return token === this.env.RELAY_TOKEN; }
    override relayOptions() { return { leaseTtl: 60_000 }; }
  }
  void Sessions;
  const routed: ResponseLike = await relayFetch(asked as never, { SESSIONS: {} }, { binding: "SESSIONS" });
  // @ts-expect-error the binding is a name
  await relayFetch(asked as never, {}, { binding: 1 });
  void routed;
  const fileHistory = store.object({ host: "session", type: "file-history" }, { adopt(seq, ops) { void seq; void ops; } });
  const edits = fileHistory.table(Edits);
  const pairs = fileHistory.table(Pairs);

  const e1 = await edits.get(["e1"], { actor: { kind: "person", id: "ana" } });
  if (e1) {
    const p: string = e1.path;
    void p;
  }
  const page = await edits.page(q1, 20, undefined, { after: "cursor" });
  const next: string | undefined = page.next;
  for await (const row of edits.rows(q2)) {
    const id: string = row.id;
    void id;
  }
  const n: number = await edits.count(q3);
  // @ts-expect-error a query over another table
  await pairs.page(q1, 10);
  // @ts-expect-error get takes a key
  await edits.get([1]);

  const Links = defineEdges("links", { kinds: ["cites", "replies"], data: { at: int({ default: 0 }) } });
  const links = fileHistory.table(Links);
  const around = await links.neighbours("a", { kind: "cites", direction: "both", limit: 20, after: page.next });
  const linkKind: "cites" | "replies" = around.rows[0]!.kind;
  const linkAt: number | bigint = around.rows[0]!.at;
  void linkKind; void linkAt;
  // @ts-expect-error a kind the definition does not list
  await links.neighbours("a", { kind: "likes" });
  // @ts-expect-error direction is out, in or both
  await links.neighbours("a", { direction: "up" });
  // @ts-expect-error a plain table has no neighbours
  await edits.neighbours("a");
  await fileHistory.tx(async (tx) => {
    await tx.put(links, { from: "a", to: "b", kind: "cites" });
    // @ts-expect-error a put's kind is one of the kinds
    await tx.put(links, { from: "a", to: "b", kind: "likes" });
    await tx.deleteEdges(links, "a", { direction: "out", kind: "replies" });
    // @ts-expect-error deleteEdges takes an edges table
    await tx.deleteEdges(edits, "a");
  });

  // A context may carry the app's own fields beside actor (docs/api.md).
  await fileHistory.tx(async () => {}, { actor: { kind: "person", id: "ana" }, requestId: "r1" });

  const result = await fileHistory.tx(async (tx) => {
    await tx.put(edits, insert);
    await tx.put(Edits, insertAll);
    await tx.update(edits, ["e1"], { at: add(col("at"), 1), path: "b", note: null, meta: { lines: 1 } });
    await tx.update(edits, "e1", { path: concat("x/", col("path")), n: when(gte(col("n"), 10), 10, col("n")) });
    await tx.update(edits, "e1", { note: coalesce(col("note"), "none"), n: max(col("n"), 3), meta: value({ lines: 2 }) });
    await tx.updateWhere(edits, (e) => prefix(e.path, "a/"), { path: replacePrefix("a/", "b/") });
    await tx.deleteWhere(edits, (e) => lt(e.at, 10));
    await tx.deleteWhere(pairs);
    await tx.deleteWhere(pairs, null);
    // @ts-expect-error a bulk write's where callback returns a predicate (braces, no return)
    await tx.deleteWhere(edits, (e) => { lt(e.at, 10); });
    await tx.delete(pairs, ["x", 1]);
    // @ts-expect-error a put checks the row
    await tx.put(edits, { id: "e2" });
    // @ts-expect-error a set value has its column's type
    await tx.update(edits, ["e1"], { path: 3 });
    // @ts-expect-error null only in an optional column: a required json column refuses it
    await tx.put(edits, { ...insert, meta: null });
    // @ts-expect-error the same in an update
    await tx.update(edits, ["e1"], { meta: null });
    // @ts-expect-error json() of no type: any JSON value but null
    await tx.put(AnyJson, { id: "j", m: null });
    // @ts-expect-error nor undefined
    await tx.put(AnyJson, { id: "j", m: undefined });
    await tx.put(AnyJson, { id: "j", m: { any: ["json", 1] } });
    // @ts-expect-error a text expression is not an int
    await tx.update(edits, ["e1"], { at: concat("a", "b") });
    // @ts-expect-error a key column cannot be set
    await tx.update(edits, ["e1"], { id: "e9" });
    // @ts-expect-error an unknown column cannot be set
    await tx.update(edits, ["e1"], { nope: 1 });
    const mine = await tx.get(edits, ["e1"]);
    const id: number = tx.mintId(Ticks);
    // @ts-expect-error an int() key mints number | bigint (beyond 2^53 a BigInt)
    const wide: number = tx.mintId(Counters);
    void wide;
    // @ts-expect-error mintId needs a single int key column (edits has a str key)
    tx.mintId(edits);
    const committed = await tx.page(edits, query(Edits), 100);
    return { mine, id, rows: committed.rows.length };
  }, { actor: { kind: "agent", id: "claude", via: "tool:edit" } });
  const rowsSeen: number = result.rows;

  // Documents: tx.documents writes, owner.documents reads.
  const notes = store.object({ type: "notes" }, { checkpointWhen: { deltas: 20 } });
  const docId: number = await notes.tx(async (tx) => {
    const id = await tx.documents.create({ kind: "note", key: "n1" }, { title: "Plan" });
    await tx.documents.change(id, [{ op: "replace", path: "/title", value: "Plan v2" }, { op: "move", from: "/a", path: "/b" }]);
    // @ts-expect-error a patch op has a path
    await tx.documents.change(id, [{ op: "remove" }]);
    // @ts-expect-error an address has a kind
    await tx.documents.create({ key: "n2" }, {});
    return id;
  });
  const doc = await notes.documents.find<{ title: string }>({ kind: "note", key: "n1" });
  const title: string | undefined = doc?.value.title;
  const old = await notes.documents.load(docId, { at: 3 });
  const oldVersion: number | undefined = old?.version;
  const listed: string | undefined = (await notes.documents.list({ kind: "note" }, 10, { after: undefined })).next;
  const firstSeq: number = (await notes.documents.versions(docId))[0].seq;
  const one: OutboxRecord = await store.log({ seq: 3 });
  const logPage: LogPage = await store.log({ owner: { type: "notes" }, actor: { id: "ana" }, from: 1, to: 9, limit: 20, after: undefined });
  const nextLog: number | undefined = (await store.log()).next;
  // @ts-expect-error a replica keeps no snapshots: openReplica refuses the option
  await openReplica({ backend: "memory", keepSnapshots: 3 });
  await openStore({ backend: "opfs", name: "imported", adoptForeign: true });
  // api.md's log loop, under exactOptionalPropertyTypes (this config's): an
  // optional option takes undefined, as the package does.
  let logAfter: number | undefined;
  do {
    const { next } = await store.log({ owner: "notes", actor: { id: "ana" }, limit: 50, after: logAfter });
    logAfter = next;
  } while (logAfter !== undefined);
  let cursor: string | undefined;
  cursor = (await edits.page(query(Edits), 20, {}, { after: cursor })).next;
  cursor = (await notes.documents.list({ kind: "note" }, 50, { after: cursor })).next;
  void cursor;
  // @ts-expect-error a log limit is a number
  await store.log({ limit: "20" });
  // @ts-expect-error a log's actor filter names a kind, an id or both
  await store.log({ actor: {} });
  const maybeKind: string | undefined = undefined as string | undefined;
  await store.log({ actor: { kind: maybeKind, id: "ana" } });
  // @ts-expect-error an undefined kind leaves an actor filter of nothing
  await store.log({ actor: { kind: maybeKind } });
  await notes.documents.list({ kind: maybeKind });
  for (const op of one.ops) if (op.op === "restore") { const undo: string = op.undo; void undo; }
  const view: StoreView = await store.at(firstSeq);
  const viewRows: number = await view.table(Edits).count() + await view.table("file-history/edits").count();
  const pastNote = await view.documents(notes).load(docId);
  const viewSeq: number = view.seq;
  // A view's tables answer nearest and neighbours as the store's did then.
  const pastHits: number = (await view.table("file-history/edits").nearest("embedding", new Float32Array(4), 3, { metric: "l2" }))[0].distance;
  const pastEdges = (await view.table("file-history/links").neighbours("a", { kind: "cites", direction: "both", limit: 5 })).next;
  await view.close();
  void [one.ops, logPage.commits, nextLog, viewRows, pastNote, viewSeq, pastHits, pastEdges];

  const seq: number = await store.commit([{ op: "put", table: "file-history/edits", row: { id: "e3" } }], (s) => void s);
  const batch: OutboxBatch = await store.outbox.read(0, 100);
  const removed: number = await store.outbox.trim(batch.to);
  const blobHash: string = await store.blobs.put(new Uint8Array([104, 105]));
  await store.blobs.put(new ArrayBuffer(Math.min(4, MAX_BLOB_BYTES)));
  const blobBytes: Uint8Array | undefined = await store.blobs.get(blobHash);
  const blobThere: boolean = await store.blobs.has(blobHash);
  const blobPage: BlobPage = await store.blobs.list({ after: blobHash, limit: 10 });
  await store.blobs.putWithHash(blobHash, new Uint8Array(0));
  // @ts-expect-error a blob is bytes, not a string
  await store.blobs.put("hello");
  const counted = await store.read(async (r) => (await r.count(edits)) + (await r.page(edits, undefined, 10)).rows.length);

  try {
    await store.close();
  } catch (e) {
    if (e instanceof StoreError) {
      const code: ErrorCode = e.code;
      if (code === ErrorCodes.Fenced) throw e;
    }
  }
  return [readBack, missing, wrongMeta, key1, key2, key3, key4, key5, q4, n, next, rowsSeen, seq, removed, counted, compareText("a", "b")];
}

void session;

// ---- watches, derives and links (issue 3) ----
import {
  serve, connect,
  type Derive, type DeriveEvent, type Endpoint, type Link, type LinkServer, type TableEvent, type Unsubscribe, type WireOp,
} from "onestore";

async function linked(port: Endpoint) {
  const store = await openStore({ backend: "memory" });
  const fileHistory = store.object({ type: "file-history" });
  const edits = fileHistory.table(Edits);
  const off: Unsubscribe = fileHistory.watch(edits, (ops: WireOp[], seq: number) => { void ops; void seq; });
  fileHistory.watch(Edits, async () => {});
  // @ts-expect-error a watch listener takes (ops, seq)
  fileHistory.watch(edits, (ops: string) => void ops);

  const count: Derive<number> = store.derive("count", (read) => read.count(edits));
  const paths = store.derive("paths", (read) => read.all(edits, query(Edits).where((e) => prefix(e.path, "a/"))).map((r) => r.path));
  const first: string[] = paths.value;
  const byName = store.derive("byName", (read) => read.get("file-history/edits", ["e1"]) ?? null);
  const head = store.derive("head", (read) => read.head + read.outbox(0, 1).commits.length);
  // @ts-expect-error the reader is synchronous: get returns a row, not a promise
  store.derive("bad", (read) => read.get(edits, ["e1"]).then(() => 1));
  // @ts-expect-error a derive is computed synchronously: an async function's promise is refused
  store.derive("async", async (read) => read.head).hold(() => {});
  // The call itself is the error, also as a statement or assigned (before,
  // it typed `never`, which both accepted).
  // @ts-expect-error an async derive
  store.derive("asyncStatement", async (read) => read.head);
  // @ts-expect-error a derive returning a promise
  const promised: Derive<number> = store.derive("promised", (read) => Promise.resolve(read.head));
  void promised;
  const stop: Unsubscribe = count.hold((e: DeriveEvent<number>) => { if (e.error) throw e.error; const n: number | undefined = e.value; void n; });

  const methods = {
    add: async ({ id, path }: { id: string; path: string }) => { await fileHistory.tx(async (tx) => { await tx.put(edits, { id, path, entry: 1, at: 1, meta: { lines: 1 } }); }); return store.head; },
    ping: () => "pong" as const,
  };
  const server: LinkServer = serve(store, { methods, port });
  const link: Link<typeof methods> = connect<typeof methods>(port);
  const seq: number = await link.call("add", { id: "e1", path: "a/x" }, { actor: { kind: "person", id: "ana" } });
  const pong: "pong" = await link.call("ping");
  // @ts-expect-error an unknown method
  await link.call("nope");
  // @ts-expect-error the method's args are typed
  await link.call("add", { id: 1 });
  link.hold("file-history/edits", query(Edits).orderBy((e) => e.at), (e: TableEvent<RowOf<typeof Edits>>) => {
    if (e.rows) { const p: string | undefined = e.rows[0]?.path; void p; }
    if (e.ops) { const o: WireOp[] = e.ops; void o; }
  });
  link.hold("file-history/edits", (e) => void e.ops);
  link.hold<number>("count", (e) => { const v: number | undefined = e.value; void v; });
  link.hold<{ title: string }>({ document: { owner: "notes", kind: "note", key: "n1" } }, (e: DocumentEvent<{ title: string }>) => {
    const t: string | undefined = e.document?.value.title; void t;
  });
  // @ts-expect-error a held document names its kind
  link.hold({ document: { owner: "notes" } }, () => {});
  link.close();
  server.close();
  off(); stop(); count.close();
  return [first, byName, head, seq, pong, link.seq, link.closed, server.links];
}
void linked;
// The opfs backend and deleteStore (browser root; typed in the same .d.ts).
import { deleteStore, type OpfsOpenOptions } from "onestore";

async function opfs() {
  const options: OpfsOpenOptions = { backend: "opfs", name: "session-42", durability: "relaxed", lockTimeout: 5000 };
  const store = await openStore({ ...options, onFenced: (e: StoreError) => { const c: ErrorCode = e.code; void c; } });
  // @ts-expect-error an opfs store needs a name
  await openStore({ backend: "opfs" });
  // @ts-expect-error onFenced is a function
  await openStore({ backend: "opfs", name: "x", onFenced: "later" });
  const gone: boolean = await deleteStore({ backend: "opfs", name: "session-42" });
  // @ts-expect-error deleteStore is for opfs stores
  await deleteStore({ backend: "sqlite", name: "x" });
  await store.close();
  return gone;
}

void opfs;
// Snapshots, locks and listStores.
import { listStores, type RestoreResult, type SnapshotInfo } from "onestore";

async function snapshotsAndLocks() {
  const store = await openStore({ backend: "sqlite", path: "s.sqlite", keepSnapshots: 5, snapshotEvery: 100 });
  const snap: SnapshotInfo = await store.snapshot({ label: "before" });
  const all: SnapshotInfo[] = await store.snapshots();
  const r: RestoreResult = await store.restore(snap.id);
  const undone: number = (await store.restore(r.undo)).seq;
  await store.restore();
  // @ts-expect-error a label is a string
  await store.snapshot({ label: 3 });
  // @ts-expect-error keepSnapshots is a number
  await openStore({ backend: "memory", keepSnapshots: "all" });
  const n: number = await store.lock("import", async () => 42, { timeout: 1000 });
  // @ts-expect-error the timeout is a number
  await store.lock("import", async () => 1, { timeout: "soon" });
  const files = await listStores({ backend: "sqlite", dir: ".data" });
  const id: string = files[0].id;
  const tabs = await listStores({ backend: "opfs", prefix: "conv-" });
  await listStores({ backend: "opfs", prefix: undefined as string | undefined });
  const maybe: string | null = tabs[0].id;
  // @ts-expect-error a sqlite listing needs a dir
  await listStores({ backend: "sqlite" });
  return [snap.label, all.length, undone, n, id, maybe, files[0].size, tabs[0].open];
}
void snapshotsAndLocks;

// The PostgreSQL mirror and followRelay.
import { followRelay, type Follower, type PostgresReplica } from "onestore";

async function postgresMirror() {
  const mirror: PostgresReplica = await openReplica({ backend: "postgres", url: "postgres://app@db/app", session: "s1" });
  const schema: string = mirror.schema;
  const items = mirror.table("notes/items");
  const n: number = await items.count(items.query().where((e) => eq(e.path, "a")));
  const { head, applied } = await mirror.applyBatch("{\"from\":0,\"to\":0,\"commits\":[]}");
  // @ts-expect-error a mirror keeps no outbox
  await mirror.outbox.read(0, 10);
  // @ts-expect-error the session is a string
  await openReplica({ backend: "postgres", url: "postgres://db", session: 7 });
  const follower: Follower = followRelay({ relay: "https://edge.example", replica: mirror, interval: 1000, timeout: 5000, onError: (e) => void e.message });
  followRelay({ relay: "https://edge.example", replica: mirror, token: undefined as string | undefined });
  const synced: number = (await follower.sync()).head;
  await follower.stop();
  // @ts-expect-error the relay's URL is required
  followRelay({ replica: mirror });
  await mirror.close();
  return [schema, n, head, applied, synced];
}
void postgresMirror;
// Vectors and nearest.
import { vector, type NearestHit } from "onestore";

async function searchByMeaning() {
  const Docs = defineTable("docs", { columns: { id: str(), kind: str(), embedding: vector(4) }, key: ["id"] });
  const store = await openStore({ backend: "memory" });
  const owner = store.object({ type: "notes" });
  const docs = owner.table(Docs);
  await owner.tx(async (tx) => {
    await tx.put(docs, { id: "a", kind: "message", embedding: new Float32Array([1, 0, 0, 0]) });
    await tx.put(docs, { id: "b", kind: "message", embedding: [0, 1, 0, 0] });
    // @ts-expect-error a vector is a Float32Array or an array of numbers
    await tx.put(docs, { id: "c", kind: "message", embedding: "0,1,0,0" });
  });
  const hits: NearestHit<{ id: string; kind: string; embedding: Float32Array }>[] = await docs.nearest(
    (e) => e.embedding, new Float32Array(4), 10, { metric: "cosine", where: (e) => eq(e.kind, "message") });
  const first: Float32Array = hits[0].row.embedding;
  const d: number = hits[0].distance;
  // @ts-expect-error nearest searches a vector column
  await docs.nearest((e) => e.kind, [1, 0, 0, 0], 3);
  await docs.nearest("embedding", [1, 0, 0, 0], 3);
  // @ts-expect-error by name too: a vector column
  await docs.nearest("kind", [1, 0, 0, 0], 3);
  // @ts-expect-error the metric is cosine, l2 or dot
  await docs.nearest((e) => e.embedding, [1, 0, 0, 0], 3, { metric: "manhattan" });
  // @ts-expect-error a vector column cannot be in a where
  query(Docs).where((e) => eq(e.embedding, [1, 0, 0, 0]));
  // @ts-expect-error a vector column cannot be a key
  defineTable("bad", { columns: { id: vector(2) }, key: ["id"] });
  // @ts-expect-error a key column cannot be optional
  defineTable("bad", { columns: { id: str().optional() }, key: ["id"] });
  const replica = await openReplica({ backend: "memory" });
  const again = await replica.table("notes/docs").nearest("embedding", [1, 0, 0, 0], 2, { metric: "l2" });
  const edges = await replica.table("notes/links").neighbours("a", { direction: "both", limit: 5 });
  const more: string | undefined = edges.next;
  void more;
  // @ts-expect-error a node is a string
  await replica.table("notes/links").neighbours(5);
  return [first, d, again[0].distance];
}
void searchByMeaning;
