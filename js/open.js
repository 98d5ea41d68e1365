// Opening a core: the option checks, the runtime's preparation (opfs: its
// Web Lock and handles; durable: its storage), loading the wasm module and
// Core.open. Stores (js/store.js) and replicas (js/replica.js) open the
// same way and differ only in what they build over the opened core.

import { asStoreError, invalidArgs, unwrap } from "./errors.js";
import { withRawCalls } from "./core-calls.js";
import { encodeJson } from "./encode.js";
import { describe } from "./schema.js";
import { memoryBlobs, webSha256 } from "./blobs.js";
import { memorySnapshots } from "./snapshots.js";

// Every option of openStore, openReplica, importStore and pullSession
// (docs/api.md, "openStore"): a misspelt one (durabilty) is refused, not
// dropped.
const OPEN_OPTIONS = ["backend", "path", "name", "storage", "id", "durability", "lockTimeout", "onFenced", "keepSnapshots", "snapshotEvery", "adoptForeign", "vectorCache"];
// The options of some backends only (the others take every backend).
const BACKEND_OPTIONS = {
  path: ["sqlite"], name: ["opfs"], storage: ["durable"],
  durability: ["sqlite", "opfs"], lockTimeout: ["sqlite", "opfs"], onFenced: ["sqlite", "opfs"], adoptForeign: ["sqlite", "opfs"],
};

/**
 * Checks `options`, prepares them with `runtime`, loads the core and opens
 * it. `what` names the call in errors ("openStore", "openReplica"); `extra`
 * is added to the core's open options (`{ replica: true }`). Resolves to
 * `{ core, info, session, blobs, snapshots }`: the opened Core, its `{ id, head }`, what
 * the runtime holds for it (released by the caller after the core closes),
 * where its blobs live (`{ backend, sha256 }`, js/blobs.js; the
 * runtime's `openBlobs`, else in memory), and where its snapshots are
 * listed (js/snapshots.js; null where the backend cannot take them).
 *
 * @example
 * const { core, info, session } = await openCore(nodeRuntime, { backend: "memory" }, "openStore");
 */
export async function openCore(runtime, options, what, extra = {}) {
  if (options === null || typeof options !== "object") {
    throw invalidArgs(`${what}: options must be an object such as { backend: "memory" }, got ${describe(options)}`);
  }
  for (const k of Object.keys(options)) {
    if (!OPEN_OPTIONS.includes(k)) throw invalidArgs(`${what}: unknown option ${JSON.stringify(k)}; the options are ${OPEN_OPTIONS.join(", ")} (docs/api.md, "openStore")`);
  }
  const { backend, path, name, id, durability, lockTimeout, onFenced, storage, adoptForeign, vectorCache } = options;
  if (!runtime.backends.includes(backend)) {
    const names = runtime.backends.map((b) => JSON.stringify(b)).join(" or ");
    throw invalidArgs(`${what}: backend must be ${names} here, got ${describe(backend)}`);
  }
  if (backend === "sqlite" && (typeof path !== "string" || path === "")) {
    throw invalidArgs(`${what}: a sqlite store needs a path (a file, or ":memory:"), got ${describe(path)}`);
  }
  // A memory store given a file's or an OPFS store's name would look
  // persistent and keep nothing: refused, not ignored.
  if (backend === "memory" && (path !== undefined || name !== undefined)) {
    const [opt, v, other] = path !== undefined ? ["path", path, "sqlite"] : ["name", name, "opfs"];
    throw invalidArgs(`${what}: a memory store keeps its rows in this process only; ${opt} ${describe(v)} is for backend "${other}"`);
  }
  // Any other option of another backend is refused too: set, it would be
  // ignored (a durable store given durability: "relaxed", an opfs store
  // given a path).
  for (const k of Object.keys(options)) {
    const backends = BACKEND_OPTIONS[k];
    if (backends && !backends.includes(backend) && options[k] !== undefined) {
      throw invalidArgs(`${what}: option ${k} is for backend ${backends.map((b) => JSON.stringify(b)).join(" or ")}, not ${JSON.stringify(backend)}`);
    }
  }
  if (id !== undefined && (typeof id !== "string" || id === "")) {
    throw invalidArgs(`${what}: id must be a non-empty string, got ${describe(id)}`);
  }
  // A new store gets a random session id; an existing one keeps its own.
  // The core checks adoptForeign's type (sqlite and opfs files only).
  const { session, ...wire } = await runtime.prepare({
    backend, path, id: id ?? newId(), durability, lockTimeout,
    // The core checks it: bytes nearest may keep in the core (0: none).
    vectorCache,
    ...(backend === "sqlite" || backend === "opfs" ? { adoptForeign } : {}),
    // opfs: the role too, so that an open in the other role is refused
    // before it takes the store over (js/loader-browser.js).
    ...(backend === "opfs" ? { name, onFenced, replica: extra.replica } : {}),
    ...(backend === "sqlite" ? { onFenced, replica: extra.replica } : {}),
    ...(backend === "durable" ? { storage } : {}),
  });
  Object.assign(wire, extra);
  const release = () => { try { session?.release(); } catch { /* closing anyway */ } };
  let core;
  try {
    const mod = await runtime.load();
    core = withRawCalls(mod, new mod.Core());
    // A runtime may wrap the core (workerd: the durable backend's writing
    // calls run inside ctx.storage.transactionSync).
    if (runtime.attach) core = runtime.attach(core, wire);
  } catch (e) {
    release();
    throw asStoreError(e, what);
  }
  try {
    const info = JSON.parse(unwrap(core.open(encodeJson(wire, "options"))));
    const blobs = runtime.openBlobs ? runtime.openBlobs(options, wire) : { backend: memoryBlobs(), sha256: webSha256 };
    // Where its snapshots are listed (js/snapshots.js): null where the
    // backend cannot copy itself.
    const snapshots = runtime.openSnapshots ? runtime.openSnapshots(wire) : (wire.backend === "memory" ? memorySnapshots() : null);
    // How far store.lock reaches beyond this realm (js/locks.js): null for
    // this realm only.
    const locks = runtime.openLocks ? runtime.openLocks(wire) : null;
    return { core, info, session, blobs, snapshots, locks };
  } catch (e) {
    try { core.delete(); } catch { /* already gone */ }
    release();
    throw asStoreError(e, what);
  }
}

// A random session id: a UUID where crypto.randomUUID exists (a secure
// context, Node, workerd), else 32 hex digits from getRandomValues (a page
// served over plain http, where an open used to fail with a raw TypeError).
function newId() {
  const c = globalThis.crypto;
  return c.randomUUID ? c.randomUUID() : Array.from(c.getRandomValues(new Uint32Array(4)), (x) => x.toString(16).padStart(8, "0")).join("");
}
