// The browser runtime of the package (a page or a dedicated Worker): loads
// the wasm core once per realm and opens "opfs" stores: the store's Web Lock,
// then its OPFS handles (js/files-opfs.js), handed to the store as a
// `session`.
//
// The core is reached the way bundlers follow without configuration: a
// static import of Emscripten's module, and the .wasm as
// `new URL("../dist/onestore-core.wasm", import.meta.url)`, which Vite and
// webpack 5 emit as an asset and rewrite to its URL (served unbundled, it is
// the file beside the .mjs). The factory gets an `instantiateWasm` hook, so
// that URL is the only one the .wasm is fetched from: Emscripten never builds
// one itself (wasm/flags.cmake, USE_ES6_IMPORT_META). A bundler that leaves
// the URL alone (esbuild) or a server that moves the file:
// configureBrowserCore(). tests/bundlers/ builds apps with each tool.

import factory from "../dist/onestore-core.mjs";

import { ErrorCodes, invalidArgs, refuseUnknownOptions, StoreError } from "./errors.js";
import { describe } from "./schema.js";
import { memoryBlobs, webSha256 } from "./blobs.js";
import { webLocks } from "./locks.js";
import { opfsBlobs } from "./blobs-opfs.js";
import { memorySnapshots } from "./snapshots.js";
import { opfsSnapshots } from "./snapshots-opfs.js";
import { opfsGenerations, settleOpfsImports } from "./archive-opfs.js";
import { acquireOpfsFiles, checkOpfsAvailable, checkOpfsName, listOpfsStores, opfsDbPath, opfsFiles, removeOpfsStore } from "./files-opfs.js";

let modulePromise = null;
let wasmUrlOverride = null;

/**
 * Sets where the core's .wasm is fetched from (a bundler's asset URL, say).
 * Call it before the first openStore().
 *
 * @example
 * configureBrowserCore({ wasmUrl: new URL("./onestore-core.wasm", import.meta.url) });
 */
export function configureBrowserCore(options = {}) {
  if (options === null || typeof options !== "object") throw invalidArgs(`configureBrowserCore: options must be { wasmUrl }, got ${describe(options)}`);
  refuseUnknownOptions(options, ["wasmUrl"], "configureBrowserCore");
  const { wasmUrl } = options;
  wasmUrlOverride = wasmUrl ? String(wasmUrl) : null;
}

/**
 * The wasm module (the factory's instance), loaded once and shared by every
 * store of this realm.
 *
 * @example
 * const mod = await loadBrowserCore(); const core = new mod.Core();
 */
export function loadBrowserCore(extra = {}) {
  if (!modulePromise) {
    modulePromise = instantiate(extra).catch((e) => {
      modulePromise = null;
      throw e;
    });
  }
  return modulePromise;
}

async function instantiate(extra) {
  const hint = wasmUrlOverride ? "" : " (a bundler that does not emit the package's .wasm, or a server that moved it: " +
    "pass its URL to configureBrowserCore({ wasmUrl }) before the first openStore)";
  let wasmUrl = wasmUrlOverride;
  if (!wasmUrl) {
    try {
      // Written out literally: bundlers recognize exactly this form.
      wasmUrl = new URL("../dist/onestore-core.wasm", import.meta.url).href;
    } catch (e) {
      // A base no relative URL resolves against: the module inlined into a
      // blob: or data: Worker (Vite's `?worker&inline`). Before, the open
      // rejected with a bare TypeError ("Invalid URL").
      throw new StoreError(ErrorCodes.StorageFailed,
        `onestore: "../dist/onestore-core.wasm" does not resolve against ${import.meta.url} (${e?.message}): pass the .wasm's absolute URL to configureBrowserCore({ wasmUrl })`, { cause: e });
    }
  }
  // A failed fetch must reject the open, not leave the factory waiting.
  let fail;
  const failed = new Promise((_, reject) => { fail = reject; });
  return Promise.race([failed, factory({
    onestoreFiles: opfsFiles,
    ...extra,
    instantiateWasm(imports, done) {
      streamWasm(wasmUrl, imports).then(
        ({ instance, module }) => done(instance, module),
        (e) => fail(new StoreError(ErrorCodes.StorageFailed, `onestore: cannot load the wasm core from ${wasmUrl}: ${e.message}${hint}`, { cause: e })));
      return {};  // Emscripten's "instantiating asynchronously" answer
    },
  })]);
}

async function streamWasm(url, imports) {
  const response = await fetch(url);
  if (response.status === 403) {
    // Vite's dev server refuses files outside `server.fs.allow`: a package
    // installed from a folder (npm link, a file: dependency) is a symlink
    // out of the app's root (docs/guide.md, "Use it with your bundler").
    throw new Error("HTTP 403 (a dev server refuses a package linked from outside the app's folder: add its folder to Vite's server.fs.allow)");
  }
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  // A dev server's fallback for a missing file (Vite's index.html).
  if (response.headers.get("content-type")?.includes("html")) throw new Error("the server answered an HTML page, not the .wasm");
  if (WebAssembly.instantiateStreaming && response.headers.get("content-type")?.startsWith("application/wasm")) {
    return WebAssembly.instantiateStreaming(response, imports);
  }
  return WebAssembly.instantiate(await response.arrayBuffer(), imports);
}

const DEFAULT_LOCK_TIMEOUT = 10000;

function lockTimeoutOf(options, what) {
  const t = options.lockTimeout ?? DEFAULT_LOCK_TIMEOUT;
  if (!Number.isSafeInteger(t) || t < 0 || t > 3600000) {
    throw new StoreError(ErrorCodes.InvalidArgs, `${what}: lockTimeout must be a number of milliseconds (0 to 3600000), got ${describe(options.lockTimeout)}`);
  }
  return t;
}

/** The Web Lock that says which tab or worker owns OPFS store `name`. */
export function opfsLockName(name) {
  return `onestore:opfs:${name}`;
}

// The error of a store taken over by another tab or worker; `opening`:
// during its own open, which then rejects with it (docs/api.md, "The opfs
// backend").
function fencedError(name, opening = false) {
  return new StoreError(ErrorCodes.Fenced,
    `store ${JSON.stringify(name)} (opfs): another tab or worker took it over ${opening ? "during this open" : "(an open, deleteStore or importStore); this one is fenced"}`);
}

// Takes store `name` over: its Web Lock (stealing it from any owner, which is
// then fenced), then its OPFS handles (waiting up to timeoutMs while the
// fenced owner releases them). The session it resolves to is what
// openStoreWith hands to the store: the store sets `session.fence(err)` (stop
// and close the core) and calls `session.release()` after closing the core.
// `onFenced(err)` is called once if another owner takes the store over after
// the open. A take-over during the open (before the store sets its fence)
// fails the open with `fenced` instead: while the handles are being
// acquired, at once (acquireOpfsFiles gives up and lets go of those it got);
// later, when the store sets its fence, which closes the core, releases the
// files and leaves `session.openFailure` for fenceWith (js/core-calls.js)
// to throw. Before, such an open resolved with a store already fenced (its
// onFenced called before the open resolved), which an app that opens in a
// Worker and serves the store on success (the guide's pattern) never
// reported to its page.
async function openOpfsSession(name, timeoutMs, onFenced, role) {
  const what = `openStore(opfs ${JSON.stringify(name)})`;
  if (!globalThis.navigator?.locks?.request) {
    throw new StoreError(ErrorCodes.InvalidArgs, `${what}: this realm has no Web Locks (navigator.locks); open the store in a dedicated Worker of a secure page`);
  }
  let releaseLock;
  const hold = new Promise((r) => { releaseLock = r; });
  let granted;
  let refused;
  const gotLock = new Promise((ok, no) => { granted = ok; refused = no; });
  let releaseFiles = null;
  let ended = false;   // released by its store (or a failed open)
  let stolen = false;
  let told = false;
  let fence = null;
  let openFailure = null;  // taken over before the store set its fence
  const stop = new AbortController();  // aborted when stolen: acquireOpfsFiles stops waiting
  // Stolen: another opener took the lock. Stop, flush, release the files.
  const fenceNow = () => {
    const err = fencedError(name);
    try { fence(err); } catch { /* the store reports it on its next call */ }
    try { session.release(); } catch { /* released anyway */ }
    if (onFenced && !told) {
      told = true;
      try { onFenced(err); } catch (e2) { queueMicrotask(() => { throw e2; }); }
    }
  };
  const session = {
    name,
    get fence() { return fence; },
    // A steal while the store was still opening (after its files were
    // taken, before the store could be fenced): the core closes and the
    // files go to the new owner now, and the open fails with fenced
    // (fenceWith throws openFailure); onFenced is not called, the open's
    // rejection says it.
    set fence(f) {
      fence = f;
      if (stolen && f && !openFailure) {
        openFailure = fencedError(name, true);
        try { f(openFailure); } catch { /* closed below anyway */ }
        try { session.release(); } catch { /* released anyway */ }
      }
    },
    get openFailure() { return openFailure; },
    release() {
      if (ended) return;
      ended = true;
      try {
        releaseFiles?.();
      } finally {
        releaseLock();
      }
    },
  };
  // The role's lock says how the store is open (roleTaken), held as long.
  navigator.locks.request(`${opfsLockName(name)}#${role}`, { steal: true }, () => hold).catch(() => {});
  navigator.locks.request(opfsLockName(name), { steal: true }, () => { granted(); return hold; }).then(
    () => {},
    (e) => {
      if (ended) return;
      if (e?.name !== "AbortError") { refused(e); return; }
      stolen = true;
      const err = fencedError(name, true);
      stop.abort(err);  // still acquiring the files: stop waiting, let go of those got
      refused(err);
      if (fence) fenceNow();  // else still opening: the open rejects below, or its fence setter fails it
    },
  );
  try {
    await gotLock;
    releaseFiles = await acquireOpfsFiles(name, timeoutMs, stop.signal);
    if (stolen) throw fencedError(name, true);
  } catch (e) {
    try { session.release(); } catch { /* the first error says more */ }
    if (e instanceof StoreError) throw e;
    throw new StoreError(ErrorCodes.StorageFailed, `${what}: ${e?.name}: ${e?.message}`, { cause: e });
  }
  return session;
}

/**
 * Open options as the core takes them. For "opfs": takes the store over (its
 * Web Lock and OPFS handles) and adds the `session` that the store keeps.
 */
export async function prepareBrowserOpen(options) {
  const { name, onFenced, ...out } = options;
  if (out.backend === "opfs") {
    // An import opens its generation ("<name>.import-<12 hex>") here too;
    // the public openStore and openReplica refuse such names before.
    checkOpfsName(name, "openStore", true);
    if (onFenced !== undefined && typeof onFenced !== "function") {
      throw new StoreError(ErrorCodes.InvalidArgs, `openStore: onFenced must be a function (error) => void, got ${typeof onFenced}`);
    }
    const timeout = lockTimeoutOf(out, "openStore");
    checkOpfsAvailable(`openStore(opfs ${JSON.stringify(name)})`);
    // Open in the other role (a replica's name given to openStore, or an
    // owner's to openReplica), which the core would refuse: refused here,
    // before the take-over would fence the tab that has it open.
    const other = out.replica ? "store" : "replica";
    if ((await navigator.locks?.query?.())?.held?.some((l) => l.name === `${opfsLockName(name)}#${other}`)) {
      throw invalidArgs(`${out.replica ? "openReplica" : "openStore"}: ${JSON.stringify(name)} is open as ${other === "replica" ? "a replica" : "an owner's store"} in another tab or worker (left open there)`);
    }
    await loadBrowserCore();  // loaded first: only microtasks run between the take-over and the store's open
    // An import whose switch a crash cut is finished first, under the
    // store's lock (js/archive-opfs.js); opening takes the lock over anyway.
    if (globalThis.navigator?.locks?.request) {
      try {
        await navigator.locks.request(opfsLockName(name), { steal: true }, () => settleOpfsImports(name));
      } catch (e) {
        // The lock stolen meanwhile: another opener took the store over.
        if (e?.name === "AbortError") throw new StoreError(ErrorCodes.Fenced, `openStore(opfs ${JSON.stringify(name)}): another opener took the store over during this open`, { cause: e });
        throw new StoreError(ErrorCodes.StorageFailed, `openStore(opfs ${JSON.stringify(name)}): cannot finish an import's switch: ${e?.name}: ${e?.message}`, { cause: e });
      }
    }
    out.session = await openOpfsSession(name, timeout, onFenced, out.replica ? "replica" : "store");
    out.path = opfsDbPath(name);
  }
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return out;
}

/**
 * Deletes an OPFS store: `{ backend: "opfs", name }`. Takes the store's Web
 * Lock (fencing its owner, in any tab), waits for its handles, and removes
 * its folder. Resolves to true, or false when there was no such store.
 *
 * @example
 * await deleteStore({ backend: "opfs", name: "session-42" });
 */
export async function deleteStore(options) {
  if (options === null || typeof options !== "object") {
    throw new StoreError(ErrorCodes.InvalidArgs, `deleteStore: options must be an object such as { backend: "opfs", name: "session-42" }, got ${String(options)}`);
  }
  if (options.backend !== "opfs") {
    throw new StoreError(ErrorCodes.InvalidArgs, `deleteStore: backend must be "opfs" here, got ${JSON.stringify(options.backend) ?? String(options.backend)}`);
  }
  refuseUnknownOptions(options, ["backend", "name", "lockTimeout"], "deleteStore");
  checkOpfsName(options.name, "deleteStore");
  const timeout = lockTimeoutOf(options, "deleteStore");
  if (!globalThis.navigator?.locks?.request) {
    throw new StoreError(ErrorCodes.InvalidArgs, "deleteStore: this realm has no Web Locks (navigator.locks)");
  }
  return navigator.locks.request(opfsLockName(options.name), { steal: true }, () => removeOpfsStore(options.name, timeout));
}

/**
 * Where a store's blobs live (js/blobs.js): an opfs store's in its OPFS
 * folder (blobs/), a memory store's in memory.
 */
export function openBrowserBlobs(options, wire) {
  return { backend: wire.backend === "opfs" ? opfsBlobs(options.name) : memoryBlobs(), sha256: webSha256 };
}

/**
 * Where a store's snapshots are (js/snapshots.js): an opfs store's in its
 * OPFS folder (snapshots/, js/snapshots-opfs.js), a memory store's in memory.
 */
export function openBrowserSnapshots(wire) {
  if (wire.backend !== "opfs") return memorySnapshots();
  const name = /^\/[^/]+\/(.+)\/[^/]+$/.exec(wire.path)[1];  // opfsDbPath(name)
  return opfsSnapshots(name);
}

/**
 * The OPFS stores of this origin: `listStores({ backend: "opfs", prefix? })`
 * (js/files-opfs.js, listOpfsStores).
 *
 * @example
 * const stores = await listStores({ backend: "opfs", prefix: "conv-" });
 */
export async function listStores(options) {
  if (options === null || typeof options !== "object") {
    throw new StoreError(ErrorCodes.InvalidArgs, `listStores: options must be an object such as { backend: "opfs", prefix: "conv-" }, got ${String(options)}`);
  }
  if (options.backend !== "opfs") {
    throw new StoreError(ErrorCodes.InvalidArgs, `listStores: backend must be "opfs" here, got ${JSON.stringify(options.backend) ?? String(options.backend)}`);
  }
  refuseUnknownOptions(options, ["backend", "prefix"], "listStores");
  const { prefix = "" } = options;
  if (typeof prefix !== "string") {
    throw new StoreError(ErrorCodes.InvalidArgs, `listStores: prefix must be a string, got ${JSON.stringify(prefix) ?? String(prefix)}`);
  }
  const mod = await loadBrowserCore();
  const held = new Set(globalThis.navigator?.locks?.query ? (await navigator.locks.query()).held.map((l) => l.name) : []);
  return listOpfsStores(prefix, (path) => mod.peekStore(path, true), (name) => held.has(opfsLockName(name)));
}

/**
 * How far store.lock reaches (js/locks.js): an opfs store's, every tab and
 * worker of the origin (Web Locks); a memory store's, this realm.
 */
export function openBrowserLocks(wire) {
  return wire.backend === "opfs" && globalThis.navigator?.locks?.request ? webLocks(`opfs:${wire.path}`) : null;
}

/** The runtime handed to openStoreWith. */
export const browserRuntime = Object.freeze({
  backends: ["memory", "opfs"], load: () => loadBrowserCore(), prepare: prepareBrowserOpen, openBlobs: openBrowserBlobs,
  openLocks: openBrowserLocks, openSnapshots: openBrowserSnapshots,
  generations: opfsGenerations({ lockName: opfsLockName, timeoutOf: lockTimeoutOf }),
});
