// The relay Worker of tests/edge/relay.test.js: SessionRelay from the
// package's workerd root, subclassed for access and limits, and relayFetch
// as the Worker's router. Reached through Miniflare's dispatchFetch.

import { SessionRelay, relayFetch } from "../../js/workerd.js";

export class TestRelay extends SessionRelay {
  // "rw" drives, "ro" reads; no token reads nothing.
  authorize({ access, token }) {
    return token === "rw" || (token === "ro" && access === "read");
  }

  relayOptions() {
    return { maxBody: 64 * 1024, maxBlob: 4 * 1024 * 1024, leaseTtl: 3_600_000 };  // an hour: no test depends on the clock
  }
}

export default {
  fetch(request, env) {
    const url = new URL(request.url);
    // A router given a binding the Worker lacks.
    if (url.pathname.startsWith("/unbound/")) {
      return relayFetch(new Request(request.url.replace("/unbound/", "/"), request), env, { binding: "NOPE" });
    }
    // A router given a misspelt option: relayFetch throws (a bug of the
    // Worker's code, named), answered here as the relay answers errors.
    if (url.pathname.startsWith("/misspelt/")) {
      return relayFetch(request, env, { bindng: "SESSIONS" }).catch((e) =>
        new Response(JSON.stringify({ error: { code: e.code, message: e.message } }), { status: 500, headers: { "content-type": "application/json" } }));
    }
    return relayFetch(request, env);
  },
};
