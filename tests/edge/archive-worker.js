// The Worker of tests/edge/archive.test.js and tests/browser/archive.test.js:
// archives in a Durable Object. Routes, on the object named by the first
// path segment (class TestSession, SQLite storage):
//
//   POST /<object>/fill     { tag, rows, blobs? }  fills a new durable store (tests/js/archive/session.js),
//                                          and the class's own table class_notes beside it
//   GET  /<object>/state                   the store's state (JSON text)
//   GET  /<object>/export?idle=<ms>        store.export({ idleTimeout }) as the Response body, streamed
//   POST /<object>/import                  importStore(request.body) over the store; answers
//                                          { ok, state, progress } or { ok: false, code, message, state, tables }

import * as api from "../../js/workerd.js";
import { sessionFixture } from "../js/archive/session.js";

const { openStore, importStore } = api;
const { fill, state } = sessionFixture(api);

const json = (v) => new Response(JSON.stringify(v), { headers: { "content-type": "application/json" } });

export class TestSession {
  constructor(ctx) {
    this.ctx = ctx;
    this.store = null;
  }

  async open() {
    this.store ??= await openStore({ backend: "durable", storage: this.ctx.storage });
    return this.store;
  }

  async close() {
    await this.store?.close();
    this.store = null;
  }

  // The tables of the object's SQLite (the store's, _blobs, and any staging).
  tables() {
    return this.ctx.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%' ORDER BY name").toArray().map((r) => r.name);
  }

  // The rows of the class's own table (not the store's), or why not.
  own() {
    try {
      return this.ctx.storage.sql.exec("SELECT id, text FROM class_notes ORDER BY id").toArray();
    } catch (e) {
      return String(e?.message ?? e);
    }
  }

  async fetch(request) {
    const op = new URL(request.url).pathname.split("/")[2];
    try {
      if (op === "fill") {
        const { tag, rows, blobs } = await request.json();
        await fill(await this.open(), { tag, rows, blobs });
        this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS class_notes (id INTEGER PRIMARY KEY, text TEXT)");
        this.ctx.storage.sql.exec("INSERT OR REPLACE INTO class_notes VALUES (1, ?)", `kept by the class (${tag})`);
        return json({ ok: true });
      }
      if (op === "state") return json({ ok: true, state: await state(await this.open()), tables: this.tables() });
      if (op === "export") {
        const idle = new URL(request.url).searchParams.get("idle");
        const options = idle === null ? undefined : { idleTimeout: Number(idle) };
        return new Response((await this.open()).export(options), { headers: { "content-type": "application/x-tar" } });
      }
      if (op === "import") {
        await this.close();  // importStore replaces a closed store
        const progress = [];
        try {
          this.store = await importStore(request.body, { backend: "durable", storage: this.ctx.storage }, { onProgress: (p) => progress.push(p) });
        } catch (e) {
          return json({ ok: false, code: e.code, message: e.message, state: await state(await this.open()), tables: this.tables() });
        }
        return json({ ok: true, state: await state(this.store), tables: this.tables(), progress: progress.at(-1), reports: progress.length, own: this.own() });
      }
      return json({ ok: false, message: `no op ${op}` });
    } catch (e) {
      return json({ ok: false, code: e.code, message: String(e?.stack ?? e) });
    }
  }
}

export default {
  async fetch(request, env) {
    const object = decodeURIComponent(new URL(request.url).pathname.split("/")[1]);
    return env.SESSION.get(env.SESSION.idFromName(object)).fetch(request);
  },
};
