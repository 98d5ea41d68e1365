// The relay in workerd: SessionRelay, a Durable Object class (one object per
// session, over the durable backend), and relayFetch, the Worker's router
// from /sessions/<id>/… to that object. The protocol itself is js/relay.js.
//
// @example
// // worker.js, deployed with wrangler (examples/relay/)
// import { SessionRelay, relayFetch } from "onestore";
// export class Sessions extends SessionRelay {
//   authorize({ access, token }) { return access === "read" || (!!this.env.RELAY_TOKEN && token === this.env.RELAY_TOKEN); }
// }
// export default { fetch: (request, env) => relayFetch(request, env) };

import { createRelayWith, relayError, sessionOf } from "./relay.js";
import { ErrorCodes, invalidArgs, refuseUnknownOptions } from "./errors.js";
import { describe } from "./schema.js";

/**
 * A Durable Object class that is the relay of one session: its replica, the
 * acknowledged batches, the lease and the blobs live in the object's own
 * SQLite (the durable backend), so they survive restarts and evictions.
 * Subclass it to decide access (`authorize`) or to change the relay's
 * options (`relayOptions`); declare it in wrangler.toml under
 * `new_sqlite_classes`.
 *
 * @example
 * export class Sessions extends SessionRelay {
 *   authorize({ token }) { return token === this.env.RELAY_TOKEN; }
 *   relayOptions() { return { leaseTtl: 60_000 }; }
 * }
 */
export function makeSessionRelay(openReplica) {
  return class SessionRelay {
    constructor(ctx, env) {
      this.ctx = ctx;
      this.env = env;
      this.relay = null;
    }

    /**
     * Decides whether a request may `access` ("read" or "drive") the
     * session with `token` (the bearer token, or undefined). Allows
     * everything; override it.
     * @example authorize({ token }) { return token === this.env.RELAY_TOKEN; }
     */
    authorize() {
      return true;
    }

    /**
     * Options of createRelay besides open and authorize (maxBody, maxBlob,
     * leaseTtl, isBlobName, cors, now). None by default; override it.
     * @example relayOptions() { return { maxBody: 1 << 20 }; }
     */
    relayOptions() {
      return {};
    }

    /**
     * Answers one request of the relay protocol (docs/formats.md).
     * @example return env.SESSIONS.get(env.SESSIONS.idFromName(sessionId)).fetch(request);
     */
    fetch(request) {
      if (!this.relay) {
        const storage = this.ctx.storage;
        this.relay = createRelayWith(openReplica, {
          ...this.relayOptions(),
          open: () => ({ backend: "durable", storage }),
          authorize: (access) => this.authorize(access),
        });
      }
      return this.relay.fetch(request);
    }
  };
}

/**
 * The Worker's router: sends `/sessions/<id>/…` to the Durable Object
 * `env[binding].idFromName(id)` (binding "SESSIONS" unless given) and
 * answers anything else with 404 `not_found`.
 *
 * @example
 * export default { fetch: (request, env) => relayFetch(request, env) };
 */
export async function relayFetch(request, env, options = {}) {
  if (options === null || typeof options !== "object") throw invalidArgs(`relayFetch: options must be { binding }, got ${describe(options)}`);
  refuseUnknownOptions(options, ["binding"], "relayFetch");
  const { binding = "SESSIONS" } = options;
  const routed = sessionOf(request);
  if (routed.error) return routed.error;
  const ns = env?.[binding];
  if (ns === null || typeof ns !== "object" || typeof ns.idFromName !== "function" || typeof ns.get !== "function") {
    return relayError(request, 500, ErrorCodes.InvalidArgs,
      `relayFetch: env.${binding} is not a Durable Object namespace; bind the SessionRelay class as ${binding} in wrangler.toml (or pass { binding })`);
  }
  return ns.get(ns.idFromName(routed.session)).fetch(request);
}
