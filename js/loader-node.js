// The Node runtime of the package: loads the wasm core once per process and
// prepares open options (a sqlite file's parent folder is created).
//
// Emscripten 3.1.6 with -sEXPORT_ES6 looks for the .wasm at a broken file:
// URL in Node, so the loader reads the bytes itself and hands them to the
// factory as `wasmBinary`, together with `onestoreFiles`, the synchronous
// file system the SQLite VFS calls (js/files-node.js).

import { copyFile, mkdir, mkdtemp, open as openFile, readFile, readdir, rename, rm, rmdir, stat } from "node:fs/promises";
import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";

import { ErrorCodes, refuseUnknownOptions, StoreError } from "./errors.js";
import { memoryBlobs } from "./blobs.js";
import { describe } from "./schema.js";
import { blobsDir, nodeFileBlobs, nodeSha256 } from "./blobs-node.js";
import { nodeFiles } from "./files-node.js";
import { memorySnapshots } from "./snapshots.js";
import { nodeSnapshots, snapshotsDir } from "./snapshots-node.js";
import { locksDir, nodeFileLocks } from "./locks-node.js";
import { fileURLToPath } from "node:url";
import { AsyncLocalStorage } from "node:async_hooks";

let modulePromise = null;

/**
 * The wasm module (the factory's instance), loaded once and shared by every
 * store of this process.
 *
 * @example
 * const mod = await loadNodeCore(); const core = new mod.Core();
 */
export function loadNodeCore() {
  if (!modulePromise) {
    modulePromise = instantiate().catch((e) => {
      modulePromise = null;  // a later call may try again (after a build, say)
      throw e;
    });
  }
  return modulePromise;
}

async function instantiate() {
  const dist = new URL("../dist/", import.meta.url);
  let factory;
  let wasmBinary;
  try {
    ({ default: factory } = await import(new URL("onestore-core.mjs", dist).href));
    wasmBinary = await readFile(new URL("onestore-core.wasm", dist));
  } catch (e) {
    throw new StoreError(ErrorCodes.StorageFailed, `onestore: the wasm core is not in ${fileURLToPath(dist)}, beside the package's js/ folder: ` +
      "a bundler that put the package's JS into your Node app's bundle left it behind (keep onestore out of a Node bundle: esbuild --external:onestore, " +
      `webpack externals, or copy the package's dist/ beside the bundle's ../dist/); in a clone of onestore, run \`npm run build\` (${e.message})`, { cause: e });
  }
  const files = await import("./files-node.js");
  const onestoreFiles = files.nodeFiles ?? files.default;
  return callFactory(factory, { wasmBinary, onestoreFiles }, fileURLToPath(dist));
}

// Emscripten 3.1.6's ES module output, in Node, evaluates `__dirname` (which
// an ES module does not have) while the factory starts, and installs
// process-wide `uncaughtException` and `unhandledRejection` handlers that
// rethrow, which would turn any unhandled rejection of the application into
// a crash. The factory gets a `__dirname` for the duration of the call, and
// the handlers it added are removed.
async function callFactory(factory, options, dir) {
  const events = ["uncaughtException", "unhandledRejection"];
  const before = new Map(events.map((e) => [e, new Set(process.listeners(e))]));
  const hadDirname = Object.prototype.hasOwnProperty.call(globalThis, "__dirname");
  if (!hadDirname) globalThis.__dirname = dir.replace(/[\\/]$/, "");
  let pending;
  try {
    pending = factory(options);
  } finally {
    if (!hadDirname) delete globalThis.__dirname;
    for (const e of events) {
      for (const listener of process.listeners(e)) if (!before.get(e).has(listener)) process.removeListener(e, listener);
    }
  }
  return await pending;
}

/**
 * Open options as the core takes them: a sqlite path made absolute and its
 * folder created.
 *
 * @example
 * await prepareNodeOpen({ backend: "sqlite", path: ".data/s.sqlite" })
 * // { backend: "sqlite", path: "/home/me/app/.data/s.sqlite" }
 */
export async function prepareNodeOpen(options) {
  const { onFenced, replica, ...out } = options;
  if (onFenced !== undefined && typeof onFenced !== "function") {
    throw new StoreError(ErrorCodes.InvalidArgs, `openStore: onFenced must be a function (error) => void, got ${typeof onFenced}`);
  }
  if (out.backend === "sqlite" && out.path !== ":memory:") {
    out.path = storeFile(out.path, "openStore");
    try {
      // Made only when missing: an open of an existing store's file (the
      // common case) pays one access() instead of mkdir's EEXIST and stat.
      if (!existsSync(dirname(out.path))) mkdirSync(dirname(out.path), { recursive: true });
    } catch (e) {
      throw new StoreError(ErrorCodes.StorageFailed, `openStore: cannot create the folder of ${out.path}: ${e.message}`, { cause: e });
    }
    // An open in the other role would be refused by the core once it holds
    // the file (CheckRole, src/commit/store.cc), after the holder was
    // fenced: a mistyped path would stop a running store. When the file is
    // held, the open is refused with the core's words first, the holder
    // untouched (see refuseOtherRole).
    if (held.has(out.path) || lockHeldNow(out.path)) {
      await refuseOtherRole(out.path, replica === true);
    }
    if (replica !== true) setOrphanedSnapshotsAside(out.path);
    nodeFiles.holdAs(out.path, replica === true ? "replica" : "store");
    // A store of this process that holds the file lets go of it first (its
    // core closes: SQLite checkpoints and drops the lock): this opener takes
    // it over, as one from another process does.
    held.get(out.path)?.handOver("another store of this process opened it");
    out.session = fileSession(out.path, onFenced);
    out.holdLock = true;
  }
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return out;
}

// A store about to be made where there is no store file (none, or an
// empty one) finds no snapshots of its own: a `<file>.snapshots/` folder
// there is an earlier store's, whose file was removed by hand. Listed as
// this store's, its copies were read by store.at and restore as this
// store's past. It is set aside, kept (it may be that store's only copy):
// `<file>.snapshots.orphaned-<ms since the epoch>`.
function setOrphanedSnapshotsAside(file) {
  let size;
  try {
    size = statSync(file).size;
  } catch {
    size = 0;  // no file
  }
  if (size > 0 || !existsSync(snapshotsDir(file))) return;
  try {
    renameSync(snapshotsDir(file), `${snapshotsDir(file)}.orphaned-${Date.now()}`);
  } catch {
    // Another opener set it aside first, or the folder cannot be moved: the
    // snapshot list says what it finds.
  }
}

// The sessions of this process's open store files, by absolute path.
const held = new Map();

// How often an idle store looks for another process that waits for its file
// (a busy one also looks before each call of its core, at most once a
// millisecond): an opener elsewhere waits about this long for it.
const IDLE_POLL_MS = 20;

// The error of a store whose file `file` was removed while it was open:
// nothing it writes from then on could be kept, so it stops.
function removedError(file) {
  return new StoreError(ErrorCodes.StorageFailed,
    `${file} was removed while its store was open: nothing written to it from then on could be kept, so the store stopped (what it acknowledged before went with the file)`);
}

// The session of a sqlite store file (js/store.js keeps it; fenceWith sets
// `fence` and calls `poll` before each call of the core). The core keeps the
// file's lock for its whole life (holdLock: SQLite in exclusive mode with a
// WAL) and the session hands the store over: when another process announces
// that it waits for the lock ("<path>-lock.want", js/files-node.js), or
// another store of this process opens the file, the store is fenced (every
// later call rejects with `fenced`), its core closes (the WAL is
// checkpointed, the lock file removed) and onFenced(err) is called.
function fileSession(path, onFenced) {
  let ended = false;
  let doomed = null;
  // From the session's start: the open takes the lock after it, and an
  // opener that announces itself meanwhile is seen by the first call a
  // millisecond on, or by the timer (an open and a first read, about a
  // millisecond, make no stat of the announcement).
  let lastPoll = performance.now();
  let timer = null;
  const session = {
    path,
    fence: null,
    poll() {
      if (!session.fence) return;
      if (doomed) { session.handOver(doomed); return; }
      const now = performance.now();
      if (now - lastPoll < 1) return;
      lastPoll = now;
      if (nodeFiles.wanted(path)) session.handOver("another process opened it");
      else if (nodeFiles.removed?.(path)) session.stop(removedError(path));
      // (A WAL removed with the lock: another process's close, most likely.)
      else if (nodeFiles.keepLock?.(path) === "taken") session.handOver(`its lock file ${path}-lock was removed while it was open, and another process opened it`);
      else if (nodeFiles.removed?.(`${path}-wal`)) session.stop(removedError(`${path}-wal`));
    },
    handOver(by) {
      if (ended) return;
      // Still opening (two opens of one file at once in this process): the
      // store hands over at its first call.
      if (!session.fence) { doomed = by; return; }
      const err = new StoreError(ErrorCodes.Fenced,
        `store ${path} (sqlite): ${by} and took it over; this one is fenced (its commits so far are kept; open it again to take it back)`);
      try { session.fence?.(err); } catch { /* the store reports it on its next call */ }
      session.release();
      if (onFenced) {
        try { onFenced(err); } catch (e2) { queueMicrotask(() => { throw e2; }); }
      }
    },
    // Stops the store with `err` (its file is gone): every later call
    // rejects with it.
    stop(err) {
      if (ended) return;
      try { session.fence?.(err); } catch { /* the store reports it on its next call */ }
      session.release();
    },
    release() {
      if (ended) return;
      ended = true;
      clearInterval(timer);
      if (held.get(path) === session) held.delete(path);
    },
  };
  held.set(path, session);
  timer = setInterval(() => session.poll(), IDLE_POLL_MS);
  timer.unref?.();
  return session;
}

/**
 * The absolute file of a sqlite store's `path`: the one check of every path
 * that reaches the file system in Node (the core checks the open's path
 * again, for every runtime). A NUL is refused: the file system takes C
 * strings, so "a\u0000b.sqlite" would be the file "a".
 *
 * @example
 * storeFile(".data/s.sqlite", "openStore")   // "/home/me/app/.data/s.sqlite"
 */
export function storeFile(path, what, { follow = true } = {}) {
  if (path.includes("\0")) {
    throw new StoreError(ErrorCodes.InvalidArgs, `${what}: the path ${JSON.stringify(path)} contains NUL, which no file name can hold`);
  }
  return follow ? realFile(resolve(path)) : resolve(path);
}

// The file an absolute path names with its symlinks followed (the file's
// own, or its folder's while the file is not there yet). A store's lock,
// WAL, blobs and snapshots are named after its file: opened by two names
// (a link to it), one file took two locks, and two writers each
// acknowledged commits the other's close then lost.
function realFile(file) {
  try {
    return realpathSync(file);
  } catch {
    try {
      return join(realpathSync(dirname(file)), basename(file));
    } catch {
      return file;  // no folder yet: the open makes it
    }
  }
}

/**
 * Where a store's blobs live (js/blobs.js): a sqlite file's beside it
 * (`<file>.blobs/`), a memory or ":memory:" store's in memory.
 */
export function openNodeBlobs(options, wire) {
  const onDisk = wire.backend === "sqlite" && wire.path !== ":memory:";
  return { backend: onDisk ? nodeFileBlobs(wire.path) : memoryBlobs(), sha256: nodeSha256 };
}

/**
 * Where a store's snapshots are listed (js/snapshots.js): a sqlite file's in
 * `<file>.snapshots/`, a memory or ":memory:" store's in this process.
 */
export function openNodeSnapshots(wire) {
  const onDisk = wire.backend === "sqlite" && wire.path !== ":memory:";
  return onDisk ? nodeSnapshots(wire.path) : memorySnapshots();
}

/**
 * How far store.lock reaches (js/locks.js): every process that shares a
 * sqlite file (lock files in `<file>.locks/`); a memory store's, this
 * process.
 */
export function openNodeLocks(wire) {
  return wire.backend === "sqlite" && wire.path !== ":memory:" ? nodeFileLocks(wire.path) : null;
}

/** The runtime handed to openStoreWith. */
// An open of a sqlite file whose lock stayed held says who holds it and what
// to do when that holder is gone: SQLite's own "database is locked" names
// neither.
function explainLocked(core, wire) {
  if (wire.backend !== "sqlite" || wire.path === ":memory:") return core;
  const open = core.open;
  core.open = function (text) {
    const answer = open.call(this, text);
    if (typeof answer !== "string" || !answer.startsWith(`!${ErrorCodes.StorageFailed} `) || !answer.includes("database is locked")) return answer;
    const lock = `${wire.path}-lock`;
    let holder;
    try { holder = readFileSync(lock, "utf8").split(" ")[0]; } catch { return answer; }
    return `${answer} (${lock} names its holder, ${JSON.stringify(holder)} (pid@host), which did not let go within lockTimeout; if that process no longer runs, on another host or in another container, delete ${lock})`;
  };
  return core;
}

export const nodeRuntime = Object.freeze({
  backends: ["memory", "sqlite"], load: loadNodeCore, prepare: prepareNodeOpen, attach: explainLocked, openBlobs: openNodeBlobs,
  openSnapshots: openNodeSnapshots, openLocks: openNodeLocks, generations: nodeGenerations(),
  // store.read tells a read inside another read's callback by it (js/store.js).
  AsyncLocalStorage,
});

const SIDE_FILES = ["-journal", "-wal", "-lock", "-lock.break", "-lock.want"];

async function removeFiles(file, what) {
  for (const suffix of ["", ...SIDE_FILES]) {
    try {
      await rm(file + suffix);
    } catch (e) {
      if (e?.code !== "ENOENT") throw new StoreError(ErrorCodes.StorageFailed, `${what}: cannot delete ${file + suffix}: ${e.message}`, { cause: e });
    }
  }
}

/**
 * The new generation of a sqlite store that importStore builds: a file
 * "<path>.import-<random>" beside the store's file (its blobs in
 * "<path>.import-<random>.blobs/"), renamed over it once the whole archive
 * was read and checked, or deleted. The switch is three renames: the
 * store's blob folder aside ("<gen>.old.blobs"), the new one in its place,
 * then the file (the atomic step; the old blob folder is deleted after).
 * The next import to the same path deletes what a crash left, and a crash
 * before the file's rename is undone then: the old blob folder moved back.
 *
 * `begin(openOptions)` resolves to null for a store built in place (memory,
 * ":memory:"), else to the generation: `{ options }` to open it with,
 * `commit({ closeCore })` and `discard()`.
 *
 * @example
 * const gen = await nodeRuntime.generations.begin({ backend: "sqlite", path: ".data/s.sqlite" }); ...; await gen.commit({ closeCore });
 */
function nodeGenerations() {
  return Object.freeze({
    async begin(openOptions) {
      const { backend, path } = openOptions;
      if (backend !== "sqlite" || path === ":memory:") return null;
      if (typeof path !== "string" || path === "") {
        throw new StoreError(ErrorCodes.InvalidArgs, `importStore: a sqlite store needs a path (a file, or ":memory:"), got ${describe(path)}`);
      }
      const file = storeFile(path, "importStore");
      // A journal with content (the store keeps an empty one between
      // transactions) would be rolled back into the new file: refused.
      for (const side of ["-journal", "-wal"]) {
        const size = await stat(file + side).then((st) => st.size, () => 0);
        if (size > 0) {
          throw new StoreError(ErrorCodes.InvalidArgs, `importStore: ${file}${side} holds ${size} bytes: the store at ${file} is open, or has a transaction to recover; close it (or open and close it) before importing over it`);
        }
      }
      try {
        await mkdir(dirname(file), { recursive: true });
      } catch (e) {
        throw new StoreError(ErrorCodes.StorageFailed, `importStore: cannot create the folder of ${file}: ${e.message}`, { cause: e });
      }
      // Imports to one path run one at a time (across processes too): the
      // cleanup below would take another running import's generation for
      // a crash's leftovers and delete it under that import.
      let held;
      try {
        held = await nodeFileLocks(file).acquire(IMPORT_LOCK, IMPORT_WAIT_MS);
      } catch (e) {
        // The lock's folder <path>.locks cannot be made (a name too long,
        // no permission): as openStore, a storage failure naming it.
        if (e instanceof StoreError) throw e;
        throw new StoreError(ErrorCodes.StorageFailed, `importStore: cannot take the import lock beside ${file}: ${e?.message ?? e}`, { cause: e });
      }
      // Released with the lock folder when nothing else is in it, so an
      // import leaves no files beside the store's own.
      const release = async () => {
        await held();
        await rmdir(locksDir(file)).catch(() => {});
      };
      try {
        return await beginLocked(file, release);
      } catch (e) {
        await release();
        throw e;
      }
    },
  });
}

// The store lock (js/locks-node.js) an import holds from its begin to its
// switch or discard, and how long a second import waits for it.
const IMPORT_LOCK = "onestore:import";
const IMPORT_WAIT_MS = 24 * 3600 * 1000;

// begin() once the import lock is held: undoes or removes what a crashed
// import left, and names the new generation.
async function beginLocked(file, release) {
  refuseOpen(file);
  // An import replaces the file at the path: never one that is no store.
  await refuseOtherFile(file, "importStore", "it was left as it is");
  const prefix = `${basename(file)}.import-`;
  const names = await readdir(dirname(file));
  const undone = new Set();
  for (const name of names) {
    // A switch cut before its file's rename: the old blobs and snapshots go back.
    const m = name.startsWith(prefix) && /^([0-9a-f]{12})\.old\.(?:blobs|snapshots)$/.exec(name.slice(prefix.length));
    if (m && names.includes(prefix + m[1]) && !undone.has(m[1])) {
      undone.add(m[1]);
      await undoSwitch(file, resolve(dirname(file), prefix + m[1]));
    }
  }
  for (const name of await readdir(dirname(file))) {
    const m = name.startsWith(prefix) && /^([0-9a-f]{12})(-journal|-wal|-lock|-lock\.break|-lock\.want|\.blobs|\.old\.blobs|\.old\.snapshots)?$/.exec(name.slice(prefix.length));
    if (!m) continue;
    if (m[2] === ".blobs" || m[2] === ".old.blobs" || m[2] === ".old.snapshots") await rm(resolve(dirname(file), name), { recursive: true, force: true });
    else await removeFiles(resolve(dirname(file), prefix + m[1]), "importStore");
  }
  const gen = { file, path: file + ".import-" + globalThis.crypto.randomUUID().replaceAll("-", "").slice(0, 12) };
  return {
    // Relaxed: the file is synced whole before the switch (commitGeneration).
    options: { path: gen.path, durability: "relaxed" },
    async commit({ closeCore }) {
      closeCore();
      try {
        await commitGeneration(gen);
      } finally {
        await release();
      }
    },
    async discard() {
      try {
        await discardGeneration(gen);
      } finally {
        await release();
      }
    },
  };
}

// An open store holds its file's lock for life: an import must not switch
// its file away under it, nor a delete remove it (the store would go on
// writing a deleted file, and lose every commit it acknowledges).
function refuseOpen(file, what = "importStore", advice = "close it before importing over it") {
  if (lockHeldNow(file)) {
    throw new StoreError(ErrorCodes.InvalidArgs, `${what}: the store at ${file} is open (a process holds ${file}-lock); ${advice}`);
  }
}

async function commitGeneration(gen) {
  refuseOpen(gen.file);
  await refuseOtherFile(gen.file, "importStore", "it was left as it is");
  const aside = `${gen.path}.old.blobs`;
  // The old store's snapshots are of another session's content: they go
  // with it (a restore or store.at would bring its rows back).
  const asideSnapshots = `${gen.path}.old.snapshots`;
  try {
    const fd = await openFile(gen.path, "r+");
    try { await fd.sync(); } finally { await fd.close(); }
    if (await isDir(blobsDir(gen.file))) await rename(blobsDir(gen.file), aside);
    if (await isDir(blobsDir(gen.path))) await rename(blobsDir(gen.path), blobsDir(gen.file));
    if (await isDir(snapshotsDir(gen.file))) await rename(snapshotsDir(gen.file), asideSnapshots);
    await rename(gen.path, gen.file);
    // The rename is durable once the folder is synced.
    const dir = await openFile(dirname(gen.file), "r");
    try { await dir.sync(); } finally { await dir.close(); }
  } catch (e) {
    throw new StoreError(ErrorCodes.StorageFailed, `importStore: cannot move ${gen.path} to ${gen.file}: ${e.message}`, { cause: e });
  }
  await removeFiles(gen.path, "importStore");
  await rm(aside, { recursive: true, force: true });
  await rm(asideSnapshots, { recursive: true, force: true });
}

async function discardGeneration(gen) {
  await removeFiles(gen.path, "importStore");
  await rm(blobsDir(gen.path), { recursive: true, force: true });
}

async function isDir(path) {
  return stat(path).then((st) => st.isDirectory(), () => false);
}

// Puts the store's blob folder back from "<gen>.old.blobs" and its
// snapshots from "<gen>.old.snapshots" (a switch cut before its file's
// rename): the new blobs go back to the generation, which is then deleted
// with them.
async function undoSwitch(file, genPath) {
  const aside = `${genPath}.old.blobs`;
  if (await isDir(aside)) {
    if (await isDir(blobsDir(file))) await rename(blobsDir(file), blobsDir(genPath));
    await rename(aside, blobsDir(file));
  }
  const asideSnapshots = `${genPath}.old.snapshots`;
  if (await isDir(asideSnapshots) && !(await isDir(snapshotsDir(file)))) await rename(asideSnapshots, snapshotsDir(file));
}

/**
 * Deletes a sqlite store's file, its side files (`-journal`, `-wal`,
 * `-lock`, `-lock.break`, `-lock.want`), its blobs (`.blobs/`), its
 * snapshots (`.snapshots/`) and its lock files (`.locks/`). Close the
 * store first: a store open in any process (a live holder of `<file>-lock`)
 * is refused with invalid/args. Resolves to true, or false when there was
 * no store file.
 *
 * @example
 * await deleteStore({ backend: "sqlite", path: ".data/s.sqlite" });
 */
export async function deleteNodeStore(options) {
  if (options === null || typeof options !== "object") {
    throw new StoreError(ErrorCodes.InvalidArgs, `deleteStore: options must be an object such as { backend: "sqlite", path: ".data/s.sqlite" }, got ${String(options)}`);
  }
  if (options.backend !== "sqlite") {
    throw new StoreError(ErrorCodes.InvalidArgs, `deleteStore: backend must be "sqlite" in Node, got ${describe(options.backend)}`);
  }
  refuseUnknownOptions(options, ["backend", "path"], "deleteStore");
  const { path } = options;
  if (typeof path !== "string" || path === "" || path === ":memory:") {
    throw new StoreError(ErrorCodes.InvalidArgs, `deleteStore: a sqlite store's path must name a file, got ${describe(path)}`);
  }
  const file = storeFile(path, "deleteStore");
  refuseOpen(file, "deleteStore", "close it first; nothing was deleted");
  await refuseOtherFile(file);
  let found = false;
  for (const suffix of ["", "-journal", "-wal", "-lock", "-lock.break", "-lock.want"]) {
    try {
      await rm(file + suffix);
      if (suffix === "") found = true;
    } catch (e) {
      if (e?.code === "ENOENT") continue;
      throw new StoreError(ErrorCodes.StorageFailed, `deleteStore: cannot delete ${file + suffix}: ${e.message}`, { cause: e });
    }
  }
  for (const dir of [blobsDir(file), snapshotsDir(file), locksDir(file)]) {
    try {
      await rm(dir, { recursive: true, force: true });
    } catch (e) {
      throw new StoreError(ErrorCodes.StorageFailed, `deleteStore: cannot delete ${dir}: ${e.message}`, { cause: e });
    }
  }
  return found;
}

export const SQLITE_MAGIC = "SQLite format 3\0";

// The first 16 bytes of `path` as latin1 text ("" for an empty file), or
// undefined when it cannot be read: SQLITE_MAGIC for a SQLite database.
export async function fileMagic(path) {
  const head16 = Buffer.alloc(16);
  try {
    const fd = await openFile(path, "r");
    try { return head16.toString("latin1", 0, (await fd.read(head16, 0, 16, 0)).bytesRead); } finally { await fd.close(); }
  } catch { return undefined; }
}

// deleteStore's and importStore's check that `file` is a store's before it
// is deleted or replaced: a file that is no SQLite database, or another
// application's database (a mistyped path), is refused. A missing or empty
// file, and one with a WAL beside it (a store open in some process, or left
// by a crash, which the callers refuse themselves), pass.
async function refuseOtherFile(file, what = "deleteStore", untouched = "nothing was deleted") {
  const magic = await fileMagic(file);
  if (!magic) return;  // no file (or none readable: the deletes below say so), or an empty one
  const refuse = (why) => new StoreError(ErrorCodes.InvalidArgs, `${what}: ${file} ${why}; ${untouched}`);
  if (magic !== SQLITE_MAGIC) throw refuse("is not a store (not a SQLite database)");
  if (await stat(file + "-wal").then(() => true, () => false)) return;
  const answer = (await loadNodeCore()).peekStore(file, false);
  if (answer.startsWith(`!${ErrorCodes.NotFound} `)) throw refuse("is a SQLite database of another application, not a store");
}

// Whether another process holds the file's lock; false when that cannot be
// told (a path under a file, a folder it cannot read): the open itself then
// says what is wrong with the path.
function lockHeldNow(path) {
  try {
    return nodeFiles.lockHeld(path);
  } catch {
    return false;
  }
}

// Refuses an open of a held store file in the role it does not have (see
// prepareNodeOpen). The holder's lock names the role it opened the file in
// (js/files-node.js), which the core accepted: an open in the same role, a
// takeover, reads nothing more. Otherwise (an openReplica of a held owner's
// file, which is refused only if it holds commits, or a lock without a role)
// the file's role and head are read from a private copy of it, as
// listStores reads it; an unreadable copy leaves the check to the core.
async function refuseOtherRole(path, replica) {
  const role = nodeFiles.lockRole(path);
  if (role === (replica ? "replica" : "store")) return;
  const peek = role === "replica" ? { replica: true } : await peekCopy(await loadNodeCore(), path).then((a) => (a.startsWith("!") ? null : JSON.parse(a)));
  if (peek === null) return;
  const open = "it is open in another store or process, which keeps it";
  if (peek.replica && !replica) {
    throw new StoreError(ErrorCodes.InvalidArgs, `openStore: ${path} is a replica (it changes only by its driver's batches); open it with openReplica (${open})`);
  }
  if (!peek.replica && replica && peek.head > 0) {
    throw new StoreError(ErrorCodes.InvalidArgs, `openReplica: ${path} holds an owner's commits (head ${peek.head}); a replica starts from an empty store: open a new one (${open})`);
  }
}

// peekStore on a private copy of a held store's file and its WAL, in a
// temporary folder removed afterwards: "!…" when the copy cannot be read.
async function peekCopy(mod, path) {
  let dir;
  try {
    dir = await mkdtemp(join(tmpdir(), "onestore-peek-"));
    const copy = join(dir, "s.sqlite");
    await copyFile(path, copy);
    await copyFile(path + "-wal", copy + "-wal").catch(() => {});
    return mod.peekStore(copy, true);
  } catch (e) {
    return `!${e?.message ?? e}`;
  } finally {
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The sqlite stores in folder `dir` (not its subfolders): each
 * `{ path, id, head, size, replica }`, by path. `size` is the bytes of the
 * database file and its journal; blobs and snapshots beside it are not
 * counted. A store is read without being opened (a read-only look at its
 * _meta; for a store open in some process, whose file is held in WAL mode,
 * a look at a private copy of its file and WAL, which costs a copy of the
 * file), so listing never takes over a store another process owns. Files
 * that are not stores (other files, SQLite databases of other applications,
 * side files, an import's new generation) are skipped.
 *
 * @example
 * for (const s of await listStores({ backend: "sqlite", dir: ".data/sessions" })) console.log(s.id, s.head, s.size);
 */
export async function listNodeStores(options) {
  if (options === null || typeof options !== "object") {
    throw new StoreError(ErrorCodes.InvalidArgs, `listStores: options must be an object such as { backend: "sqlite", dir: ".data" }, got ${String(options)}`);
  }
  if (options.backend !== "sqlite") {
    throw new StoreError(ErrorCodes.InvalidArgs, `listStores: backend must be "sqlite" in Node (memory stores live in their process and are not listed), got ${describe(options.backend)}`);
  }
  refuseUnknownOptions(options, ["backend", "dir"], "listStores");
  const { dir } = options;
  if (typeof dir !== "string" || dir === "") {
    throw new StoreError(ErrorCodes.InvalidArgs, `listStores: dir must name a folder, got ${describe(dir)}`);
  }
  const folder = storeFile(dir, "listStores", { follow: false });  // its stores named under the folder as given
  let names;
  try {
    names = (await readdir(folder, { withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name).sort();
  } catch (e) {
    if (e?.code === "ENOENT") return [];
    throw new StoreError(ErrorCodes.StorageFailed, `listStores: cannot read the folder ${folder}: ${e.message}`, { cause: e });
  }
  const mod = await loadNodeCore();
  const out = [];
  for (const name of names) {
    if (SIDE_FILES.some((side) => name.endsWith(side)) || /\.import-[0-9a-f]{12}$/.test(name)) continue;
    const path = resolve(folder, name);
    if ((await fileMagic(path)) !== SQLITE_MAGIC) continue;
    // A store open in some process holds its file in exclusive WAL mode: no
    // other connection reads it, and its newest commits are in <file>-wal.
    // Read a private copy of the two instead (SQLite recovers the WAL there).
    // The copy is taken without asking for the lock: a peek that waited for
    // it would announce itself, and the holder would hand its store over.
    const open = nodeFiles.lockHeld(path);
    let answer = open ? await peekCopy(mod, path) : mod.peekStore(path, false);
    if (!open && answer.startsWith("!") && (await stat(path + "-wal").then(() => true, () => false))) answer = await peekCopy(mod, path);
    if (answer.startsWith("!")) continue;  // another application's database, or one it cannot read now
    const peek = JSON.parse(answer);
    let size = 0;
    for (const suffix of ["", "-journal", "-wal"]) size += await stat(path + suffix).then((st) => st.size, () => 0);
    out.push({ path, id: peek.id, head: peek.head, size, replica: peek.replica });
  }
  return out;
}

