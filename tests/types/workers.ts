// The package's types as a Cloudflare Worker project sees them
// (@cloudflare/workers-types, whose ReadableStream is an interface and a
// `declare const`, not a property of globalThis): docs/api.md's Durable
// Object export and relay routing type-check as written.
import { openStore, importStore, relayFetch, SessionRelay, type ByteStream, type Store } from "onestore";

export class Session {
  store!: Store;
  constructor(private ctx: DurableObjectState) {
    ctx.blockConcurrencyWhile(async () => {
      this.store = await openStore({ backend: "durable", storage: ctx.storage });
    });
  }
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    // The archive is the Worker's own ReadableStream: a Response body.
    if (url.pathname === "/export") return new Response(this.store.export(), { headers: { "content-type": "application/x-tar" } });
    if (url.pathname === "/import" && request.body) {
      await this.store.close();
      this.store = await importStore(request.body, { backend: "durable", storage: this.ctx.storage });
    }
    const stream: ByteStream = this.store.export();
    const reader: ReadableStreamDefaultReader<Uint8Array> = stream.getReader();
    reader.releaseLock();
    return new Response("ok");
  }
}

// The Env interface `wrangler types` writes: no index signature.
interface Env { SESSIONS: DurableObjectNamespace }
export default { fetch: (request: Request, env: Env) => relayFetch(request, env) };
export { SessionRelay };
