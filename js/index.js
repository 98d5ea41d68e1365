// onestore: one store for a whole agent session. The package root for Node.
//
// @example
// import { openStore, defineTable, str, int, query, eq } from "onestore";
// const store = await openStore({ backend: "sqlite", path: ".data/session.sqlite" });

import { nodeRuntime } from "./loader-node.js";
import { openStoreWith } from "./store.js";

export * from "./api.js";

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
