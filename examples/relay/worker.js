// A sync relay on Cloudflare: one Durable Object per session (SessionRelay,
// from onestore's workerd root) behind relayFetch, which routes
// /sessions/<id>/… to env.SESSIONS.idFromName(id). The protocol is
// docs/formats.md, "The relay protocol"; README.md says how to run and deploy.

import { SessionRelay, relayFetch } from "onestore";

export class Sessions extends SessionRelay {
  // Drivers (take the lease, push, upload blobs) need RELAY_TOKEN; reading a
  // session (pull, download, blobs) needs READ_TOKEN when it is set. Without
  // RELAY_TOKEN (local runs), everything is allowed.
  authorize({ access, token }) {
    const { RELAY_TOKEN, READ_TOKEN } = this.env;
    if (!RELAY_TOKEN) return true;
    if (token === RELAY_TOKEN) return true;
    return access === "read" && (!READ_TOKEN || token === READ_TOKEN);
  }
}

export default {
  fetch: (request, env) => relayFetch(request, env),
};
