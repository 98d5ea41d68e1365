// The Worker of tests/edge/bad-input.test.js: the bad-input corpus
// (tests/bad-input/) in workerd. POST /<object>/run with { cases, pass } runs
// it in the Durable Object named <object> (class TestSession, SQLite
// storage) and answers { ok, result: report } (tests/edge/harness.js):
//   pass "store":   every case on a durable store (this object's storage),
//                   the raw batches on a memory replica in the isolate;
//   pass "replica": the raw batches on a durable replica (this object's
//                   storage), fed from a memory store.
import * as api from "../../js/workerd.js";
import { badInputRunner } from "../bad-input/runner.js";

const { runCases } = badInputRunner(api);

export class TestSession {
  constructor(ctx) {
    this.ctx = ctx;
  }

  async fetch(request) {
    const { cases, pass } = await request.json();
    try {
      const durable = { backend: "durable", storage: this.ctx.storage };
      const report = pass === "replica"
        ? await runCases(cases, { open: () => api.openStore({ backend: "memory" }), openReplica: () => api.openReplica(durable), only: (c) => c.kind === "applyBatch", backend: "durable" })
        : await runCases(cases, { open: () => api.openStore(durable), openReplica: () => api.openReplica({ backend: "memory" }), backend: "durable" });
      return Response.json({ ok: true, result: report });
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
