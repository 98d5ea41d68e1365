// onestore: the package root for browsers (a page or a dedicated Worker).
// Same API as the Node root; the backends are those a browser has.
//
// @example
// import { openStore } from "onestore";
// const store = await openStore({ backend: "opfs", name: "session-42" });  // in a dedicated Worker

import { browserRuntime } from "./loader-browser.js";
import { invalidArgs } from "./errors.js";
import { importStoreWith, openStoreWith } from "./store.js";
import { openReplicaWith } from "./replica.js";

export * from "./api.js";

/**
 * Opens a replica: a store that takes no owner writes and changes only by
 * `replica.applyBatch(batch)` (batches of a driver's `store.outbox.read`).
 * Same options as openStore. Read it with `replica.table(name)`.
 *
 * @example
 * const replica = await openReplica({ backend: "opfs", name: "copy-42" });
 * await replica.applyBatch(await store.outbox.read(replica.head, 500));
 */
export function openReplica(options) {
  return openReplicaWith(browserRuntime, options);
}
export { configureBrowserCore, deleteStore, listStores } from "./loader-browser.js";

/**
 * Opens a store in a browser: `{ backend: "memory" }`, or, in a dedicated
 * Worker, `{ backend: "opfs", name, durability?, lockTimeout?, onFenced? }`
 * (SQLite in OPFS; opening takes the store over from any other tab).
 *
 * @example
 * const store = await openStore({ backend: "opfs", name: "session-42", onFenced: (e) => postMessage({ fenced: e.message }) });
 */
export function openStore(options) {
  return openStoreWith(browserRuntime, options);
}

/**
 * Restores an archive made by `store.export()` and opens it: in Node in
 * this version; here it rejects with invalid/args (browsers and workerd
 * come next).
 *
 * @example
 * const store = await importStore(await (await fetch("/session.tar")).arrayBuffer(), { backend: "memory" });
 */
export function importStore(archive, openOptions, options) {
  return importStoreWith(browserRuntime, archive, openOptions, options);
}

/**
 * Node only: rejects with invalid/args here. Use `store.export()`, a
 * ReadableStream, directly (a Response body, a file handle's writable).
 *
 * @example
 * return new Response(store.export(), { headers: { "content-type": "application/x-tar" } });
 */
export async function exportToFile() {
  throw invalidArgs("exportToFile: writes a file in Node only; here, use store.export() (a ReadableStream of the tar bytes)");
}
