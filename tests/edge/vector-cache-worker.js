// The Worker of tests/edge/vector-cache.test.js: POST /<object>/scenario runs
// tests/vector-cache/scenario.js on a durable store in the Durable Object
// named <object> (class TestSession, SQLite storage) and answers { ok,
// result } or { ok: false, code, message }.

import * as api from "../../js/workerd.js";
import { vectorCacheScenario } from "../vector-cache/scenario.js";

export class TestSession {
  constructor(ctx) {
    this.ctx = ctx;
  }

  async fetch(request) {
    try {
      const result = await vectorCacheScenario(api, { backend: "durable", storage: this.ctx.storage });
      return new Response(JSON.stringify({ ok: true, result }));
    } catch (e) {
      return new Response(JSON.stringify({ ok: false, code: e?.code, message: String(e?.message ?? e), stack: e?.stack }));
    }
  }
}

export default {
  async fetch(request, env) {
    const object = decodeURIComponent(new URL(request.url).pathname.split("/")[1]);
    return env.SESSION.get(env.SESSION.idFromName(object)).fetch(request);
  },
};
