// onestore: the package root for browsers (a page or a dedicated Worker).
// Same API as the Node root; the backends are those a browser has.
//
// @example
// import { openStore } from "onestore";
// const store = await openStore({ backend: "opfs", name: "session-42" });  // in a dedicated Worker

import { browserRuntime } from "./loader-browser.js";
import { checkOpfsName } from "./files-opfs.js";
import { invalidArgs } from "./errors.js";
import { importStoreWith, openStoreWith } from "./store.js";
import { openReplicaWith } from "./replica.js";
import { pullSessionWith } from "./sync.js";
import { createRelayWith } from "./relay.js";

export * from "./api.js";
export { startSync } from "./sync.js";
export { followRelay } from "./follow-relay.js";

/**
 * Downloads a relay's session into a new local store (same options as
 * openStore) at the relay's head, ready to continue it with startSync.
 *
 * @example
 * const store = await pullSession({ relay: "https://edge.example/sessions/42" }, { backend: "memory" });
 */
export function pullSession(remote, openOptions) {
  return pullSessionWith(browserRuntime, remote, openOptions);
}

/**
 * Opens a replica: a store that takes no owner writes and changes only by
 * `replica.applyBatch(batch)` (batches of a driver's `store.outbox.read`).
 * Same options as openStore. Read it with `replica.table(name)`.
 *
 * @example
 * const replica = await openReplica({ backend: "opfs", name: "copy-42" });
 * await replica.applyBatch(await store.outbox.read(replica.head, 500));
 */
export async function openReplica(options) {
  if (options?.backend === "opfs") checkOpfsName(options.name, "openReplica");
  return openReplicaWith(browserRuntime, options);
}
export { configureBrowserCore, deleteStore, listStores } from "./loader-browser.js";

/**
 * The relay's Durable Object class runs in workerd only (the package's
 * workerd root); here constructing one throws invalid/args. It exists so
 * that code shared by every root links.
 *
 * @example
 * export class Sessions extends SessionRelay {}   // in a Worker
 */
export class SessionRelay {
  constructor() {
    throw invalidArgs("SessionRelay: a Durable Object class for workerd; deploy it in a Worker, or use createRelay here");
  }
}
export { relayFetch } from "./relay-workerd.js";

/**
 * A relay: the server side of sync, answering the relay protocol
 * (docs/formats.md) with the standard Request and Response. Each session
 * is a replica opened with `open(sessionId)`'s options; `authorize`
 * decides who may read or drive a session (everything when omitted).
 *
 * @example
 * const relay = createRelay({ open: (id) => ({ backend: "memory" }) });
 * const answer = await relay.fetch(new Request(`${location.origin}/sessions/s1`));
 */
export function createRelay(options) {
  return createRelayWith(openReplica, options);
}

/**
 * Opens a store in a browser: `{ backend: "memory" }`, or, in a dedicated
 * Worker, `{ backend: "opfs", name, durability?, lockTimeout?, onFenced? }`
 * (SQLite in OPFS; opening takes the store over from any other tab).
 *
 * @example
 * const store = await openStore({ backend: "opfs", name: "session-42", onFenced: (e) => postMessage({ fenced: e.message }) });
 */
export async function openStore(options) {
  // async: a bad name rejects the promise, as every other failure does.
  if (options?.backend === "opfs") checkOpfsName(options.name, "openStore");
  return openStoreWith(browserRuntime, options);
}

/**
 * Restores an archive made by `store.export()` and opens it: `{ backend:
 * "memory" }`, or, in a dedicated Worker, `{ backend: "opfs", name }` (a new
 * generation in OPFS, switched in only when the whole archive was read and
 * checked; the store at that name is replaced, and taken over if open).
 *
 * @example
 * const store = await importStore((await fetch("/session.tar")).body, { backend: "opfs", name: "session-42" });
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
