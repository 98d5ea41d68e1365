// The Worker of the workerd kill campaign (tests/kill/workerd-loop.js): a
// Durable Object (class TestSession, as tests/edge/harness.js declares it)
// whose store, { backend: "durable", storage: ctx.storage }, commits the
// stream of tests/kill/workload.js. POST /<object>/stream?start=<c>&bigEvery=<n>
// answers a streamed body with "ack <c> <seq>" for each commit, written once
// the commit resolved (the Durable Object's output gate holds it until the
// write is confirmed); POST /<object>/check with { acked: [[c, seq]...],
// bigEvery } answers checkStore's result.
import * as api from "../../js/workerd.js";
import { checkStore, commitStream } from "../kill/workload.js";

export class TestSession {
  constructor(ctx) {
    this.ctx = ctx;
  }

  async fetch(request) {
    const url = new URL(request.url);
    const op = url.pathname.split("/")[2];
    try {
      if (!this.store) this.store = await api.openStore({ backend: "durable", storage: this.ctx.storage });
      if (op === "stream") {
        const { readable, writable } = new TransformStream();
        const writer = writable.getWriter();
        const text = new TextEncoder();
        writer.write(text.encode("open\n"));
        commitStream(api, this.store, {
          start: Number(url.searchParams.get("start")),
          bigEvery: Number(url.searchParams.get("bigEvery")),
          // The commits run on microtasks alone: a macrotask after each
          // lets the runtime send the ack (and confirm the write) meanwhile.
          ack: async (c, seq) => {
            writer.write(text.encode(`ack ${c} ${seq}\n`));
            await new Promise((r) => setTimeout(r, 0));
          },
        }).then((e) => writer.write(text.encode(`error ${e?.code} ${e?.message}\n`)).then(() => writer.close()));
        return new Response(readable, { headers: { "content-type": "text/event-stream", "content-encoding": "identity" } });
      }
      if (op === "check") {
        const { acked, bigEvery } = await request.json();
        const result = await checkStore(api, this.store, { acked: new Map(acked), options: { bigEvery } });
        return Response.json({ ok: true, result });
      }
      throw new Error(`no op ${op}`);
    } catch (e) {
      return Response.json({ ok: false, code: e?.code, message: String(e?.message ?? e), stack: e?.stack });
    }
  }
}

export default {
  async fetch(request, env) {
    const object = decodeURIComponent(new URL(request.url).pathname.split("/")[1]);
    return env.SESSION.get(env.SESSION.idFromName(object)).fetch(request);
  },
};
