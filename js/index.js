// onestore: one store for a whole agent session. The package root for Node.
//
// @example
// import { openStore, defineTable, str, int, query, eq } from "onestore";
// const store = await openStore({ backend: "sqlite", path: ".data/session.sqlite" });

import { nodeRuntime, deleteNodeStore, listNodeStores } from "./loader-node.js";
import { importStoreWith, openStoreWith } from "./store.js";
import { openReplicaWith } from "./replica.js";
import { pullSessionWith } from "./sync.js";
import { createRelayWith } from "./relay.js";
import { invalidArgs } from "./errors.js";

export * from "./api.js";
export { startSync } from "./sync.js";
// Keeps a replica (a PostgreSQL mirror above all) following a relay session.
export { followRelay } from "./follow-relay.js";

/**
 * Downloads a relay's session into a new local store (same options as
 * openStore) at the relay's head, ready to continue it with startSync.
 *
 * @example
 * const store = await pullSession({ relay: "https://edge.example/sessions/42" }, { backend: "memory" });
 */
export function pullSession(remote, openOptions) {
  return pullSessionWith(nodeRuntime, remote, openOptions);
}

/**
 * Opens a replica: a store that takes no owner writes and changes only by
 * `replica.applyBatch(batch)` (batches of a driver's `store.outbox.read`).
 * Same options as openStore. Read it with `replica.table(name)`.
 * `{ backend: "postgres", url, session? }` opens a PostgreSQL mirror
 * instead (js/replica-postgres.js, loaded with the optional `pg` package
 * only then).
 *
 * @example
 * const replica = await openReplica({ backend: "sqlite", path: ".data/copy.sqlite" });
 * await replica.applyBatch(await store.outbox.read(replica.head, 500));
 */
export async function openReplica(options) {
  if (options !== null && typeof options === "object" && options.backend === "postgres") {
    const { openPostgresReplica } = await import("./replica-postgres.js");
    return openPostgresReplica(options);
  }
  return openReplicaWith(nodeRuntime, options);
}


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
 * const relay = createRelay({ open: (id) => ({ backend: "sqlite", path: `.data/relay/${id}.sqlite` }) });
 * http.createServer(async (req, res) => { ... res.end(await (await relay.fetch(request)).text()); });
 */
export function createRelay(options) {
  return createRelayWith(openReplica, options);
}

/**
 * Opens a store: `{ backend: "memory" }`, or `{ backend: "sqlite", path }`
 * (a file, created with its folder; ":memory:" allowed). `id` names a new
 * store's session (a random id otherwise).
 *
 * @example
 * const store = await openStore({ backend: "sqlite", path: ".data/s.sqlite" });
 * console.log(store.id, store.head);
 * await store.close();
 */
export function openStore(options) {
  return openStoreWith(nodeRuntime, options);
}

/**
 * Deletes a closed sqlite store: its file and side files. Resolves to true,
 * or false when there was none. (In a browser: `{ backend: "opfs", name }`.)
 *
 * @example
 * await deleteStore({ backend: "sqlite", path: ".data/s.sqlite" });
 */
export function deleteStore(options) {
  return deleteNodeStore(options);
}

/**
 * The sqlite stores of a folder: `[{ path, id, head, size, replica }]`,
 * read without opening them (so without taking one over). (In a browser:
 * `{ backend: "opfs", prefix? }`.)
 *
 * @example
 * const stores = await listStores({ backend: "sqlite", dir: ".data/sessions" });
 */
export function listStores(options) {
  return listNodeStores(options);
}

/**
 * Browsers only: sets where the .wasm is fetched from. In Node it has no
 * effect; it exists so that code shared by both roots links.
 *
 * @example
 * configureBrowserCore({ wasmUrl: "/assets/onestore-core.wasm" });
 */
export function configureBrowserCore() {}

/**
 * Restores an archive made by `store.export()` and opens it (memory, or a
 * sqlite file: a new generation renamed over the file once checked).
 *
 * @example
 * const store = await importStore(createReadStream("session.tar"), { backend: "sqlite", path: "s.sqlite" });
 */
export function importStore(archive, openOptions, options) {
  // A Node stream that fails before it is read (createReadStream of a
  // missing file) emits "error" while the import waits for its lock, and
  // with no listener that ends the process. Its iterator throws the same
  // error when the import reads it.
  if (typeof archive?.on === "function" && typeof archive?.[Symbol.asyncIterator] === "function") archive.on("error", () => {});
  return importStoreWith(nodeRuntime, archive, openOptions, options);
}

/**
 * Writes `store.export()` to a file (written beside it, then renamed) and
 * resolves to the bytes written.
 *
 * @example
 * await exportToFile(store, "session.tar", { onProgress: (p) => bar.set(p.done / p.total) });
 */
export async function exportToFile(store, path, options) {
  const { exportFileNode } = await import("./archive-node.js");
  return exportFileNode(store, path, options);
}
