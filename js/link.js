// Links: a store served from a worker, and tabs linked to it.
//
//   worker:  serve(store, { methods })            // on the worker's global scope
//   tab:     const link = connect(worker);
//            await link.call("addNote", { text }, ctx);
//            link.hold("notes/items", query(Notes), ({ seq, rows, ops }) => …);
//            link.hold("count", ({ seq, value, error }) => …);
//
// The server gets each commit from the flush (js/live.js), after the derives
// were recomputed, and sends at most ONE message per link: that commit's ops
// for every table the link holds, with the recomputed derives it holds. The
// tab dispatches every part of one message in the same task, so it never
// sees a source without the derives computed from it.
//
// Any MessagePort-like endpoint works: a Worker, a Worker's global scope, a
// MessagePort, a Node worker_threads Worker or port. Several links may share
// one endpoint; each message carries its link's id.
//
// Messages are tagged { onestore: "link", link: id, t: … }; anything else on
// the endpoint is left to its other listeners.

import { ErrorCodes, invalidArgs, isErrorCode, refuseUnknownOptions, StoreError } from "./errors.js";
import { queryFromWire, isQuery } from "./query.js";
import { describe } from "./schema.js";
import { storeInternals } from "./store.js";
import { reportListenerError } from "./watch.js";

const TAG = "link";
const PAGE_SIZE = 100;
// The documents' own tables (src/documents/documents.h): a restore record
// writes them with plain ops.
const DOCUMENTS_TABLE = "_documents";
const DELTAS_TABLE = "_deltas";

// postMessage plus a message listener, whatever the endpoint's style.
function endpointOf(ep, what) {
  if (ep === null || (typeof ep !== "object" && typeof ep !== "function") || typeof ep.postMessage !== "function") {
    throw invalidArgs(`${what}: expected a Worker, a worker's global scope or a MessagePort (something with postMessage), got ${describe(ep)}`);
  }
  const post = (msg) => ep.postMessage(msg);
  if (typeof ep.on === "function" && typeof ep.off === "function") {
    // Node: worker_threads Worker, parentPort, MessagePort (data comes bare).
    return {
      post,
      listen(fn) {
        ep.on("message", fn);
        return () => ep.off("message", fn);
      },
    };
  }
  if (typeof ep.addEventListener === "function") {
    return {
      post,
      listen(fn) {
        const onMessage = (e) => fn(e.data);
        ep.addEventListener("message", onMessage);
        if (typeof ep.start === "function") ep.start();  // a MessagePort queues until started
        return () => ep.removeEventListener("message", onMessage);
      },
    };
  }
  throw invalidArgs(`${what}: the endpoint has postMessage but no way to listen (addEventListener or on), got ${describe(ep)}`);
}

/**
 * An error as it crosses a link: plain data that structured clone keeps.
 *
 * @example
 * errorToWire(new StoreError("fenced", "…"))   // { name: "StoreError", code: "fenced", message: "…" }
 */
export function errorToWire(e) {
  // Never throws, and always gives strings that structured clone keeps:
  // whatever a method threw (a null-prototype object, an Error whose
  // message is a symbol, a Proxy whose traps throw) is answered, where a
  // throw here left the call unsettled and stopped a commit's messages.
  try {
    if (e instanceof Error) {
      const out = { name: textOf(e.name), message: textOf(e.message) };
      if (typeof e.code === "string") out.code = e.code;
      return out;
    }
  } catch { /* a Proxy's trap threw: named by describe() below */ }
  return { name: "Error", message: textOf(e) };
}

// `v` as text: String(v), or describe(v) where String throws (an object of
// no prototype, a toString that throws).
function textOf(v) {
  if (typeof v === "string") return v;
  try {
    return String(v);
  } catch {
    try {
      return describe(v);
    } catch {
      return "a value that cannot be shown as text";
    }
  }
}

/**
 * The error a link's tab sees: a StoreError with its code when the worker's
 * error had a known code, else an Error with the worker error's name and
 * message.
 *
 * @example
 * errorFromWire({ name: "StoreError", code: "fenced", message: "…" }) instanceof StoreError   // true
 */
export function errorFromWire(w) {
  if (w && isErrorCode(w.code)) return new StoreError(w.code, w.message);
  const e = new Error(w?.message ?? "unknown error across the link");
  if (typeof w?.name === "string") e.name = w.name;
  return e;
}

function isDataCloneError(e) {
  return e?.name === "DataCloneError" || /could not be cloned|DataCloneError/.test(String(e?.message));
}

// The endpoints a server listens on, until it stops: one store each.
const serving = new WeakSet();

/**
 * Serves a store over an endpoint (the worker's global scope by default):
 * tabs that `connect` to it call `methods` and hold tables and derives.
 * Returns the server: `close()` stops serving (the store stays open).
 *
 * @example
 * // worker.js
 * const store = await openStore({ backend: "opfs", name: "session-42" });
 * serve(store, { methods: { addNote: ({ text }, ctx) => notes.tx(async (tx) => { … }, ctx) } });
 */
export function serve(store, options = {}) {
  const { live, io, checkOpen } = storeInternals(store);
  // A closed or fenced store has no commits to send, and its server would
  // hold the endpoint for good (nothing would stop it).
  checkOpen("serve");
  if (options === null || typeof options !== "object") {
    throw invalidArgs(`serve: options must be { methods, port? }, got ${describe(options)}`);
  }
  refuseUnknownOptions(options, ["methods", "port"], "serve");
  const methods = options.methods ?? {};
  if (methods === null || typeof methods !== "object") {
    throw invalidArgs(`serve: methods must be an object of functions (args, ctx) => value, got ${describe(methods)}`);
  }
  for (const [k, f] of Object.entries(methods)) {
    if (typeof f !== "function") throw invalidArgs(`serve: method ${JSON.stringify(k)} must be a function (args, ctx) => value, got ${describe(f)}`);
  }
  if (options.port === undefined && typeof globalThis.postMessage !== "function") {
    // Node's worker_threads have no global postMessage: the endpoint is
    // parentPort (or a MessagePort), given as `port`.
    throw invalidArgs("serve: no port given, and no global postMessage (not a Worker): pass { port }, a worker_threads parentPort or a MessagePort");
  }
  const target = options.port ?? globalThis;
  const ep = endpointOf(target, "serve");
  if (serving.has(target)) {
    throw invalidArgs("serve: this endpoint already serves a store, and both servers would run every call of its links; close that server (or its store) first, or give each store a MessagePort of its own");
  }
  const links = new Map();  // link id -> Map<hold id, { table } | { derive }>
  let closed = false;

  // Posts `msg`; false when structured clone refused it (`refused` then
  // holds why, naming the value, for unsent()).
  let refused = "";
  const unsent = (what) => errorToWire(invalidArgs(`${what} cannot be sent to the tab (structured clone refused it): ${refused}`));
  function post(msg) {
    try {
      ep.post(msg);
      return true;
    } catch (e) {
      if (!isDataCloneError(e)) reportListenerError(e, "serve: postMessage");
      refused = e?.message;
      return false;
    }
  }

  function answer(link, id, settle) {
    const base = { onestore: TAG, link, t: "result", id };
    settle.then(
      (value) => {
        if (!post({ ...base, value })) {
          post({ ...base, error: unsent("the result of this call") });
        }
      },
      (error) => {
        if (!post({ ...base, error: errorToWire(error) })) post({ ...base, error: unsent("the error of this call") });
      },
    );
  }

  function holdTable(holds, msg) {
    const h = io.handleOf(msg.table, `link.hold(${describe(msg.table)})`);
    if (h.failed) throw h.failed;
    if (!h.settled) throw new StoreError(ErrorCodes.NotFound, `link.hold: table ${h.name} is still being declared; hold it again shortly`);
    const q = queryFromWire(h.def, msg.query);
    const rows = [];
    let after;
    for (;;) {
      const page = io.pageNow(h, q, PAGE_SIZE, after === undefined ? undefined : { after });
      rows.push(...page.rows);
      if (!page.next) break;
      after = page.next;
    }
    holds.set(msg.id, { table: h.name });
    return { rows };
  }

  // A document by owner and address: the live one now, or undefined.
  function findDocument(doc, what) {
    return io.documentsNow({ owner: doc.owner, call: "find", address: doc.key === undefined ? { kind: doc.kind } : { kind: doc.kind, key: doc.key } }, what) ?? undefined;
  }

  function holdDocument(holds, msg) {
    const doc = msg.document;
    const what = `link.hold(document ${describe(doc)})`;
    if (doc === null || typeof doc !== "object" || typeof doc.owner !== "string" || typeof doc.kind !== "string" || (doc.key !== undefined && typeof doc.key !== "string")) {
      throw invalidArgs(`${what}: expected { owner, kind, key? } with strings`);
    }
    const document = findDocument(doc, what);
    holds.set(msg.id, { document: doc, docId: document?.id, docVersion: document?.version });
    return { document };
  }

  function holdDerive(holds, msg) {
    const d = live.derives.get(msg.derive);
    if (!d) throw new StoreError(ErrorCodes.NotFound, `link.hold: no derive named ${describe(msg.derive)} in this store; define it with store.derive(name, fn) before tabs hold it`);
    const r = live.derives.acquire(d);
    holds.set(msg.id, { derive: d });
    return "error" in r ? { error: errorToWire(r.error) } : { value: r.value };
  }

  function release(holds, id) {
    const held = holds.get(id);
    if (!held) return;
    holds.delete(id);
    if (held.derive) live.derives.release(held.derive);
  }

  function onMessage(msg) {
    if (closed || msg === null || typeof msg !== "object" || msg.onestore !== TAG || typeof msg.link !== "string") return;
    const link = msg.link;
    let holds = links.get(link);
    if (!holds) links.set(link, (holds = new Map()));
    switch (msg.t) {
      case "call": {
        const fn = Object.hasOwn(methods, msg.method) ? methods[msg.method] : undefined;
        if (!fn) {
          answer(link, msg.id, Promise.reject(new StoreError(ErrorCodes.NotFound, `link.call: no method ${describe(msg.method)}; the worker serves ${Object.keys(methods).map((m) => JSON.stringify(m)).join(", ") || "no methods"}`)));
          return;
        }
        answer(link, msg.id, new Promise((resolve) => resolve(fn(msg.args, msg.ctx ?? undefined))));
        return;
      }
      case "hold": {
        const base = { onestore: TAG, link, t: "held", id: msg.id, seq: io.head() };
        let part;
        try {
          part = msg.table !== undefined ? holdTable(holds, msg) : msg.document !== undefined ? holdDocument(holds, msg) : holdDerive(holds, msg);
        } catch (e) {
          part = { error: errorToWire(e), ended: true };  // no hold was made
        }
        // A value structured clone refuses fails only this event: the hold
        // stays, and later values come as any other (as in a commit's).
        if (!post({ ...base, ...part })) {
          post({ ...base, error: unsent("link.hold: the value") });
        }
        return;
      }
      case "hello":
        post({ onestore: TAG, link, t: "ready" });
        return;
      case "unhold":
        release(holds, msg.id);
        return;
      case "close":
        for (const id of [...holds.keys()]) release(holds, id);
        links.delete(link);
        return;
      default:
        return;
    }
  }

  // Whether a commit's document ops touch a held document: an op on the
  // document held now, or a create at its address.
  function touches(held, docOps) {
    const d = held.document;
    return docOps.some((op) => op.owner === d.owner &&
      (op.id === held.docId || (op.op === "doc.create" && op.kind === d.kind && (op.key ?? undefined) === d.key)));
  }

  // One message per link per commit, with every part the link holds.
  function commit(seq, byTable, recomputed, docOps = []) {
    // A commit that writes the documents' own tables (store.restore, its
    // undo) may change any document without a doc.* op: each held one is
    // read again, and sent when it is another document or version.
    const rewritten = byTable.has(DOCUMENTS_TABLE) || byTable.has(DELTAS_TABLE);
    for (const [link, holds] of links) {
      const parts = [];
      for (const [id, held] of holds) {
        if (held.document !== undefined) {
          const touched = docOps.length > 0 && touches(held, docOps);
          if (!touched && !rewritten) continue;
          try {
            const document = findDocument(held.document, "link: a held document");
            if (!touched && document?.id === held.docId && document?.version === held.docVersion) continue;
            held.docId = document?.id;
            held.docVersion = document?.version;
            parts.push({ id, document });
          } catch (e) {
            parts.push({ id, error: errorToWire(e) });
          }
        } else if (held.table !== undefined) {
          const ops = byTable.get(held.table);
          if (ops) parts.push({ id, ops });
        } else if (recomputed.has(held.derive)) {
          const r = held.derive.result;
          parts.push("error" in r ? { id, error: errorToWire(r.error) } : { id, value: r.value });
        }
      }
      if (parts.length === 0) continue;
      const msg = { onestore: TAG, link, t: "commit", seq, parts };
      if (post(msg)) continue;
      // A value structured clone refuses fails only its own part.
      msg.parts = parts.map((p) => {
        try {
          structuredClone(p);
          return p;
        } catch (e) {
          refused = e.message;
          return { id: p.id, error: unsent("the value of this hold") };
        }
      });
      post(msg);
    }
  }

  // Ends serving; each link is told why (its calls reject, its holds end).
  function stop(why, code) {
    if (closed) return;
    closed = true;
    for (const [link, holds] of links) {
      post({ onestore: TAG, link, t: "closed", why, code });
      for (const id of [...holds.keys()]) release(holds, id);
    }
    links.clear();
    removeSink();
    unlisten();
    serving.delete(target);
  }

  const removeSink = live.addSink({ commit, closed: (err) => stop(err?.message ?? "the store this tab is linked to was closed in its worker", err?.code) });
  const unlisten = ep.listen(onMessage);
  serving.add(target);

  const server = Object.freeze({
    /** The number of links (tabs) currently connected. */
    get links() {
      return links.size;
    },
    /**
     * Stops serving: each link is told (its calls and holds end with
     * `closed`), the endpoint's messages are ignored from now on and the
     * derives the links held are released. The store stays open.
     * @example server.close();
     */
    close() {
      stop("the worker stopped serving its store (server.close)");
    },
  });
  return server;
}

let linkCounter = 0;

/**
 * Links this tab to a store served in a worker (`serve`). Returns the link:
 * call, hold, close.
 *
 * @example
 * const link = connect(new Worker(new URL("./store-worker.js", import.meta.url), { type: "module" }));
 * const off = link.hold("chat/messages", ({ rows, ops }) => render(rows, ops));
 */
export function connect(target) {
  const ep = endpointOf(target, "connect");
  const id = `${Date.now().toString(36)}-${(++linkCounter).toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
  const pending = new Map();  // call id -> { resolve, reject }
  const holds = new Map();    // hold id -> listener
  let nextId = 1;
  let closed = false;
  let seq = 0;

  function deliver(listener, event) {
    try {
      listener(event);
    } catch (e) {
      reportListenerError(e, "link.hold");
    }
  }

  let fencedBy = null;  // the fence that ended the link: later calls reject with it
  function shut(error) {
    closed = true;
    clearInterval(helloAgain);
    unlisten();
    target.off?.("exit", exited);
    target.removeEventListener?.("error", failedEarly);
    for (const p of pending.values()) p.reject(error);
    pending.clear();
  }

  // The link ended on the worker's side: every hold and call is told.
  function ended(why, code = ErrorCodes.Closed) {
    const error = new StoreError(code, `link: ${why}`);
    if (code === ErrorCodes.Fenced) fencedBy = error;
    for (const listener of holds.values()) deliver(listener, { seq, error });
    holds.clear();
    shut(error);
  }
  // A Node worker_threads Worker that exits answers nothing more.
  function exited(code) {
    ended(`the worker exited (code ${code})`);
  }
  // A browser's dedicated Worker whose module failed (its top-level
  // openStore rejected, say) fires "error" on the Worker and never serves:
  // before the server's "ready" (while `queue` holds), that ends the link.
  // After it, an error event is an uncaught error of a worker that lives on.
  function failedEarly(event) {
    if (queue && !closed) ended(`the worker failed before serving: ${event.message}`);
  }
  if (typeof target.terminate === "function") {
    if (typeof target.once === "function") target.once("exit", exited);
    else target.addEventListener?.("error", failedEarly);
  }

  const unlisten = ep.listen((msg) => {
    if (msg === null || typeof msg !== "object" || msg.onestore !== TAG || msg.link !== id) return;
    if (typeof msg.seq === "number" && msg.seq > seq) seq = msg.seq;
    switch (msg.t) {
      case "ready":
        flush();
        return;
      case "result": {
        const p = pending.get(msg.id);
        if (!p) return;
        pending.delete(msg.id);
        if ("error" in msg) p.reject(errorFromWire(msg.error));
        else p.resolve(msg.value);
        return;
      }
      case "held": {
        const listener = holds.get(msg.id);
        if (!listener) return;
        if ("error" in msg) {
          // A hold that could not be made ends; a derive that threw is
          // held on, and its next recompute comes as any other.
          if (msg.ended) holds.delete(msg.id);
          deliver(listener, { seq: msg.seq, error: errorFromWire(msg.error) });
        } else if ("rows" in msg) deliver(listener, { seq: msg.seq, rows: msg.rows });
        else if ("document" in msg) deliver(listener, { seq: msg.seq, document: msg.document });
        else deliver(listener, { seq: msg.seq, value: msg.value });
        return;
      }
      case "commit": {
        // Every part of this commit, in one task.
        for (const part of msg.parts) {
          const listener = holds.get(part.id);
          if (!listener) continue;
          if ("error" in part) deliver(listener, { seq: msg.seq, error: errorFromWire(part.error) });
          else if ("ops" in part) deliver(listener, { seq: msg.seq, ops: part.ops });
          else if ("document" in part) deliver(listener, { seq: msg.seq, document: part.document });
          else deliver(listener, { seq: msg.seq, value: part.value });
        }
        return;
      }
      case "closed":
        // A store fenced in its worker ends the link with `fenced`.
        ended(typeof msg.why === "string" ? msg.why : "the worker closed it", msg.code === ErrorCodes.Fenced ? msg.code : undefined);
        return;
      default:
        return;
    }
  });

  // Until the server answers the link's hello, messages wait here (a
  // worker's messages from before its serve() would find no listener),
  // each a structured clone made now, so a value the clone refuses fails
  // its call. The hello is said again until then, as it may be lost too.
  let queue = [];
  function flush() {
    if (!queue) return;
    clearInterval(helloAgain);
    for (const m of queue) ep.post(m);
    queue = null;
  }
  function send(msg) {
    msg = { onestore: TAG, link: id, ...msg };
    if (queue) queue.push(structuredClone(msg));
    else ep.post(msg);
  }
  const hello = () => ep.post({ onestore: TAG, link: id, t: "hello" });
  const helloAgain = setInterval(hello, 25);
  helloAgain.unref?.();  // Node: a link waiting for a server keeps no process alive
  hello();

  function closedError(what) {
    return fencedBy ?? new StoreError(ErrorCodes.Closed, `${what}: the link is closed; connect again`);
  }

  function holdDocument(spec, listener) {
    const doc = spec.document;
    const ok = doc !== null && typeof doc === "object" && typeof doc.owner === "string" && doc.owner !== "" &&
      typeof doc.kind === "string" && (doc.key === undefined || typeof doc.key === "string") &&
      Object.keys(spec).length === 1 && Object.keys(doc).every((k) => k === "owner" || k === "kind" || k === "key");
    if (!ok) throw invalidArgs(`link.hold: a document is held as { document: { owner, kind, key? } } with strings, got ${describe(spec)}`);
    if (typeof listener !== "function") throw invalidArgs(`link.hold(document): the last argument must be a listener function, got ${describe(listener)}`);
    const holdId = nextId++;
    holds.set(holdId, listener);
    send({ t: "hold", id: holdId, document: doc.key === undefined ? { owner: doc.owner, kind: doc.kind } : { owner: doc.owner, kind: doc.kind, key: doc.key } });
    return function unsubscribe() {
      if (!holds.delete(holdId) || closed) return;
      send({ t: "unhold", id: holdId });
    };
  }

  const link = Object.freeze({
    /** The newest seq this link has heard of (0 before anything arrived). */
    get seq() {
      return seq;
    },
    /** True once the link was closed (by close() or because its store closed). */
    get closed() {
      return closed;
    },
    /**
     * Runs one of the worker's methods with `args` and `ctx`; resolves to its
     * result. The commits it made have reached this tab's holds before it
     * resolves. Errors arrive as StoreError with their code.
     * @example const seq = await link.call("addMessage", { role: "user", text: "hi" }, { actor: { kind: "person", id: "ana" } });
     */
    call(method, args, ctx) {
      if (closed) return Promise.reject(closedError("link.call"));
      if (typeof method !== "string" || method === "") return Promise.reject(invalidArgs(`link.call: the method must be a non-empty string, got ${describe(method)}`));
      const callId = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(callId, { resolve, reject });
        try {
          send({ t: "call", id: callId, method, args, ctx });
        } catch (e) {
          pending.delete(callId);
          // Structured clone refused them, or reading them threw (a getter).
          reject(e instanceof StoreError ? e : invalidArgs(`link.call(${method}): the arguments cannot be sent to the worker: ${e?.message}`, { cause: e }));
        }
      });
    },
    /**
     * Holds a table (a name with "/", such as "chat/messages"), a derive
     * (a name without) or a document ({ document: { owner, kind, key? } }).
     * A table's listener gets { seq, rows } (the query's current rows) and
     * then { seq, ops } after each commit that touched the table; a derive's
     * gets { seq, value } now and after each recompute; a document's gets
     * { seq, document } now and after each commit that changed, retired or
     * created the document at that address (document: { id, address,
     * version, seq, value }, or undefined when none is live there). Any may
     * get { seq, error }. Returns the unsubscribe function.
     * @example const off = link.hold("chat/messages", query(Messages).orderBy((m) => m.at), ({ rows, ops }) => …);
     * @example const off = link.hold("unread", ({ value }) => badge(value));
     * @example const off = link.hold({ document: { owner: "notes", kind: "note", key: "n1" } }, ({ document }) => show(document?.value));
     */
    hold(name, a, b) {
      if (closed) throw closedError("link.hold");
      if (name !== null && typeof name === "object" && !isQuery(name)) return holdDocument(name, a);
      if (typeof name !== "string" || name === "") {
        throw invalidArgs(`link.hold: expected a table name such as "chat/messages" or a derive's name, got ${describe(name)}`);
      }
      const isTable = name.includes("/");
      const listener = typeof a === "function" ? a : b;
      const q = typeof a === "function" ? undefined : a;
      if (typeof listener !== "function") throw invalidArgs(`link.hold(${name}): the last argument must be a listener function, got ${describe(b === undefined ? a : b)}`);
      if (!isTable && typeof a !== "function") throw invalidArgs(`link.hold(${name}): a derive takes no query; pass the listener second`);
      if (q !== undefined && q !== null && !isQuery(q)) throw invalidArgs(`link.hold(${name}): expected a query such as query(Messages).orderBy(...), got ${describe(q)}`);
      const table = name.slice(name.lastIndexOf("/") + 1);
      if (q && q.table.name !== table) throw invalidArgs(`link.hold(${name}): the query is over table ${JSON.stringify(q.table.name)}, not ${JSON.stringify(table)}`);
      const holdId = nextId++;
      holds.set(holdId, listener);
      send(isTable ? { t: "hold", id: holdId, table: name, query: q ? q.toJSON() : null } : { t: "hold", id: holdId, derive: name });
      return function unsubscribe() {
        if (!holds.delete(holdId) || closed) return;
        send({ t: "unhold", id: holdId });
      };
    },
    /**
     * Closes the link: its holds stop, its pending calls reject with
     * `closed`. The worker and its store keep running.
     * @example link.close();
     */
    close() {
      if (closed) return;
      try { ep.post({ onestore: TAG, link: id, t: "close" }); } catch { /* the endpoint is gone */ }
      holds.clear();
      shut(closedError("link.call"));
    },
  });
  return link;
}
