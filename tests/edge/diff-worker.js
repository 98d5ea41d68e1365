// The Worker of tests/edge/differential.test.js: each Durable Object
// (class TestSession, SQLite storage) runs the differential runner
// (tests/differential/differential.js) on one store with the durable
// backend over its own storage. POST /<object>/<op> with a JSON body
// (BigInts as {"$bigint"}); answers { ok, result } or { ok: false, code, message }.

import * as api from "../../js/workerd.js";
import { differential } from "../differential/differential.js";

const d = differential(api);

export class TestSession {
  constructor(ctx) {
    this.ctx = ctx;
  }

  async fetch(request) {
    const op = new URL(request.url).pathname.split("/")[2];
    const args = d.fromText(await request.text());
    try {
      const options = () => ({ backend: "durable", storage: this.ctx.storage });
      let result;
      // Every sequence of `seeds` on this object's one store, each under its own owner.
      if (op === "run") result = await d.runSeeds(args.seeds, args.length, options, args.seeds.length);
      // The observations of one sequence on this object's (fresh) store.
      else if (op === "observe") result = await d.observe(options(), d.fromText(args.text));
      else throw new Error(`no op ${op}`);
      return new Response(d.toText({ ok: true, result }));
    } catch (e) {
      return new Response(d.toText({ ok: false, code: e?.code, message: String(e?.message ?? e), stack: e?.stack }));
    }
  }
}

export default {
  async fetch(request, env) {
    const name = decodeURIComponent(new URL(request.url).pathname.split("/")[1]);
    return env.SESSION.get(env.SESSION.idFromName(name)).fetch(request);
  },
};
