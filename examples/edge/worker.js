// An onestore Worker: one Durable Object per session, each holding its
// session's store in the object's own SQLite ({ backend: "durable" }).
//
// HTTP API (JSON):
//   POST   /sessions/:s/notes            {"title","body"?}    add a note      -> {"id","head"}
//   PATCH  /sessions/:s/notes/:id        {"title"}            rename it       -> {"head"}
//   DELETE /sessions/:s/notes/:id                             remove it       -> {"head"}
//   GET    /sessions/:s/notes?limit=&after=&prefix=           a page of notes -> {"rows","next"?}
//   GET    /sessions/:s/outbox?after=&limit=                  commit records  -> {"from","to","commits"}
// The actor of a write is the X-Actor header (default "anonymous").
//
// Run it locally with `npm run edge` (Miniflare), or deploy it with wrangler
// (README.md next to this file).

import { openStore, defineTable, str, int, query, prefix, StoreError } from "onestore";

const Notes = defineTable("notes", {
  columns: { id: int(), title: str(), body: str().optional(), at: int() },
  key: ["id"],
  indexes: { byTitle: ["title"] },
});

// The owner of the notes: every change goes through one of its methods, each
// one transaction (one commit, one seq, one outbox record). Each answers the
// store's head once its commit is durable (the commit's seq, unless another
// request committed right after it).
class NotesOwner {
  constructor(store) {
    this.store = store;
    this.owner = store.object({ host: "session", type: "notes" });
    this.notes = this.owner.table(Notes);
  }

  async add({ title, body }, ctx) {
    const id = await this.owner.tx(async (tx) => {
      const id = tx.mintId(this.notes);
      await tx.put(this.notes, { id, title, body: body ?? null, at: Date.now() });
      return id;
    }, ctx);
    return { id, head: this.store.head };
  }

  async rename(id, title, ctx) {
    await this.owner.tx((tx) => tx.update(this.notes, [id], { title }), ctx);
    return { head: this.store.head };
  }

  async remove(id, ctx) {
    await this.owner.tx((tx) => tx.delete(this.notes, [id]), ctx);
    return { head: this.store.head };
  }

  page({ limit, after, titlePrefix }) {
    let q = query(Notes).orderBy((n) => n.title).orderBy((n) => n.id);
    if (titlePrefix) q = q.where((n) => prefix(n.title, titlePrefix));
    return this.notes.page(q, limit, undefined, after ? { after } : undefined);
  }
}

/** The Durable Object of one session. */
export class Session {
  constructor(ctx, env) {
    this.ctx = ctx;
    // Open before the first request runs; the store lives as long as the object.
    ctx.blockConcurrencyWhile(async () => {
      this.store = await openStore({ backend: "durable", storage: ctx.storage });
      this.notes = new NotesOwner(this.store);
    });
  }

  async fetch(request) {
    const url = new URL(request.url);
    const [, , , what, id] = url.pathname.split("/");  // /sessions/:s/:what/:id
    const ctx = { actor: { kind: "person", id: request.headers.get("x-actor") ?? "anonymous" } };
    try {
      if (what === "notes" && request.method === "POST" && id === undefined) {
        const { title, body } = await bodyOf(request);
        return json(await this.notes.add({ title, body }, ctx), 201);
      }
      if (what === "notes" && request.method === "PATCH" && id) {
        return json(await this.notes.rename(Number(id), (await bodyOf(request)).title, ctx));
      }
      if (what === "notes" && request.method === "DELETE" && id) {
        return json(await this.notes.remove(Number(id), ctx));
      }
      if (what === "notes" && request.method === "GET") {
        const limit = Number(url.searchParams.get("limit") ?? 20);
        return json(await this.notes.page({ limit, after: url.searchParams.get("after"), titlePrefix: url.searchParams.get("prefix") }));
      }
      if (what === "outbox" && request.method === "GET") {
        const after = Number(url.searchParams.get("after") ?? 0);
        const limit = Number(url.searchParams.get("limit") ?? 100);
        return json(await this.store.outbox.read(after, limit));
      }
      return json({ error: "not_found", message: `no route ${request.method} ${url.pathname}` }, 404);
    } catch (e) {
      if (e instanceof StoreError) {
        const status = e.code === "not_found" ? 404 : e.code === "invalid/args" || e.code === "invalid/cursor" || e.code === "limit" ? 400 : 500;
        return json({ error: e.code, message: e.message }, status);
      }
      if (e instanceof SyntaxError) return json({ error: "invalid/args", message: `the body is not JSON: ${e.message}` }, 400);
      throw e;
    }
  }
}

// A request's JSON body, which must be an object ({ title, body? }).
async function bodyOf(request) {
  const value = await request.json();
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new StoreError("invalid/args", `the body must be a JSON object such as {"title": "..."}, got ${JSON.stringify(value)}`);
  }
  return value;
}

// BigInt (an int beyond 2^53) goes out as a decimal string.
function json(value, status = 200) {
  return new Response(JSON.stringify(value, (k, v) => (typeof v === "bigint" ? v.toString() : v)), {
    status,
    headers: { "content-type": "application/json" },
  });
}

export default {
  async fetch(request, env) {
    const m = new URL(request.url).pathname.match(/^\/sessions\/([^/]+)\//);
    if (!m) return json({ error: "not_found", message: "use /sessions/<session>/notes or /sessions/<session>/outbox" }, 404);
    let session;
    try {
      session = decodeURIComponent(m[1]);
    } catch {
      return json({ error: "invalid/args", message: `the session in ${JSON.stringify(m[1])} is not a well-formed URL component` }, 400);
    }
    // One Durable Object per session, found by name.
    return env.SESSION.get(env.SESSION.idFromName(session)).fetch(request);
  },
};
