// The request plumbing of the test Workers that run one op per request on a
// Durable Object (big-where-worker.js, history-search-worker.js,
// snapshots-worker.js): POST /<object>/<op> with a JSON body runs the
// object's method op_<op>(args) and answers { ok, result } or
// { ok: false, code, message, stack }. Not a test itself.

/**
 * Runs the op that `request` names on `target` (a Durable Object whose
 * methods are op_<name>(args)) and answers as above.
 *
 * @example async fetch(request) { return runOp(this, request); }
 */
export async function runOp(target, request) {
  const op = new URL(request.url).pathname.split("/")[2];
  try {
    const args = await request.json();
    const fn = target[`op_${op}`];
    if (typeof fn !== "function") return Response.json({ ok: false, message: `no op ${op}` });
    return Response.json({ ok: true, result: await fn.call(target, args) });
  } catch (e) {
    return Response.json({ ok: false, code: e.code, message: String(e?.message ?? e), stack: String(e?.stack ?? "") });
  }
}

/**
 * The Worker's default export: each request to the Durable Object named by
 * its first path segment (class TestSession, binding SESSION).
 *
 * @example export default objectRouter;
 */
export const objectRouter = Object.freeze({
  async fetch(request, env) {
    const object = decodeURIComponent(new URL(request.url).pathname.split("/")[1]);
    return env.SESSION.get(env.SESSION.idFromName(object)).fetch(request);
  },
});
