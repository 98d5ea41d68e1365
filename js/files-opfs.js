// The browser implementation of the files object that the wasm module's
// SQLite VFS calls synchronously (interface: wasm/files_library.js), over
// OPFS FileSystemSyncAccessHandles, in a dedicated Worker.
//
// A sync access handle can only be created asynchronously, while the VFS
// calls are synchronous. So every handle a store needs is acquired when the
// store opens (acquireOpfsFiles), and registered here under its VFS path;
// from then on each VFS call is a synchronous call on a handle. The set is
// fixed: the database, its -journal and its -wal (SQLite runs in exclusive
// locking mode with a WAL and temp_store=MEMORY, so it needs no other file).
//
//   OPFS root / "onestore" / <name> / "db.sqlite"           the database
//                                     "db.sqlite-wal"       its WAL
//                                     "db.sqlite-journal"   its rollback journal
//
// (docs/formats.md, "OPFS layout"). The VFS path of the database is
// "/onestore/<name>/db.sqlite".
//
// "Deleting" a file truncates it (its handle stays open until the store
// closes), and a file "exists" when it is registered and not empty: for
// SQLite an empty journal or WAL is the same as none.
//
// Every method throws on failure (a short write too); wasm/files_library.js
// catches, keeps the message for xGetLastError and returns an SQLite code.

import { ErrorCodes, StoreError } from "./errors.js";

/** The folder of every onestore store in the OPFS root. */
export const OPFS_DIR = "onestore";
/** The files of one store, in its folder OPFS_DIR/<name>. */
export const OPFS_FILES = Object.freeze(["db.sqlite", "db.sqlite-journal", "db.sqlite-wal"]);

const entries = new Map();  // VFS path -> { handle, path }
const heldDirs = new Map();  // store name -> its folder's handle, while acquireOpfsFiles holds its files
const open = new Map();     // file id -> entry
let nextId = 1;

function notFound(path) {
  const e = new Error(`${path} is not a file of an open OPFS store (its handles are acquired when the store opens)`);
  e.code = "ENOENT";
  return e;
}

function entryOf(id) {
  const e = open.get(id);
  if (!e) throw new Error(`file id ${id} is not open`);
  if (!e.handle) throw new Error(`${e.path}: its OPFS handle was released (the store closed or was fenced)`);
  return e;
}

/**
 * The files object of this realm, over the handles of every open OPFS store.
 * Handed to the wasm module as `onestoreFiles`.
 */
export const opfsFiles = {
  open(path, create) {
    const e = entries.get(path);
    if (!e) throw notFound(path);
    const id = nextId++;
    open.set(id, e);
    return id;
  },

  read(id, bytes, offset) {
    return entryOf(id).handle.read(bytes, { at: offset });
  },

  write(id, bytes, offset) {
    const e = entryOf(id);
    const n = e.handle.write(bytes, { at: offset });
    if (n !== bytes.length) throw new Error(`short write to ${e.path}: ${n} of ${bytes.length} bytes at ${offset}`);
  },

  truncate(id, size) {
    entryOf(id).handle.truncate(size);
  },

  sync(id) {
    entryOf(id).handle.flush();
  },

  size(id) {
    return entryOf(id).handle.getSize();
  },

  close(id) {
    open.delete(id);  // the handle stays: it belongs to the store, not to SQLite's file
  },

  delete(path) {
    const e = entries.get(path);
    if (!e || !e.handle) throw notFound(path);
    e.handle.truncate(0);
    e.handle.flush();
  },

  exists(path) {
    const e = entries.get(path);
    return !!(e && e.handle && e.handle.getSize() > 0);
  },
};

/** The folder of an import's new generation: "<name>.import-<12 hex>" (js/archive-opfs.js). */
export const GENERATION_NAME = /\.import-[0-9a-f]{12}$/;

/**
 * Whether `name` can name an OPFS store (one folder name in OPFS): not an
 * import's generation (an import into "<name>" removes those), and no lone
 * surrogate (OPFS would store U+FFFD: another store's name).
 */
export function checkOpfsName(name, what, generation = false) {
  if (typeof name !== "string" || name === "" || name.length > 200 || name === "." || name === ".." || /[/\\\0]/.test(name) ||
      !name.isWellFormed() || (!generation && GENERATION_NAME.test(name))) {
    throw new StoreError(ErrorCodes.InvalidArgs,
      `${what}: name must be 1 to 200 UTF-16 units, without "/", "\\", NUL or a lone surrogate, not "." or "..", and not ending in ".import-" and 12 hex digits, got ${JSON.stringify(name) ?? String(name)}`);
  }
}

/**
 * Throws invalid/args unless this realm has OPFS sync access handles (a
 * dedicated Worker of a secure page). Checked before taking a store's Web
 * Lock, so that a realm that cannot open the store never fences its owner.
 */
export function checkOpfsAvailable(what) {
  if (!globalThis.navigator?.storage?.getDirectory || typeof FileSystemFileHandle === "undefined" ||
      !FileSystemFileHandle.prototype.createSyncAccessHandle) {
    throw new StoreError(ErrorCodes.InvalidArgs, `${what}: OPFS sync access handles exist only in a dedicated Worker (of a secure page); open the store there`);
  }
}

/** The VFS path of a store's database. */
export function opfsDbPath(name) {
  return `/${OPFS_DIR}/${name}/${OPFS_FILES[0]}`;
}

// Resolves after `ms`, or at once when `signal` aborts.
const sleep = (ms, signal) => new Promise((r) => {
  if (signal?.aborted) { r(); return; }
  const done = () => { clearTimeout(t); signal?.removeEventListener("abort", done); r(); };
  const t = setTimeout(done, ms);
  signal?.addEventListener("abort", done, { once: true });
});

// Retries `fn` while it fails because another handle holds the file (the
// previous owner is releasing its handles), until `deadline`. Gives up at
// once when `signal` aborts (the opener was taken over meanwhile): it then
// throws `signal.reason`.
async function whileBusy(fn, deadline, what, signal) {
  for (let wait = 2; ; wait = Math.min(wait * 2, 50)) {
    if (signal?.aborted) throw signal.reason;
    try {
      return await fn();
    } catch (e) {
      if (e?.name !== "NoModificationAllowedError") throw e;
      if (signal?.aborted) throw signal.reason;
      if (Date.now() >= deadline) {
        throw new StoreError(ErrorCodes.Fenced, `${what}: another owner still holds the files (${e.message})`, { cause: e });
      }
      await sleep(wait, signal);
    }
  }
}

async function storeDir(name, create) {
  if (!globalThis.navigator?.storage?.getDirectory) {
    throw new StoreError(ErrorCodes.InvalidArgs, "the opfs backend needs OPFS (navigator.storage.getDirectory): open it in a dedicated Worker of a secure page");
  }
  const root = await navigator.storage.getDirectory();
  const top = await root.getDirectoryHandle(OPFS_DIR, { create });
  return { top, dir: await top.getDirectoryHandle(name, { create }) };
}

/**
 * Acquires the sync access handles of store `name` and registers them with
 * opfsFiles. Waits up to `timeoutMs` for handles another owner is releasing.
 * Resolves to `release()`, which flushes and closes them (idempotent).
 *
 * `signal` (an AbortSignal, whose reason is the error to throw) stops the
 * wait: an opener whose Web Lock was stolen while it waited gives up at
 * once and closes every handle it got so far. Before, it kept retrying
 * until the deadline while holding some of the three files; with three or
 * more openers at once, two stolen ones could each hold a part of the set
 * and block each other and the last opener (the one that owns the store)
 * until all of them failed after lockTimeout, and nobody owned the store.
 */
export async function acquireOpfsFiles(name, timeoutMs, signal) {
  const what = `openStore(opfs ${JSON.stringify(name)})`;
  checkOpfsAvailable(what);
  const deadline = Date.now() + timeoutMs;
  const mine = [];
  let folder = null;  // the store's folder, once looked up
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    let first = null;
    for (const e of mine) {
      try { e.handle.flush(); } catch (err) { first ??= err; }
      try { e.handle.close(); } catch (err) { first ??= err; }
      e.handle = null;
      if (entries.get(e.path) === e) entries.delete(e.path);
    }
    if (heldDirs.get(name) === folder) heldDirs.delete(name);
    if (first) throw new StoreError(ErrorCodes.StorageFailed, `closing the OPFS files of ${JSON.stringify(name)}: ${first.message}`, { cause: first });
  };
  try {
    if (signal?.aborted) throw signal.reason;
    const { dir } = await storeDir(name, true);
    folder = dir;
    // The three files at once: each handle is a round trip to the browser's
    // file system (about 0.8 ms in Chromium here), and none depends on
    // another. Every handle acquired goes into `mine`, in the order of
    // OPFS_FILES, before a failure of any one is thrown: release() then
    // closes the others.
    const slots = [];
    const acquired = await Promise.allSettled(OPFS_FILES.map(async (file, i) => {
      const fh = await dir.getFileHandle(file, { create: true });
      const handle = await whileBusy(() => fh.createSyncAccessHandle(), deadline, `${what} ${file}`, signal);
      slots[i] = { handle, path: `/${OPFS_DIR}/${name}/${file}` };
    }));
    for (const e of slots) if (e) mine.push(e);
    // Taken over while acquiring: the handles got are released below, the
    // new owner waits for them.
    if (signal?.aborted) throw signal.reason;
    const failed = acquired.find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
  } catch (e) {
    try { release(); } catch { /* the first error says more */ }
    if (e instanceof StoreError) throw e;
    throw new StoreError(ErrorCodes.StorageFailed, `${what}: cannot open its OPFS files: ${e?.name}: ${e?.message}`, { cause: e });
  }
  for (const e of mine) entries.set(e.path, e);
  heldDirs.set(name, folder);
  return release;
}

/**
 * The folder handle of store `name` (it must exist): the one an open store
 * holds (acquireOpfsFiles) when there is one, which saves its snapshots'
 * shelf (js/snapshots-opfs.js) three round trips to the browser's file
 * system, else looked up from the OPFS root.
 */
export async function opfsStoreDir(name) {
  return heldDirs.get(name) ?? (await storeDir(name, false)).dir;
}

/**
 * Acquires sync access handles on files `names` of the OPFS folder `dir` and
 * registers them with opfsFiles as `${base}/${name}`, for the synchronous
 * VFS calls of one step (js/snapshots-opfs.js: a snapshot's copy). A name
 * in `need` must exist already and not be empty (never created).
 * Resolves to `release()` (idempotent); throws the OPFS error as it is.
 */
export async function holdOpfsFiles(dir, base, names, need = []) {
  const mine = [];
  const release = () => {
    for (const e of mine.splice(0)) {
      try { e.handle.flush(); } catch { /* closed below anyway */ }
      try { e.handle.close(); } catch { /* released */ }
      e.handle = null;
      if (entries.get(e.path) === e) entries.delete(e.path);
    }
  };
  try {
    for (const file of names) {
      const fh = await dir.getFileHandle(file, { create: !need.includes(file) });
      const handle = await fh.createSyncAccessHandle();
      const e = { handle, path: `${base}/${file}` };
      mine.push(e);
      if (need.includes(file) && handle.getSize() === 0) {
        throw Object.assign(new Error(`${e.path} is empty`), { name: "NotFoundError" });
      }
      if (entries.has(e.path)) throw Object.assign(new Error(`${e.path} is in use`), { name: "NoModificationAllowedError" });
    }
  } catch (e) {
    release();
    throw e;
  }
  for (const e of mine) entries.set(e.path, e);
  return release;
}

/**
 * Removes store `name`'s folder from OPFS; resolves to false when there was
 * none. Waits up to `timeoutMs` for handles another owner is releasing.
 */
export async function removeOpfsStore(name, timeoutMs) {
  const what = `deleteStore(opfs ${JSON.stringify(name)})`;
  if (!globalThis.navigator?.storage?.getDirectory) {
    throw new StoreError(ErrorCodes.InvalidArgs, `${what}: this realm has no OPFS (navigator.storage.getDirectory)`);
  }
  let top;
  try {
    top = await (await navigator.storage.getDirectory()).getDirectoryHandle(OPFS_DIR);
  } catch (e) {
    if (e?.name === "NotFoundError") return false;
    throw new StoreError(ErrorCodes.StorageFailed, `${what}: ${e?.name}: ${e?.message}`, { cause: e });
  }
  try {
    await whileBusy(() => top.removeEntry(name, { recursive: true }), Date.now() + timeoutMs, what);
    return true;
  } catch (e) {
    if (e?.name === "NotFoundError") return false;
    if (e instanceof StoreError) throw e;
    throw new StoreError(ErrorCodes.StorageFailed, `${what}: ${e?.name}: ${e?.message}`, { cause: e });
  }
}

// A handle over a File (an OPFS file read with getFile()) for listStores'
// look at a store: reads come from the File (synchronously, with
// FileReaderSync in a Worker; elsewhere the bytes are read at once), and a
// write makes a private copy, which nobody else sees.
async function copyHandle(file) {
  let bytes = null;
  const reader = typeof FileReaderSync === "function" ? new FileReaderSync() : null;
  if (!reader) bytes = new Uint8Array(await file.arrayBuffer());
  let size = file.size;
  const own = () => {
    if (!bytes) bytes = new Uint8Array(reader.readAsArrayBuffer(file));
    return bytes;
  };
  return {
    read(buffer, { at }) {
      const end = Math.min(size, at + buffer.length);
      if (end <= at) return 0;
      const part = bytes ? bytes.subarray(at, end) : new Uint8Array(reader.readAsArrayBuffer(file.slice(at, end)));
      buffer.set(part);
      return part.length;
    },
    write(data, { at }) {
      const b = own();
      if (at + data.length > b.length) {
        const grown = new Uint8Array(Math.max(at + data.length, b.length * 2));
        grown.set(b.subarray(0, size));
        bytes = grown;
      }
      bytes.set(data, at);
      size = Math.max(size, at + data.length);
      return data.length;
    },
    truncate(n) {
      own();
      if (n < size) bytes.fill(0, n, size);
      size = n;
    },
    flush() {},
    getSize() { return size; },
    close() {},
  };
}

let peeks = 0;

/**
 * The OPFS stores of this origin whose name starts with `prefix`, by name:
 * `{ name, id, head, size, open }`. `open(name)` says whether a tab holds
 * the store (its Web Lock). `id` and `head` are read through `peek(dbPath)`
 * (the core's peekStore) over copies of its files that only this call sees:
 * as they are on disk (for an open store, as of its last commit written
 * there); null when the files cannot be read (a store being written).
 *
 * @example
 * const stores = await listOpfsStores("conv-", (path) => mod.peekStore(path, true), (name) => false);
 */
export async function listOpfsStores(prefix, peek, isOpen) {
  if (!globalThis.navigator?.storage?.getDirectory) {
    throw new StoreError(ErrorCodes.InvalidArgs, "listStores: this realm has no OPFS (navigator.storage.getDirectory)");
  }
  let top;
  try {
    top = await (await navigator.storage.getDirectory()).getDirectoryHandle(OPFS_DIR);
  } catch (e) {
    if (e?.name === "NotFoundError") return [];
    throw new StoreError(ErrorCodes.StorageFailed, `listStores: ${e?.name}: ${e?.message}`, { cause: e });
  }
  const out = [];
  for await (const [name, dir] of top.entries()) {
    if (dir.kind !== "directory" || !name.startsWith(prefix) || GENERATION_NAME.test(name)) continue;
    let size = 0;
    let readable = true;
    const files = new Map();
    for (const file of OPFS_FILES) {
      try {
        const f = await (await dir.getFileHandle(file)).getFile();
        size += f.size;
        files.set(file, f);
      } catch (e) {
        if (e?.name === "NotFoundError") continue;
        if (e?.name !== "NoModificationAllowedError" && e?.name !== "InvalidStateError") {
          throw new StoreError(ErrorCodes.StorageFailed, `listStores: ${name}/${file}: ${e?.name}: ${e?.message}`, { cause: e });
        }
        readable = false;  // another realm holds it for writing
      }
    }
    const open = isOpen(name);
    let answer = "!";
    if (readable && files.get(OPFS_FILES[0])?.size) {
      const base = `/onestore-peek-${++peeks}`;
      const mine = [];
      try {
        for (const file of OPFS_FILES) {
          const e = { handle: await copyHandle(files.get(file) ?? new Blob([])), path: `${base}/${file}` };
          entries.set(e.path, e);
          mine.push(e);
        }
        answer = peek(`${base}/${OPFS_FILES[0]}`);
      } catch {
        answer = "!";  // changed while read: not readable now
      } finally {
        for (const e of mine) entries.delete(e.path);
      }
    }
    if (answer.startsWith("!")) {
      // Not a store (an empty folder, another database), unless a tab holds it.
      if (open) out.push({ name, id: null, head: null, size, open });
      continue;
    }
    const { id, head } = JSON.parse(answer);
    out.push({ name, id, head, size, open });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export default opfsFiles;
