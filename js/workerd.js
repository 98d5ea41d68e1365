// onestore: the package root for workerd (Cloudflare Workers and Durable
// Objects, Miniflare). Same API as the Node root; the backends are "memory"
// and "durable" (a Durable Object's own SQLite).
//
// @example
// import { openStore } from "onestore";
// export class Session {
//   constructor(ctx) {
//     ctx.blockConcurrencyWhile(async () => { this.store = await openStore({ backend: "durable", storage: ctx.storage }); });
//   }
// }

import { workerdRuntime } from "./loader-workerd.js";
import { invalidArgs } from "./errors.js";
import { importStoreWith, openStoreWith } from "./store.js";
import { openReplicaWith } from "./replica.js";
import { pullSessionWith } from "./sync.js";
import { createRelayWith } from "./relay.js";
import { makeSessionRelay, relayFetch } from "./relay-workerd.js";
import { ErrorCodes, StoreError } from "./errors.js";

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
  return pullSessionWith(workerdRuntime, remote, openOptions);
}

/**
 * Opens a replica: a store that takes no owner writes and changes only by
 * `replica.applyBatch(batch)` (batches of a driver's `store.outbox.read`).
 * Same options as openStore. Read it with `replica.table(name)`.
 *
 * @example
 * const replica = await openReplica({ backend: "durable", storage: this.ctx.storage });
 * await replica.applyBatch(await store.outbox.read(replica.head, 500));
 */
export function openReplica(options) {
  return openReplicaWith(workerdRuntime, options);
}

/**
 * A relay: the server side of sync, answering the relay protocol
 * (docs/formats.md) with the standard Request and Response. Each session
 * is a replica opened with `open(sessionId)`'s options; `authorize`
 * decides who may read or drive a session (everything when omitted).
 *
 * @example
 * const relay = createRelay({ open: () => ({ backend: "durable", storage: this.ctx.storage }) });
 * return relay.fetch(request);
 */
export function createRelay(options) {
  return createRelayWith(openReplica, options);
}

/**
 * A Durable Object class that is the relay of one session (docs/formats.md,
 * "The relay protocol"): its replica, batches, lease and blobs in the
 * object's own SQLite. Subclass it for `authorize` and `relayOptions`;
 * route to it with `relayFetch`.
 *
 * @example
 * export class Sessions extends SessionRelay {
 *   authorize({ access, token }) { return token === this.env.RELAY_TOKEN || access === "read"; }
 * }
 * export default { fetch: (request, env) => relayFetch(request, env) };
 */
export const SessionRelay = makeSessionRelay(openReplica);
export { relayFetch };

/**
 * Opens a store inside workerd: `{ backend: "durable", storage: ctx.storage }`
 * in a Durable Object with SQLite, or `{ backend: "memory" }`.
 *
 * @example
 * const store = await openStore({ backend: "durable", storage: this.ctx.storage });
 */
export function openStore(options) {
  return openStoreWith(workerdRuntime, options);
}

/**
 * Not in workerd: a Durable Object's storage is deleted by the platform
 * (`ctx.storage.deleteAll()`), which also fences nothing, so close the store
 * first. Rejects with invalid/args saying so; it exists so that code shared
 * by every root links.
 *
 * @example
 * await store.close(); await ctx.storage.deleteAll();
 */
export async function deleteStore(options) {
  throw new StoreError(ErrorCodes.InvalidArgs, `deleteStore: not available in workerd (got backend ${JSON.stringify(options?.backend) ?? String(options?.backend)}); close the store, then call ctx.storage.deleteAll() on the Durable Object`);
}

/**
 * Not in workerd: a Durable Object holds one store, in its own storage, and
 * no object lists the others. Rejects with invalid/args saying so; it
 * exists so that code shared by every root links.
 *
 * @example
 * const stores = await listStores({ backend: "sqlite", dir: ".data" });   // Node
 */
export async function listStores(options) {
  throw new StoreError(ErrorCodes.InvalidArgs, `listStores: not available in workerd (got backend ${JSON.stringify(options?.backend) ?? String(options?.backend)}); each Durable Object holds its own store: keep the ids of your objects (a conversation's, say) in the global one`);
}

/**
 * Browsers only: has no effect in workerd, where the .wasm is an imported
 * module. Exists so that code shared by every root links.
 *
 * @example
 * configureBrowserCore({ wasmUrl: "/assets/onestore-core.wasm" });
 */
export function configureBrowserCore() {}

/**
 * Restores an archive made by `store.export()` and opens it: `{ backend:
 * "memory" }`, or `{ backend: "durable", storage: ctx.storage }` (staged and
 * checked, then switched in one transactionSync; close the object's store
 * first). A request body is an archive.
 *
 * @example
 * this.store = await importStore(request.body, { backend: "durable", storage: this.ctx.storage });
 */
export function importStore(archive, openOptions, options) {
  return importStoreWith(workerdRuntime, archive, openOptions, options);
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
