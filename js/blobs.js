// Blobs: bytes named by their SHA-256, kept beside a store for its whole
// session (design.md "Blobs"). One implementation for every runtime: the
// checks, the hashing and the API object live here; where the bytes are kept
// is a small per-runtime backend (has, get, write, list):
//
//   memory, sqlite ":memory:"  a Map in this file (memoryBlobs)
//   sqlite file (Node)         js/blobs-node.js: <file>.blobs/sha256/9f/9f3a…
//   opfs (browser Worker)      js/blobs-opfs.js: OPFS onestore/<name>/blobs/…
//   durable (workerd)          js/blobs-durable.js: the object's SQLite, _blobs
//
// The bytes never cross into wasm: the core neither needs nor sees them
// (docs/architecture.md, "Blobs"). A backend's write must be durable when it
// resolves, so a commit that names the hash can follow.

import { ErrorCodes, StoreError, invalidArgs, refuseUnknownOptions } from "./errors.js";
import { describe } from "./schema.js";

/** The largest blob, in bytes (64 MiB); a larger one is refused with `limit`. */
export const MAX_BLOB_BYTES = 64 * 1024 * 1024;
/** list()'s default and largest page. */
export const LIST_DEFAULT = 1000;
export const LIST_MAX = 10000;

const HASH = /^[0-9a-f]{64}$/;

/** Whether `h` is a blob name: 64 lowercase hex digits. */
export function isBlobHash(h) {
  return typeof h === "string" && HASH.test(h);
}

/**
 * Throws invalid/args unless `h` is 64 lowercase hex digits.
 * @example checkHash("9f3a…", "blobs.get");
 */
export function checkHash(h, what) {
  if (!isBlobHash(h)) {
    throw invalidArgs(`${what}: a blob hash is 64 lowercase hex digits (sha256), got ${describe(h)}`);
  }
  return h;
}

const abByteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength").get;  // throws for what is not an ArrayBuffer

/**
 * A private copy of the caller's bytes (Uint8Array, Buffer or ArrayBuffer),
 * taken synchronously, so that a later change of the caller's buffer does
 * not change the blob. Anything else is refused with invalid/args; more than
 * MAX_BLOB_BYTES with `limit`.
 */
export function copyBytes(bytes, what) {
  // By their internal slots, not instanceof: bytes of another realm (a vm
  // context, an iframe) are bytes too.
  const view8 = ArrayBuffer.isView(bytes) && Object.prototype.toString.call(bytes) === "[object Uint8Array]";
  if (!view8) {
    try {
      abByteLength.call(bytes);
    } catch {
      throw invalidArgs(`${what}: expected bytes (a Uint8Array, Buffer or ArrayBuffer), got ${describe(bytes)}`);
    }
  }
  let view;
  let copy;
  try {
    view = view8 ? bytes : new Uint8Array(bytes);
    // Uint8Array's own slice: a Buffer's slice is a view of the same memory.
    if (view.byteLength <= MAX_BLOB_BYTES) copy = Uint8Array.prototype.slice.call(view);
  } catch (e) {
    // A buffer transferred away (postMessage, structuredClone): no bytes.
    throw invalidArgs(`${what}: the bytes' buffer was transferred away (detached); pass bytes that still hold their data`, { cause: e });
  }
  if (copy === undefined) {
    throw new StoreError(ErrorCodes.Limit, `${what}: a blob holds at most ${MAX_BLOB_BYTES} bytes (64 MiB), got ${view.byteLength}`);
  }
  return copy;
}

const hex = (buf) => {
  const b = new Uint8Array(buf);
  let s = "";
  for (let i = 0; i < b.length; i++) s += b[i].toString(16).padStart(2, "0");
  return s;
};

/**
 * SHA-256 of `bytes` as lowercase hex, with WebCrypto (browsers, workerd).
 * @example await webSha256(new Uint8Array([1, 2]))
 */
export async function webSha256(bytes) {
  return hex(await globalThis.crypto.subtle.digest("SHA-256", bytes));
}

/**
 * Runs `fn` (async), turning a failure of the blob storage that is not a
 * StoreError into storage/failed naming `what`.
 * @example await blobStorageCall("store.fingerprint", () => allBlobHashes(backend));
 */
export async function blobStorageCall(what, fn) {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof StoreError) throw e;
    throw new StoreError(ErrorCodes.StorageFailed, `${what}: ${e?.name ?? "Error"}: ${e?.message ?? e}`, { cause: e });
  }
}

/**
 * The size in bytes of blob `hash` of `backend`, or undefined when it is
 * not there: the backend's own `size` when it has one (a file's stat, a
 * row's length), else the length of its bytes.
 * @example const n = await blobSize(backend, hash);
 */
export async function blobSize(backend, hash) {
  if (backend.size) return backend.size(hash);
  return (await backend.get(hash))?.byteLength;
}

/**
 * Every hash of `backend`, in order (pages of LIST_MAX).
 * @example const hashes = await allBlobHashes(backend);
 */
export async function allBlobHashes(backend) {
  const out = [];
  for (let after = ""; ;) {
    const page = await backend.list(after, LIST_MAX);
    for (const h of page) out.push(h);
    if (page.length < LIST_MAX) return out;
    after = page[page.length - 1];
  }
}

/**
 * The fingerprint of a store's whole content (docs/formats.md,
 * "Fingerprint"): the core's fingerprint of its tables and documents
 * (`coreFingerprint`, "f1-…") when it has no blobs; with blobs, "f2-" and
 * the first 32 hex digits of the SHA-256 of the core's fingerprint, a
 * newline, then one line "blob <hash>" per blob in hash order. The one
 * function behind store.fingerprint(), replica.fingerprint() and archives.
 * @example const fp = await contentFingerprint(core.fingerprint(), backend, sha256);
 */
export async function contentFingerprint(coreFingerprint, backend, sha256) {
  return fingerprintWithBlobs(coreFingerprint, await allBlobHashes(backend), sha256);
}

/**
 * contentFingerprint's digest of given blob `hashes` (in hash order).
 * @example const fp = await fingerprintWithBlobs("f1-…", [hash], sha256);
 */
export async function fingerprintWithBlobs(coreFingerprint, hashes, sha256) {
  if (hashes.length === 0) return coreFingerprint;
  let text = coreFingerprint + "\n";
  for (const h of hashes) text += "blob " + h + "\n";
  return "f2-" + (await sha256(new TextEncoder().encode(text))).slice(0, 32);
}

/**
 * `bytes`, read as blob `hash` from a backend outside this process's
 * memory, once their sha256 is found to be `hash`; else storage_failed:
 * bytes damaged there (a flipped bit, a file cut short) are never handed
 * out, or exported, as the blob.
 *
 * @example
 * const bytes = await checkedBlob(await backend.get(hash), hash, sha256, "blobs.get");
 */
export async function checkedBlob(bytes, hash, sha256, what) {
  const actual = await sha256(bytes);
  if (actual === hash) return bytes;
  throw new StoreError(ErrorCodes.StorageFailed, `${what}: the stored bytes of blob ${hash} are damaged (${bytes.byteLength} bytes whose sha256 is ${actual}); put the blob again to repair it`);
}

/**
 * Blobs kept in a Map (memory stores, sqlite ":memory:"): they live as long
 * as the store object.
 */
export function memoryBlobs() {
  const map = new Map();  // hash -> Uint8Array (owned)
  let sorted = null;      // the hashes in order, rebuilt after a write
  return {
    inMemory: true,  // this process's own bytes: not hashed again when read (makeBlobs)
    async has(hash) {
      return map.has(hash);
    },
    async get(hash) {
      const b = map.get(hash);
      return b === undefined ? undefined : b.slice();
    },
    async size(hash) {
      return map.get(hash)?.byteLength;
    },
    async write(hash, bytes) {
      if (!map.has(hash)) {
        map.set(hash, bytes);
        sorted = null;
      }
    },
    async list(after, n) {
      sorted ??= [...map.keys()].sort();
      let lo = 0;
      let hi = sorted.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (sorted[mid] <= after) lo = mid + 1;
        else hi = mid;
      }
      return sorted.slice(lo, lo + n);
    },
  };
}

/**
 * The `blobs` object of a store or replica over a runtime's backend.
 * `checkOpen(what)` throws when the store is closed or fenced; `sha256`
 * hashes bytes to hex. `writable: false` leaves out put (a replica gets its
 * blobs only with their hash, by putWithHash).
 *
 * @example
 * const blobs = makeBlobs(memoryBlobs(), { checkOpen() {}, sha256: webSha256 });
 * const hash = await blobs.put(new TextEncoder().encode("hello"));
 */
export function makeBlobs(backend, { checkOpen, sha256, prefix = "blobs", writable = true }) {
  const guard = (what, fn) => async (...args) => {
    checkOpen(`${prefix}.${what}`);
    try {
      return await fn(...args);
    } catch (e) {
      if (e instanceof StoreError) throw e;
      throw new StoreError(ErrorCodes.StorageFailed, `${prefix}.${what}: ${e?.name ?? "Error"}: ${e?.message ?? e}`, { cause: e });
    }
  };

  // Bytes kept outside this process (a file, OPFS, a Durable Object's
  // rows) can be damaged there: they are checked against their name when
  // read. A memory backend's are this process's own.
  const checked = backend.inMemory !== true;

  async function read(hash, what) {
    const bytes = await backend.get(hash);
    return bytes === undefined || !checked ? bytes : checkedBlob(bytes, hash, sha256, what);
  }

  // Writes a blob unless it is stored already, whole: damaged stored bytes
  // are replaced by these (a put is how a damaged blob is repaired).
  async function store(hash, bytes) {
    if (await backend.has(hash)) {
      if (!checked) return hash;
      const stored = await backend.get(hash);
      if (stored !== undefined && stored.byteLength === bytes.byteLength && (await sha256(stored)) === hash) return hash;
    }
    await backend.write(hash, bytes);
    return hash;
  }

  const api = {
    /**
     * Stores `bytes`; resolves to their sha256 (hex) once they are durable,
     * so a commit that names the hash may follow. Storing bytes that are
     * already there is a no-op.
     * @example const hash = await store.blobs.put(new TextEncoder().encode("hello"));
     */
    put: guard("put", async (bytes) => {
      const own = copyBytes(bytes, `${prefix}.put`);
      return store(await sha256(own), own);
    }),
    /**
     * Stores `bytes` under `hash`, refused with invalid/args when their
     * sha256 is not `hash` (blobs that arrive with their name: sync, import).
     * @example await replica.blobs.putWithHash(hash, bytes);
     */
    putWithHash: guard("putWithHash", async (hash, bytes) => {
      checkHash(hash, `${prefix}.putWithHash`);
      const own = copyBytes(bytes, `${prefix}.putWithHash`);
      const actual = await sha256(own);
      if (actual !== hash) {
        throw invalidArgs(`${prefix}.putWithHash: the bytes' sha256 is ${actual}, not the given ${hash}; the blob is refused`);
      }
      return store(hash, own);
    }),
    /**
     * The bytes of blob `hash` (a new Uint8Array), or undefined.
     * @example const bytes = await store.blobs.get(hash);
     */
    get: guard("get", async (hash) => read(checkHash(hash, `${prefix}.get`), `${prefix}.get`)),
    /**
     * Whether blob `hash` is stored.
     * @example if (!(await store.blobs.has(hash))) await upload(hash);
     */
    has: guard("has", async (hash) => backend.has(checkHash(hash, `${prefix}.has`))),
    /**
     * The stored hashes in order, after `after` (a hash), at most `limit`
     * (default 1000, at most 10000): { hashes, next? }; `next`, when
     * present, is the `after` of the next page.
     * @example for (let p = await store.blobs.list(); ; p = await store.blobs.list({ after: p.next })) { use(p.hashes); if (!p.next) break; }
     */
    list: guard("list", async (options = {}) => {
      const what = `${prefix}.list`;
      if (options === null || typeof options !== "object") throw invalidArgs(`${what}: expected { after?, limit? }, got ${describe(options)}`);
      refuseUnknownOptions(options, ["after", "limit"], what);
      const { after, limit = LIST_DEFAULT } = options;
      if (after !== undefined) checkHash(after, `${what} (after)`);
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > LIST_MAX) {
        throw invalidArgs(`${what}: limit must be an integer from 1 to ${LIST_MAX}, got ${describe(limit)}`);
      }
      const hashes = await backend.list(after ?? "", limit + 1);
      if (hashes.length > limit) {
        hashes.length = limit;
        return { hashes, next: hashes[limit - 1] };
      }
      return { hashes };
    }),
  };
  if (!writable) delete api.put;
  return Object.freeze(api);
}
