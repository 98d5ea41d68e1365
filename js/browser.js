// onestore: the package root for browsers (a page or a dedicated Worker).
// Same API as the Node root; the backends are those a browser has.
//
// @example
// import { openStore } from "onestore";
// const store = await openStore({ backend: "memory" });

import { browserRuntime } from "./loader-browser.js";
import { openStoreWith } from "./store.js";

export * from "./api.js";
export { configureBrowserCore } from "./loader-browser.js";

/**
 * Opens a store in a browser: `{ backend: "memory" }`.
 *
 * @example
 * const store = await openStore({ backend: "memory" });
 */
export function openStore(options) {
  return openStoreWith(browserRuntime, options);
}
