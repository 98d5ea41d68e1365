// The demo's store lives here, in a dedicated Worker: it opens the session
// store (OPFS where the package has it, memory otherwise), seeds a first
// session, defines the derives the page shows, and serves it to the page.
//
// Messages of the demo itself (not of the link) are tagged { demo: … }.
//
// "Continue on another device": opened with ?continue=<relay>/sessions/<id>
// (and ?device=<name>, which names its own OPFS store), the worker pulls that
// session from the relay into its store with pullSession, and its startSync
// takes the session over; the first device's sync then splits its store off.
import * as onestore from "../js/browser.js";
import {
  importStore, listStores, openStore, prefix, pullSession, query, replacePrefix, serve, StoreError,
} from "../js/browser.js";
import { Edits, Messages, NOTE, STORE_NAME } from "./schema.js";
import { embed } from "./embed.js";

const params = new URL(self.location.href).searchParams;
const tab = params.get("tab") ?? "?";
const device = params.get("device");
const name = params.get("store") ?? (device ? `${STORE_NAME}-${device}` : STORE_NAME);
const continueFrom = params.get("continue");

function tell(msg) {
  self.postMessage({ demo: true, ...msg });
}

async function open() {
  let store;
  const options = {
    backend: "opfs",
    name,
    durability: "full",
    onFenced: (err) => tell({ t: "fenced", message: err?.message ?? "another tab took the store over", head: store.head }),
  };
  try {
    store = continueFrom && !(await hasOpfsStore(name))
      ? await pullSession({ relay: continueFrom }, options)
      : await openStore(options);
    return { store, mode: "opfs", reason: null, pulled: Boolean(continueFrom) };
  } catch (e) {
    // This runtime has no OPFS backend (yet): a memory store, said loudly.
    if (!(e instanceof StoreError) || e.code !== "invalid/args") throw e;
    store = continueFrom ? await pullSession({ relay: continueFrom }, { backend: "memory" }) : await openStore({ backend: "memory" });
    return { store, mode: "memory", reason: e.message, pulled: Boolean(continueFrom) };
  }
}

// Whether this origin already has the OPFS store `name` (a device that
// pulled the session and was reloaded opens its own copy again).
async function hasOpfsStore(name) {
  const stores = await listStores({ backend: "opfs", prefix: name });
  return stores.some((s) => s.name === name);
}

// What the page's sync panel shows: the driver's state and the relay's
// acknowledged seq, and once the session was taken over elsewhere, the
// store's new session id and its origin.
function syncView(store, sync) {
  return {
    t: "sync",
    state: sync?.state ?? "off",
    acked: sync?.acked ?? 0,
    session: sync?.session ?? null,
    head: store.head,
    id: store.id,
    origin: store.origin ?? null,
  };
}

async function main() {
  const { store, mode, reason, pulled } = await open();
  let sync = null;
  const agent = store.object({ type: "agent" });
  const history = store.object({ type: "file-history" });
  const notesOwner = store.object({ type: "notes" });
  const messages = agent.table(Messages);
  const edits = history.table(Edits);
  await Promise.all([messages.count(), edits.count()]);
  if ((await messages.count()) === 0) await seed(store, agent, history, notesOwner, messages, edits);
  await embedOlderMessages(agent, messages);
  const address = { kind: NOTE.kind, key: NOTE.key };
  const noteId = async () => (await notesOwner.documents.find(address))?.id;

  // What the page shows live. Each is recomputed in the flush of a commit
  // that touched what it read, and travels in that commit's one message.
  store.derive("stats", (read) => ({
    head: read.head,
    messages: read.count(messages),
    edits: read.count(edits),
  }));
  store.derive("outbox", (read) => {
    const { commits } = read.outbox(Math.max(0, read.head - 8), 8);
    return commits.reverse().map(recordView);
  });
  store.derive("folders", (read) => {
    const dirs = new Map();
    for (const e of read.all(edits)) {
      const parts = e.path.split("/");
      for (let i = 1; i < parts.length; i++) {
        const d = parts.slice(0, i).join("/") + "/";
        dirs.set(d, (dirs.get(d) ?? 0) + 1);
      }
    }
    return [...dirs].map(([path, files]) => ({ path, files })).sort((a, b) => (a.path < b.path ? -1 : 1));
  });

  serve(store, {
    methods: {
      session: () => ({ mode, reason, name, tab, id: store.id, device, pulled }),
      sync: () => syncView(store, sync),
      // Drives this session to the relay when the package has the driver
      // (startSync, docs/api.md); says why not otherwise.
      startSync({ relay }) {
        if (typeof onestore.startSync !== "function") return { started: false, reason: "this build of the package has no startSync yet: the relay shows what it holds" };
        if (sync) return { started: true };
        try {
          sync = onestore.startSync(store, { relay, device: device ? `device ${device}, tab ${tab}` : `tab ${tab}` });
          // The panel follows the state and the acked seq (which moves with
          // no event of its own: watched here, cheaply).
          const show = () => tell(syncView(store, sync));
          sync.on("state", show);
          sync.on("lost", show);
          let acked = -1;
          setInterval(() => { if (sync.acked !== acked) { acked = sync.acked; show(); } }, 250);
          show();
          return { started: true };
        } catch (e) {
          return { started: false, reason: `${e?.code ?? "error"}: ${e?.message ?? e}` };
        }
      },
      async addMessage({ role, text }, ctx) {
        let id;
        await agent.tx(async (tx) => {
          id = tx.mintId(messages);
          await tx.put(messages, { id, role, text, at: Date.now(), embedding: embed(text) });
        }, ctx);
        return { id, seq: store.head };
      },
      // Search by meaning: the messages nearest the query's embedding
      // (cosine distance, docs/guide.md "Search by meaning").
      async searchMessages({ text, k = 3 }) {
        const hits = await messages.nearest((e) => e.embedding, embed(text), k, { metric: "cosine" });
        return hits.map(({ row, distance }) => ({ id: row.id, role: row.role, text: row.text, distance }));
      },
      async renameFolder({ from, to }, ctx) {
        let count = 0;
        await history.tx(async (tx) => {
          count = await tx.count(edits, query(Edits).where((e) => prefix(e.path, from)));
          await tx.updateWhere(edits, (e) => prefix(e.path, from), { path: replacePrefix(from, to) });
        }, ctx);
        return { count, seq: store.head };
      },
      // The note is a document: a save is one JSON Patch (a new version).
      async saveNote({ title, body }, ctx) {
        const doc = await notesOwner.documents.find(address);
        const patch = [];
        if (doc && doc.value?.title !== title) patch.push({ op: "replace", path: "/title", value: title });
        if (doc && doc.value?.body !== body) patch.push({ op: "replace", path: "/body", value: body });
        if (doc && patch.length === 0) return { seq: store.head, version: doc.version };
        await notesOwner.tx(async (tx) => {
          if (doc) await tx.documents.change(doc.id, patch);
          else await tx.documents.create(address, { title, body });
        }, ctx);
        return { seq: store.head };
      },
      // The session as a tar archive (its bytes), with progress messages.
      async exportArchive() {
        const onProgress = (p) => tell({ t: "progress", kind: "export", ...p });
        const bytes = new Uint8Array(await new Response(store.export({ onProgress })).arrayBuffer());
        return { bytes, head: store.head, fingerprint: await store.fingerprint() };
      },
      // Restores an archive as a second store beside this one (a new OPFS
      // store "<name>-imported", or memory), with progress messages; says
      // whether its content equals this store's.
      async importArchive({ bytes }) {
        const onProgress = (p) => tell({ t: "progress", kind: "import", ...p });
        const target = mode === "opfs" ? { backend: "opfs", name: `${name}-imported` } : { backend: "memory" };
        const copy = await importStore(bytes, target, { onProgress });
        try {
          return { id: copy.id, head: copy.head, fingerprint: await copy.fingerprint(), same: (await copy.fingerprint()) === (await store.fingerprint()), where: target.name ?? "memory" };
        } finally {
          await copy.close();
        }
        },
      // The note's versions, oldest first: { version, seq, at, op, actor }.
      async noteVersions() {
        const id = await noteId();
        return id === undefined ? [] : notesOwner.documents.versions(id);
      },
      // The note as it was at a seq (documents.load at a past seq).
      async noteAt({ seq }) {
        const id = await noteId();
        return id === undefined ? null : (await notesOwner.documents.load(id, { at: seq })) ?? null;
      },
      // The newest `limit` commits matching an owner and/or an actor's id,
      // newest first: store.log pages followed to the end of the outbox.
      async outboxLog({ owner, actor, limit = 8 }) {
        const filter = { ...(owner ? { owner } : {}), ...(actor ? { actor: { id: actor } } : {}) };
        const found = [];
        let after;
        do {
          const page = await store.log({ ...filter, limit: 1000, after });
          found.push(...page.commits);
          if (found.length > limit) found.splice(0, found.length - limit);
          after = page.next;
        } while (after !== undefined);
        return found.reverse().map(recordView);
      },
      // The owners and actor ids of the retained commits, for the filters.
      async outboxFilters() {
        const owners = new Set();
        const actors = new Set();
        let after;
        do {
          const page = await store.log({ limit: 1000, after });
          for (const c of page.commits) {
            owners.add(c.owner);
            if (c.actor?.id) actors.add(c.actor.id);
          }
          after = page.next;
        } while (after !== undefined);
        return { owners: [...owners].sort(), actors: [...actors].sort() };
      },
      async pageEdits({ under = "", after, limit = 6 }) {
        const q = query(Edits).where((e) => prefix(e.path, under)).orderBy((e) => e.path).orderBy((e) => e.at, "desc");
        const [page, total] = await Promise.all([edits.page(q, limit, undefined, after ? { after } : undefined), edits.count(q)]);
        return { ...page, total };
      },
    },
  });
  tell({ t: "ready", mode, reason, head: store.head, tab, id: store.id, device, pulled });
}

// What the outbox panel shows of a record.
const enc = new TextEncoder();
function recordView(c) {
  return {
    seq: c.seq,
    owner: c.owner,
    actor: c.actor?.id ?? null,
    at: c.at,
    ops: c.ops.map((o) => ({ op: o.op, table: o.table ?? `${o.owner} document ${o.id}`, bulk: o.where !== undefined, count: o.count })),
    bytes: enc.encode(JSON.stringify(c, (k, v) => (typeof v === "bigint" ? String(v) : v))).length,
  };
}

// A store written before the messages had embeddings (version 1 of the
// table): each message without one gets it, in one transaction.
async function embedOlderMessages(agent, messages) {
  const missing = [];
  for await (const m of messages.rows()) if (m.embedding === null) missing.push(m);
  if (missing.length === 0) return;
  await agent.tx(async (tx) => {
    for (const m of missing) await tx.update(messages, [m.id], { embedding: embed(m.text) });
  }, { actor: { kind: "service", id: "demo-embeddings" } });
}

async function seed(store, agent, history, notesOwner, messages, edits) {
  const t0 = Date.now() - 1000 * 60 * 14;
  const ctx = { actor: { kind: "person", id: "ana" } };
  const transcript = [
    ["user", "The settings panel is getting hard to work in. Can you split it into smaller components and move them under src/components/settings/?"],
    ["assistant", "Sure. I'll start by reading the current panel and its tests, then extract the tabs into their own files."],
    ["tool", "read_file src/panels/SettingsPanel.tsx (412 lines)"],
    ["assistant", "The panel holds four tabs inline: General, Models, Keys and Plugins. I've extracted each into src/panels/settings/ and kept the shared form hooks in one place."],
    ["user", "Looks good. Let's call the folder components/settings, not panels/settings."],
  ];
  await agent.tx(async (tx) => {
    for (const [i, [role, text]] of transcript.entries()) {
      await tx.put(messages, { id: tx.mintId(messages), role, text, at: t0 + i * 60_000, embedding: embed(text) });
    }
  }, ctx);
  const files = [
    "src/panels/settings/GeneralTab.tsx", "src/panels/settings/ModelsTab.tsx", "src/panels/settings/KeysTab.tsx",
    "src/panels/settings/PluginsTab.tsx", "src/panels/settings/useSettingsForm.ts", "src/panels/settings/index.ts",
    "src/panels/SettingsPanel.tsx", "src/panels/SettingsPanel.test.tsx", "src/app/routes.ts", "docs/settings.md",
  ];
  await history.tx(async (tx) => {
    let n = 0;
    for (const [i, path] of files.entries()) {
      const versions = i < 4 ? 2 : 1;
      for (let v = 0; v < versions; v++) {
        n++;
        await tx.put(edits, { id: `e${String(n).padStart(3, "0")}`, path, entry: 3 + v, at: t0 + 3 * 60_000 + n * 7_000, meta: { tool: v ? "edit_file" : "write_file", lines: 20 + ((n * 37) % 180) } });
      }
    }
  }, ctx);
  await notesOwner.tx(async (tx) => {
    await tx.documents.create({ kind: NOTE.kind, key: NOTE.key }, {
      title: "Settings refactor",
      body: "Goal: one component per settings tab.\n\n- Keep useSettingsForm shared\n- Move tests next to each tab\n- Update docs/settings.md when the folder settles",
    });
  }, ctx);
}

main().catch((e) => tell({ t: "error", code: e?.code, message: e?.message ?? String(e) }));
