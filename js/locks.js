// store.lock(name, fn, { timeout }): a named advisory lock (design.md,
// "Archives, snapshots, history"). The runtime says how far it reaches
// (`runtime.openLocks(wire)`): Node, a lock file beside a sqlite store
// (js/locks-node.js); a browser, Web Locks for an OPFS store (every tab of
// the origin); otherwise, and for memory stores, this realm only (one
// Durable Object's requests share it). Inside each, the waiters of this
// realm queue in order.

import { ErrorCodes, invalidArgs, refuseUnknownOptions, StoreError } from "./errors.js";
import { describe } from "./schema.js";

/** The longest lock name, in UTF-16 units. */
export const MAX_LOCK_NAME = 200;

/**
 * Checks store.lock's arguments; resolves the timeout to ms (Infinity: wait
 * for as long as it takes).
 *
 * @example
 * const timeout = lockArgs("import", async () => {}, { timeout: 5000 });
 */
export function lockArgs(name, fn, options) {
  if (typeof name !== "string" || name === "" || name.length > MAX_LOCK_NAME || name.includes("\0")) {
    throw invalidArgs(`store.lock: name must be a non-empty string of at most ${MAX_LOCK_NAME} characters without NUL, got ${describe(name)}`);
  }
  if (typeof fn !== "function") throw invalidArgs(`store.lock(${JSON.stringify(name)}): fn must be a function, got ${describe(fn)}`);
  if (options === null || typeof options !== "object") {
    throw invalidArgs(`store.lock(${JSON.stringify(name)}): options must be { timeout? }, got ${describe(options)}`);
  }
  refuseUnknownOptions(options, ["timeout"], `store.lock(${JSON.stringify(name)})`);
  const { timeout = Infinity } = options;
  if (typeof timeout !== "number" || Number.isNaN(timeout) || timeout < 0) {
    throw invalidArgs(`store.lock(${JSON.stringify(name)}): timeout must be a number of ms >= 0 (or Infinity), got ${describe(timeout)}`);
  }
  return timeout;
}

/** The `lock/timeout` error of a lock not granted in time. */
export function lockTimeout(name, timeout, where) {
  return new StoreError(ErrorCodes.LockTimeout, `store.lock(${JSON.stringify(name)}): not granted within ${timeout} ms (${where} holds it)`);
}

/**
 * Locks of this realm: `acquire(name, timeout)` resolves to a release
 * function once the lock is granted, in the order asked, or rejects with
 * `lock/timeout`.
 *
 * @example
 * const locks = localLocks(); const release = await locks.acquire("x", 1000); release();
 */
export function localLocks() {
  const held = new Map();  // name -> waiters (the first one holds it)
  return {
    acquire(name, timeout) {
      let list = held.get(name);
      if (!list) held.set(name, (list = []));
      return new Promise((resolve, reject) => {
        let timer = null;
        const me = {
          grant() {
            if (timer !== null) clearTimeout(timer);
            let released = false;
            resolve(() => {
              if (released) return;
              released = true;
              list.shift();
              if (list.length > 0) list[0].grant();
              else if (held.get(name) === list) held.delete(name);
            });
          },
        };
        list.push(me);
        if (list.length === 1) {
          me.grant();
          return;
        }
        if (Number.isFinite(timeout)) {
          timer = setTimeout(() => {
            const i = list.indexOf(me);
            if (i > 0) list.splice(i, 1);
            reject(lockTimeout(name, timeout, "another caller of this store"));
          }, timeout);
        }
      });
    },
  };
}

/**
 * Runs `fn()` holding the lock `name` of `locks` (one or more layers,
 * acquired in order, released in reverse) and resolves to its value.
 *
 * @example
 * await withLocks([local, files], "import", 5000, () => importAll());
 */
export async function withLocks(layers, name, timeout, fn) {
  const releases = [];
  const start = Date.now();
  try {
    for (const layer of layers) {
      const left = Number.isFinite(timeout) ? Math.max(0, timeout - (Date.now() - start)) : Infinity;
      try {
        releases.push(await layer.acquire(name, left));
      } catch (e) {
        // A later layer was given what was left of the time; the caller
        // asked for `timeout`, and the message says so.
        if (e instanceof StoreError && e.code === ErrorCodes.LockTimeout && left !== timeout) {
          throw new StoreError(ErrorCodes.LockTimeout, e.message.replace(` within ${left} ms`, ` within ${timeout} ms`));
        }
        throw e;
      }
    }
    return await fn();
  } finally {
    for (const release of releases.reverse()) await release();
  }
}

/**
 * Web Locks (every tab and worker of the origin), named
 * `onestore-lock:<scope>:<name>`.
 *
 * @example
 * const locks = webLocks("opfs:session-42");
 */
export function webLocks(scope) {
  return {
    acquire(name, timeout) {
      return new Promise((resolve, reject) => {
        let granted = false;
        const options = {};
        if (timeout === 0) options.ifAvailable = true;
        else if (Number.isFinite(timeout)) options.signal = AbortSignal.timeout(timeout);
        navigator.locks.request(`onestore-lock:${scope}:${name}`, options, (lock) => {
          if (lock === null) {
            reject(lockTimeout(name, timeout, "another tab or worker"));
            return undefined;
          }
          granted = true;
          return new Promise((release) => resolve(release));
        }).catch((e) => {
          if (granted) return;
          if (e?.name === "TimeoutError" || e?.name === "AbortError") reject(lockTimeout(name, timeout, "another tab or worker"));
          else reject(new StoreError(ErrorCodes.StorageFailed, `store.lock(${JSON.stringify(name)}): Web Locks failed: ${e?.name}: ${e?.message}`, { cause: e }));
        });
      });
    },
  };
}
