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
import { openStoreWith } from "./store.js";

export * from "./api.js";

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
