// Archives: store.export() and importStore() (design.md, "Archives, snapshots,
// history"; the layout is docs/formats.md, "Archive").
//
// An archive is a POSIX tar (ustar, written and read by js/tar.js, see
// docs/architecture.md "Archives") of regular files under "onestore/":
//
//   onestore/manifest.json              first: format, session, head, fingerprint, tables (record, rows, digest, pages), outbox
//   onestore/tables/<t>/<p>.jsonl       table number t (4 digits, manifest order), page p (6 digits, from 1):
//                                       one row per line, the fingerprint's row encoding
//   onestore/outbox/<p>.jsonl           the retained outbox, one record per line, oldest first
//   onestore/sha256/<xx>/<sha256>       each blob, its bytes (format 2), listed in the manifest
//                                       (xx: the hash's first two digits, as in a store's blob folder)
//
// The core makes the lines and writes them back (src/archive/archive.h);
// this file frames them, streams the blobs from and to the store's blob
// backend (js/blobs.js), and checks every entry.

import { TAR_END, TarError, TarReader, tarEntryBytes, tarHeader, tarPadding } from "./tar.js";
import { ErrorCodes, StoreError, invalidArgs, refuseUnknownOptions } from "./errors.js";
import { describe } from "./schema.js";
import { encodeJson } from "./encode.js";
import { MAX_BLOB_BYTES, allBlobHashes, blobSize, checkedBlob, contentFingerprint, fingerprintWithBlobs, isBlobHash } from "./blobs.js";

/** The archive format this code writes, and the newest it reads (1: no blobs; 2: blobs). */
export const ARCHIVE_FORMAT = 2;
/** Rows (or outbox records) per page entry. */
const PAGE_ROWS = 1000;
/** Rows an import writes in one transaction (pages of one table joined). */
const RESTORE_ROWS = 20000;
/** The largest manifest or blob entry an import takes. */
export const MAX_ENTRY_BYTES = 64 * 1024 * 1024;
/**
 * The largest page entry (1000 rows or outbox records) an import takes, and
 * so an export makes: a store's rows may be large (a 70 KB row makes a
 * 70 MB page), and a page is read whole.
 */
export const MAX_PAGE_BYTES = 1024 * 1024 * 1024;
const ROOT = "onestore/";
const MANIFEST = "onestore/manifest.json";
const BLOB_DIR = "onestore/sha256/";

const encoder = new TextEncoder();

function archiveError(message, cause) {
  return new StoreError(ErrorCodes.InvalidArchive, `importStore: ${message}`, cause ? { cause } : undefined);
}

function pad(n, width) {
  return String(n).padStart(width, "0");
}

// The manifest as written: indented, or on one line when the indents
// alone would take it past the 64 MiB an import reads (a json column's
// default nested hundreds of levels deep is indented once per level);
// above that on one line too, the export fails with `limit`.
function manifestText(manifest) {
  const pretty = JSON.stringify(manifest, null, 1) + "\n";
  if (pretty.length <= MAX_ENTRY_BYTES / 3 || encoder.encode(pretty).byteLength <= MAX_ENTRY_BYTES) return pretty;
  const flat = JSON.stringify(manifest) + "\n";
  const n = encoder.encode(flat).byteLength;
  if (n > MAX_ENTRY_BYTES) {
    throw new StoreError(ErrorCodes.Limit, `store.export: the manifest would be ${n} bytes, above the ${MAX_ENTRY_BYTES} an import takes (its tables' definitions are that large): no archive is made`);
  }
  return flat;
}

function tablePath(t, p) {
  return `${ROOT}tables/${pad(t, 4)}/${pad(p, 6)}.jsonl`;
}

function outboxPath(p) {
  return `${ROOT}outbox/${pad(p, 6)}.jsonl`;
}

function blobPath(hash) {
  return `${BLOB_DIR}${hash.slice(0, 2)}/${hash}`;
}

function checkProgress(onProgress, what) {
  if (onProgress !== undefined && typeof onProgress !== "function") {
    throw invalidArgs(`${what}: onProgress must be a function ({ done, total, bytes, blobBytes, blobTotal }) => void, got ${describe(onProgress)}`);
  }
}

/**
 * The archive of a store, as a ReadableStream of tar bytes, at its head
 * once the commits queued before this call have run. `hold()` takes the
 * commit queue's hold in turn (`{ ready, release }`: js/commit-queue.js,
 * holdInTurn); it is kept until the last byte was read (or the stream is
 * cancelled): commits asked for meanwhile wait, then run in order.
 *
 * @example
 * const stream = exportArchive({ gate, hold: () => queue.holdInTurn(), info, blobs }, { onProgress });
 */
export function exportArchive({ gate, hold, info, blobs }, options = {}) {
  if (options === null || typeof options !== "object") {
    throw invalidArgs(`store.export: options must be { onProgress, idleTimeout }, got ${describe(options)}`);
  }
  refuseUnknownOptions(options, ["onProgress", "idleTimeout"], "store.export");
  const { onProgress, idleTimeout = 60_000 } = options;
  checkProgress(onProgress, "store.export");
  if (typeof idleTimeout !== "number" || !(idleTimeout >= 0)) throw invalidArgs(`store.export: idleTimeout must be a number of ms ≥ 0 (0: none), got ${describe(idleTimeout)}`);
  gate.checkOpen("store.export");
  const core = gate.core;
  // In its turn, as a store.read: behind the commits queued before the call.
  const turn = hold();
  let timer;
  const release = () => {
    clearTimeout(timer);
    turn.release();
  };

  let bytes = 0;
  let done = 0;
  let total = 0;
  let blobBytes = 0;
  let blobTotal = 0;
  const report = () => {
    if (onProgress) onProgress({ done, total, bytes, blobBytes, blobTotal });
  };

  // An entry's chunks: its header, its body, its padding.
  function entry(name, text) {
    const body = typeof text === "string" ? encoder.encode(text) : text;
    if (body.byteLength > MAX_PAGE_BYTES) {
      throw new StoreError(ErrorCodes.Limit, `store.export: entry ${name} would be ${body.byteLength} bytes, above the ${MAX_PAGE_BYTES} an import takes: no archive is made`);
    }
    bytes += tarEntryBytes(body.byteLength);
    const pad = tarPadding(body.byteLength);
    return pad.byteLength ? [tarHeader(name, body.byteLength), body, pad] : [tarHeader(name, body.byteLength), body];
  }

  // The archive's chunks, made as they are asked for (one entry at a time).
  async function* produce() {
    if (turn.ready) await turn.ready;
    const call = (what, fn) => gate.call(`store.export: ${what}`, fn);
    const head = Number(core.head());
    // The documents' own tables (_documents, _deltas) too: an archive holds
    // everything the store holds.
    const records = JSON.parse(call("tables", () => core.archiveTables()));
    // Every table's count and digest and the fingerprint, from one read.
    const digests = JSON.parse(call("digests", () => core.archiveDigests()));
    const tables = records.map((record) => {
      const d = digests.tables[record.table];
      total += d.rows;
      return { name: record.table, record, rows: d.rows, digest: d.digest, pages: Math.ceil(d.rows / PAGE_ROWS) };
    });
    // The retained outbox: records after its first retained seq, up to the head.
    // Pages of PAGE_ROWS records, each from one read or more (a read stops
    // at 8 MiB of records).
    const outbox = [];
    let after = 0;
    let page = "";
    let inPage = 0;
    for (;;) {
      const batch = call("outbox", () => core.outboxRead(after, PAGE_ROWS - inPage));
      const lines = splitOutboxBatch(batch);
      if (lines.seqs.length === 0) break;
      page += lines.text;
      inPage += lines.seqs.length;
      if (inPage === PAGE_ROWS) {
        outbox.push(page);
        page = "";
        inPage = 0;
      }
      after = lines.seqs[lines.seqs.length - 1];
      total += lines.seqs.length;
      if (after >= head) break;
    }
    if (inPage) outbox.push(page);
    const outboxLines = outbox.map(countLines);
    const outboxCount = outboxLines.reduce((n, k) => n + k, 0);
    // The pages as the bytes written, hashed for the manifest.
    const outboxPages = outbox.map((t) => encoder.encode(t));
    outbox.length = 0;
    const outboxDigest = `o1-${await blobs.sha256(joinBytes(outboxPages))}`;
    // The blobs there now: named by content and never deleted, so each one
    // listed is there, the same bytes, when its entry is written.
    const tableFingerprint = digests.fingerprint;
    const blobList = [];
    const hashes = await blobCall("list", () => allBlobHashes(blobs.backend));
    for (const hash of hashes) {
      const size = await blobCall(hash, () => blobSize(blobs.backend, hash));
      blobList.push({ hash, size });
      blobTotal += size;
    }
    total += blobList.length;
    const manifest = {
      format: ARCHIVE_FORMAT,
      kind: "onestore-archive",
      session: info.id,
      head,
      fingerprint: await fingerprintWithBlobs(tableFingerprint, hashes, blobs.sha256),
      tables,
      outbox: { records: outboxCount, from: outboxCount ? head - outboxCount : head, pages: outboxPages.length, digest: outboxDigest },
      blobs: blobList,
    };
    yield entry(MANIFEST, manifestText(manifest));
    report();
    for (let t = 0; t < tables.length; t++) {
      let cursor = "";
      for (let p = 1; p <= tables[t].pages; p++) {
        // PAGE_ROWS rows, from one answer or more (an answer stops at 8 MiB),
        // joined as bytes (a page's text may be longer than a JS string).
        const parts = [];
        let n = 0;
        do {
          const answer = call(tables[t].name, () => core.exportRows(tables[t].name, cursor, PAGE_ROWS - n));
          const nl = answer.indexOf("\n");
          cursor = answer.slice(0, nl);
          const part = answer.slice(nl + 1);
          parts.push(encoder.encode(part));
          n += countLines(part);
        } while (n < PAGE_ROWS && cursor !== "");
        yield entry(tablePath(t, p), joinBytes(parts));
        done += n;
        report();
      }
    }
    for (let p = 1; p <= outboxPages.length; p++) {
      yield entry(outboxPath(p), outboxPages[p - 1]);
      done += outboxLines[p - 1];
      report();
    }
    for (const { hash, size } of blobList) {
      const body = await blobCall(hash, () => blobs.backend.get(hash));
      if (body === undefined || body.byteLength !== size) {
        throw new StoreError(ErrorCodes.StorageFailed, `store.export: blob ${hash} changed or went away while it was exported (${size} bytes listed, ${body?.byteLength ?? "none"} read)`);
      }
      // Checked against its name, as the import will: a blob damaged on
      // the disk made an archive that its own import refused.
      if (blobs.backend.inMemory !== true) await checkedBlob(body, hash, blobs.sha256, "store.export");
      yield entry(blobPath(hash), body);
      done += 1;
      blobBytes += size;
      report();
    }
    yield [TAR_END];
  }

  async function blobCall(what, fn) {
    gate.checkOpen("store.export");
    try {
      return await fn();
    } catch (e) {
      if (e instanceof StoreError) throw e;
      throw new StoreError(ErrorCodes.StorageFailed, `store.export: blobs (${what}): ${e?.name ?? "Error"}: ${e?.message ?? e}`, { cause: e });
    }
  }

  // The producer runs as the consumer reads: one entry per pull; the hold
  // ends with it.
  // A reader that stops asking (a client gone without the stream being
  // cancelled: a Durable Object's Response is not) would hold the commits
  // for ever: after idleTimeout ms without a read, the export fails.
  const chunks = produce();
  let controller;
  const idle = () => {
    clearTimeout(timer);
    if (idleTimeout > 0 && idleTimeout < 2 ** 31) {
      // Chunks read from the stream's queue (a pull enqueues several) count
      // as reads: they raise its desiredSize.
      const queued = controller.desiredSize;
      timer = setTimeout(() => {
        if (controller.desiredSize !== queued) return idle();
        release();
        chunks.return();
        controller.error(new StoreError(ErrorCodes.LockTimeout, `store.export: not read for ${idleTimeout} ms (idleTimeout); cancelled, and the commits it held run`));
      }, idleTimeout);
    }
  };
  return new ReadableStream({
    start(c) {
      controller = c;
      idle();
    },
    async pull(c) {
      clearTimeout(timer);
      try {
        const { done: end, value } = await chunks.next();
        if (end) {
          release();
          c.close();
        } else {
          for (const chunk of value) c.enqueue(chunk);
          idle();
        }
      } catch (e) {
        release();
        c.error(e);
      }
    },
    cancel() {
      release();
      return chunks.return();
    },
  }, { highWaterMark: 0 });
}

function countLines(text) {
  let n = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

// An outbox batch's records as lines of their own JSON text, untouched (the
// core writes a batch as {"from":..,"to":..,"commits":[r1,r2,...]} with
// every record compact: the records are cut out of the text, not re-encoded,
// so ints beyond 2^53 and key order stay exactly as recorded).
function splitOutboxBatch(batch) {
  const parsed = JSON.parse(batch);
  const seqs = parsed.commits.map((r) => r.seq);
  const start = batch.indexOf('"commits":[') + '"commits":['.length;
  const text = [];
  let depth = 0;
  let inString = false;
  let from = start;
  for (let i = start; i < batch.length; i++) {
    const c = batch[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      if (depth === 0) break;
      depth--;
      if (depth === 0) {
        text.push(batch.slice(from, i + 1));
        from = i + 2;
      }
    }
  }
  return { seqs, text: text.map((r) => r + "\n").join("") };
}

// What an import reads: a ReadableStream, bytes, or an async iterable of
// byte chunks (a Node stream).
function byteStream(archive) {
  if (archive instanceof ReadableStream) return archive;
  if (archive instanceof Uint8Array || archive instanceof ArrayBuffer) {
    const bytes = archive instanceof Uint8Array ? archive : new Uint8Array(archive);
    return new ReadableStream({
      start(c) {
        c.enqueue(bytes);
        c.close();
      },
    });
  }
  if (archive && typeof archive[Symbol.asyncIterator] === "function") {
    const it = archive[Symbol.asyncIterator]();
    return new ReadableStream({
      async pull(c) {
        const { done, value } = await it.next();
        if (done) c.close();
        else if (value instanceof Uint8Array) c.enqueue(value);
        else {
          // A Node stream given an encoding hands over text: an archive's
          // bytes decoded as UTF-8 are lost, so say so instead of reading it.
          throw invalidArgs(`importStore: the archive's chunks must be bytes (Uint8Array or Buffer), got ${typeof value === "string" ? "a string (a stream with an encoding set: leave it unset)" : describe(value)}`);
        }
      },
      cancel() {
        return it.return?.();
      },
    });
  }
  throw invalidArgs(`importStore: archive must be a ReadableStream, a Uint8Array, an ArrayBuffer or an async iterable of bytes, got ${describe(archive)}`);
}

/**
 * Stops an archive importStore refuses before reading it (a bad option, a
 * path in use), as a failed read stops it: a store.export() stream left
 * unread would hold that store's commits for ever. A source of no known kind
 * is left alone.
 *
 * @example
 * await cancelArchive(store.export(), error);
 */
export async function cancelArchive(archive, reason) {
  try {
    if (archive instanceof ReadableStream) {
      if (!archive.locked) await archive.cancel(reason);
    } else if (archive && typeof archive.destroy === "function") {
      archive.destroy();  // a Node stream
    } else if (archive && typeof archive[Symbol.asyncIterator] === "function") {
      await archive[Symbol.asyncIterator]().return?.();
    }
  } catch { /* stopped as far as it can be */ }
}

function checkManifest(m) {
  if (m === null || typeof m !== "object" || m.kind !== "onestore-archive") {
    throw archiveError("the manifest is not an onestore archive's manifest");
  }
  if (!Number.isSafeInteger(m.format) || m.format < 1) throw archiveError(`the manifest's format ${describe(m.format)} is not a format number`);
  if (m.format > ARCHIVE_FORMAT) {
    throw new StoreError(ErrorCodes.SchemaNewer, `importStore: the archive has format ${m.format}, newer than format ${ARCHIVE_FORMAT} that this code reads; update onestore`);
  }
  if (typeof m.session !== "string" || m.session === "") throw archiveError(`the manifest's session ${describe(m.session)} is not a session id`);
  if (!Number.isSafeInteger(m.head) || m.head < 0) throw archiveError(`the manifest's head ${describe(m.head)} is not a seq`);
  if (typeof m.fingerprint !== "string") throw archiveError(`the manifest's fingerprint ${describe(m.fingerprint)} is not a fingerprint`);
  if (!Array.isArray(m.tables)) throw archiveError("the manifest's tables are not a list");
  const names = new Set();
  for (const t of m.tables) {
    if (t === null || typeof t !== "object" || typeof t.name !== "string" || t.record?.table !== t.name ||
        !Number.isSafeInteger(t.rows) || t.rows < 0 || !Number.isSafeInteger(t.pages) || t.pages !== Math.ceil(t.rows / PAGE_ROWS) ||
        typeof t.digest !== "string") {
      throw archiveError(`the manifest lists a table that is not { name, record, rows, digest, pages }: ${describe(t)}`);
    }
    if (names.has(t.name)) throw archiveError(`the manifest lists table ${JSON.stringify(t.name)} twice`);
    names.add(t.name);
  }
  const o = m.outbox;
  if (o === null || typeof o !== "object" || !Number.isSafeInteger(o.records) || o.records < 0 || o.records > m.head ||
      !Number.isSafeInteger(o.pages) || o.pages !== Math.ceil(o.records / PAGE_ROWS) || o.from !== m.head - o.records ||
      // Archives written before 7 December 2026 have no digest.
      (o.digest !== undefined && !/^o1-[0-9a-f]{64}$/.test(o.digest))) {
    throw archiveError(`the manifest's outbox is not { records, from, pages, digest? } at head ${m.head}: ${describe(o)}`);
  }
  if (!Array.isArray(m.blobs)) throw archiveError("the manifest's blobs are not a list");
  if (m.format < 2 && m.blobs.length !== 0) throw archiveError(`the manifest of format ${m.format} lists blobs; blobs are in format 2`);
  let last = "";
  for (const b of m.blobs) {
    if (b === null || typeof b !== "object" || !isBlobHash(b.hash) || !Number.isSafeInteger(b.size) || b.size < 0) {
      throw archiveError(`the manifest lists a blob that is not { hash: 64 lowercase hex digits, size }: ${describe(b)}`);
    }
    if (b.size > MAX_BLOB_BYTES) throw archiveError(`the manifest lists blob ${b.hash} of ${b.size} bytes, above the blob limit of ${MAX_BLOB_BYTES}`);
    if (b.hash <= last) throw archiveError(`the manifest's blobs are not in hash order, once each (at ${b.hash})`);
    last = b.hash;
  }
}

/**
 * Reads an archive, entry by entry, into a new store made by
 * `target.open(manifest)` (its gate) with its blob backend
 * `target.blobs()` ({ backend, sha256 }): tables, then rows page by page,
 * then the outbox and the head, the blobs (each checked against its hash);
 * then checks every table's count and digest and the fingerprint against
 * the manifest. Throws invalid/archive (schema/newer for
 * a newer format) at the first thing wrong; the caller then throws the new
 * store away.
 *
 * @example
 * const { manifest } = await readArchive(archive, { open: (m) => newCore(m.session), blobs: () => blobs }, onProgress);
 */
export async function readArchive(archive, target, onProgress) {
  const tar = new TarReader(byteStream(archive));
  const seen = new Set();
  let manifest = null;
  let core = null;
  let call = null;
  const outbox = [];
  const outboxBytes = [];  // the same pages as bytes, for restoreOutbox
  let done = 0;
  let total = 0;
  let bytes = 0;
  let blobBytes = 0;
  let blobTotal = 0;
  let blobs = null;
  let blobSizes = null;
  const report = () => {
    if (onProgress) onProgress({ done, total, bytes, blobBytes, blobTotal });
  };
  // Rows are written RESTORE_ROWS at a time (one transaction each), pages
  // of one table joined. They cross into wasm as the entries' bytes, checked
  // UTF-8 (decodeText): bytes are copied into the heap as they are, where a
  // JS string would be encoded to UTF-8 again.
  const pending = { table: null, pages: [], rows: 0 };
  const writing = blobWrites();
  const flushRows = () => {
    if (pending.rows > 0) {
      const bytes = joinBytes(pending.pages);
      call(pending.table, () => core.core.restoreRows(pending.table, bytes));
    }
    pending.table = null;
    pending.pages = [];
    pending.rows = 0;
  };
  try {
    for (;;) {
      const header = await tarStep(() => tar.next());
      if (header === null) break;
      const name = header.name;
      bytes += 512;
      if (typeof name !== "string" || name === "" || name.includes("\0")) throw archiveError(`an entry has no usable name: ${describe(name)}`);
      if (name.startsWith("/") || /^[A-Za-z]:/.test(name) || name.includes("\\") || name.split("/").some((s) => s === ".." || s === ".")) {
        throw archiveError(`entry ${JSON.stringify(name)} has a path outside the archive (absolute, or with . or ..)`);
      }
      const type = header.type ?? "file";
      if (type === "directory") {
        // GNU tar -c lists the folders of the layout; nothing else is one.
        if (!/^onestore\/((tables(\/\d{4,})?|outbox|sha256(\/[0-9a-f]{2})?)\/)?$/.test(name)) throw archiveError(`entry ${JSON.stringify(name)} is a folder the archive does not have`);
        // A folder has no bytes: one that declares some is refused before
        // they are read (a source that stalls or never ends would hold the import).
        if (header.size !== 0) throw archiveError(`folder entry ${JSON.stringify(name)} declares ${describe(header.size)} bytes; a folder has none`);
        await tarStep(() => tar.skip());
        continue;
      }
      if (type !== "file") throw archiveError(`entry ${JSON.stringify(name)} is a ${type}, not a regular file (links, devices and extended headers are refused)`);
      if (seen.has(name)) throw archiveError(`entry ${JSON.stringify(name)} appears twice`);
      seen.add(name);
      const limit = name.endsWith(".jsonl") ? MAX_PAGE_BYTES : MAX_ENTRY_BYTES;
      if (!Number.isSafeInteger(header.size) || header.size < 0 || header.size > limit) {
        throw archiveError(`entry ${JSON.stringify(name)} declares ${header.size} bytes, above the limit of ${limit}`);
      }
      let what;
      if (manifest === null) {
        if (name !== MANIFEST) throw archiveError(`the first entry is ${JSON.stringify(name)}, not ${MANIFEST}`);
        what = { kind: "manifest" };
      } else {
        let m;
        // Numbers padded to 4 and 6 digits, longer past 9999 tables or
        // 999999 pages, each written one way only (tablePath, outboxPath).
        if ((m = /^onestore\/tables\/(\d{4,})\/(\d{6,})\.jsonl$/.exec(name))) {
          const t = manifest.tables[Number(m[1])];
          const p = Number(m[2]);
          if (!t || p < 1 || p > t.pages || name !== tablePath(Number(m[1]), p)) throw archiveError(`entry ${JSON.stringify(name)} is no page of a table the manifest lists`);
          what = { kind: "rows", table: t, page: p };
        } else if ((m = /^onestore\/outbox\/(\d{6,})\.jsonl$/.exec(name))) {
          const p = Number(m[1]);
          if (p < 1 || p > manifest.outbox.pages || name !== outboxPath(p)) throw archiveError(`entry ${JSON.stringify(name)} is no page of the outbox the manifest lists`);
          what = { kind: "outbox", page: p };
        } else if ((m = /^onestore\/sha256\/([0-9a-f]{2})\/([0-9a-f]{64})$/.exec(name)) && m[2].startsWith(m[1])) {
          const hash = m[2];
          const size = blobSizes.get(hash);
          if (size === undefined) throw archiveError(`entry ${JSON.stringify(name)} is a blob the manifest does not list`);
          if (header.size !== size) throw archiveError(`entry ${JSON.stringify(name)} declares ${header.size} bytes; the manifest lists the blob with ${size}`);
          what = { kind: "blob", hash };
        } else {
          throw archiveError(`entry ${JSON.stringify(name)} is not part of an onestore archive`);
        }
      }
      if (what.kind !== "rows") flushRows();
      if (what.kind === "blob") {
        const data = await tarStep(() => tar.body());
        bytes += Math.ceil(header.size / 512) * 512;
        const actual = await blobs.sha256(data);
        if (actual !== what.hash) throw archiveError(`entry ${JSON.stringify(name)} holds bytes whose sha256 is ${actual}, not the blob's name`);
        // The generation is synced whole before its switch (below). Up to
        // BLOB_WRITES writes run while the next entries are read and
        // checked; the first to fail stops the import.
        await writing.add(what.hash, blobs.backend.write(what.hash, data, { durable: false }));
        done += 1;
        blobBytes += header.size;
        report();
        continue;
      }
      const data = await tarStep(() => tar.body());
      const text = decodeText(data, name);
      bytes += Math.ceil(header.size / 512) * 512;
      if (what.kind === "manifest") {
        let m;
        try {
          m = JSON.parse(text);
        } catch (e) {
          throw archiveError(`the manifest is not JSON: ${e.message}`, e);
        }
        checkManifest(m);
        manifest = m;
        total = m.tables.reduce((n, t) => n + t.rows, 0) + m.outbox.records + m.blobs.length;
        blobSizes = new Map(m.blobs.map((b) => [b.hash, b.size]));
        blobTotal = m.blobs.reduce((n, b) => n + b.size, 0);
        core = await target.open(m);
        blobs = target.blobs();
        call = (w, fn) => {
          try {
            return core.call(w, fn);
          } catch (e) {
            if (e?.code === ErrorCodes.InvalidArchive) throw new StoreError(e.code, `importStore: ${e.message}`, { cause: e });
            throw e;
          }
        };
        // Encoded outside the core's call, with the nesting limit: a manifest
        // nested thousands deep is a bad archive, not a stopped core.
        let records;
        try {
          records = encodeJson(m.tables.map((t) => t.record), "manifest.tables");
        } catch (e) {
          throw archiveError(`the manifest's table records cannot be read: ${e.message}`, e);
        }
        call("tables", () => core.core.restoreTables(records));
        report();
      } else if (what.kind === "rows") {
        const n = countLines(text);
        const want = what.page < what.table.pages ? PAGE_ROWS : what.table.rows - PAGE_ROWS * (what.table.pages - 1);
        if (n !== want) throw archiveError(`entry ${JSON.stringify(name)} holds ${n} rows, the manifest says ${want}`);
        if (pending.table !== what.table.name) flushRows();
        pending.table = what.table.name;
        pending.pages.push(data);
        pending.rows += n;
        if (pending.rows >= RESTORE_ROWS) flushRows();
        done += n;
        report();
      } else {
        outbox[what.page - 1] = text;
        outboxBytes[what.page - 1] = data;
        done += countLines(text);
        report();
      }
    }
    await writing.all();
  } catch (e) {
    // Stop the source (a file or a network stream) and the decoder; no
    // write goes on after the import failed (the caller deletes the
    // generation).
    await tar.cancel(e);
    await writing.settle();
    throw e;
  }
  if (manifest === null) throw archiveError(`the archive is empty: no ${MANIFEST}`);
  flushRows();
  // Every entry the manifest announces.
  for (let t = 0; t < manifest.tables.length; t++) {
    for (let p = 1; p <= manifest.tables[t].pages; p++) {
      if (!seen.has(tablePath(t, p))) throw archiveError(`entry ${tablePath(t, p)} is missing (the archive is cut or incomplete)`);
    }
  }
  for (let p = 1; p <= manifest.outbox.pages; p++) {
    if (!seen.has(outboxPath(p))) throw archiveError(`entry ${outboxPath(p)} is missing (the archive is cut or incomplete)`);
  }
  for (const b of manifest.blobs) {
    if (!seen.has(blobPath(b.hash))) throw archiveError(`entry ${blobPath(b.hash)} is missing (the archive is cut or incomplete)`);
  }
  if (blobs?.backend.sync) {
    try {
      await blobs.backend.sync();
    } catch (e) {
      throw new StoreError(ErrorCodes.StorageFailed, `importStore: cannot sync the blobs: ${e?.name ?? "Error"}: ${e?.message ?? e}`, { cause: e });
    }
  }
  const outboxText = outbox.join("");
  if (countLines(outboxText) !== manifest.outbox.records) throw archiveError(`the outbox holds ${countLines(outboxText)} records, the manifest says ${manifest.outbox.records}`);
  // A record changed but still well formed (its shape and seqs are checked
  // by restoreOutbox) is caught here: the tables' digests and the
  // fingerprint do not cover the outbox.
  const records = joinBytes(outboxBytes);
  const digest = manifest.outbox.digest && `o1-${await blobs.sha256(records)}`;
  if (digest !== manifest.outbox.digest) throw archiveError(`the outbox hashes to ${digest}, the manifest says ${manifest.outbox.digest}`);
  call("outbox", () => core.core.restoreOutbox(records, manifest.head));
  // The content against the manifest's digests: each table's and the
  // fingerprint, from one read of the new store (Core.archiveDigests).
  const read = JSON.parse(call("digests", () => core.core.archiveDigests()));
  for (const t of manifest.tables) {
    const d = Object.hasOwn(read.tables, t.name) ? read.tables[t.name] : { rows: 0, digest: "(no such table)" };
    if (d.rows !== t.rows || d.digest !== t.digest) {
      throw archiveError(`table ${JSON.stringify(t.name)} read back as ${d.rows} rows with digest ${d.digest}; the manifest says ${t.rows} rows, ${t.digest}`);
    }
  }
  const fp = await contentFingerprint(read.fingerprint, blobs.backend, blobs.sha256);
  if (fp !== manifest.fingerprint) throw archiveError(`the store read back has fingerprint ${fp}; the manifest says ${manifest.fingerprint}`);
  done = total;
  report();
  return { manifest, core, outboxText };
}

// Byte arrays joined into one.
function joinBytes(parts) {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

// How many blob writes of an import run at once.
const BLOB_WRITES = 4;

// The blob writes of an import in flight: add(hash, promise) waits while
// BLOB_WRITES run; all() waits for every one and throws the first failure
// (storage_failed naming the blob); settle() waits for every one, failed or
// not.
function blobWrites() {
  const running = new Set();
  let failed = null;
  const fail = (hash, e) => {
    failed ??= e instanceof StoreError ? e
      : new StoreError(ErrorCodes.StorageFailed, `importStore: cannot write blob ${hash}: ${e?.name ?? "Error"}: ${e?.message ?? e}`, { cause: e });
  };
  const check = () => {
    if (failed) throw failed;
  };
  return {
    async add(hash, promise) {
      const p = promise.then(() => {}, (e) => fail(hash, e)).finally(() => running.delete(p));
      running.add(p);
      while (running.size >= BLOB_WRITES) await Promise.race(running);
      check();
    },
    async all() {
      await Promise.all(running);
      check();
    },
    async settle() {
      await Promise.all(running);
    },
  };
}

// An entry's body as text, refusing one that is not UTF-8.
function decodeText(bytes, name) {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (e) {
    throw archiveError(`entry ${JSON.stringify(name)} is not UTF-8 text`, e);
  }
}

// A step of the tar reader: the archive's own faults (a cut, a bad header)
// and a failing source are invalid/archive.
async function tarStep(fn) {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof StoreError) throw e;
    if (e instanceof TarError) throw archiveError(`the tar stream is broken: ${e.message}`, e);
    throw archiveError(`the tar stream is broken or cut: ${e?.message ?? e}`, e);
  }
}

/**
 * Copies the content of a checked store (`from`, a Core that readArchive
 * filled) into the new Core `to`: tables, rows page by page, the outbox and
 * the head; then checks every table's count and digest against the
 * manifest. Synchronous, so that a runtime can run it inside one host
 * transaction (workerd: the durable switch).
 *
 * @example copyRestored(staged, durableCore, manifest, outboxText, (w, fn) => unwrap(fn()));
 */
export function copyRestored(from, to, manifest, outboxText, call) {
  call("tables", () => to.restoreTables(JSON.stringify(manifest.tables.map((t) => t.record))));
  for (const t of manifest.tables) {
    // Every row, in answers the core may cut at 8 MiB.
    for (let cursor = "", more = t.rows > 0; more; more = cursor !== "") {
      const answer = call(t.name, () => from.exportRows(t.name, cursor, PAGE_ROWS));
      const nl = answer.indexOf("\n");
      cursor = answer.slice(0, nl);
      call(t.name, () => to.restoreRows(t.name, answer.slice(nl + 1)));
    }
  }
  call("outbox", () => to.restoreOutbox(outboxText, manifest.head));
  for (const t of manifest.tables) {
    const d = JSON.parse(call(t.name, () => to.tableDigest(t.name)));
    if (d.rows !== t.rows || d.digest !== t.digest) {
      throw archiveError(`table ${JSON.stringify(t.name)} copied as ${d.rows} rows with digest ${d.digest}; the manifest says ${t.rows} rows, ${t.digest}`);
    }
  }
}
