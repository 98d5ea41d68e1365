// A session for the archive round trips across backends (Node, Chromium,
// workerd): the same tables, rows, a document and blobs wherever it runs,
// and its whole state as one JSON text to compare. It imports nothing: each
// runtime passes its package root as `api`.

/** JSON with BigInt as {"$bigint":"digits"}. */
export function encodeState(v) {
  return JSON.stringify(v, (k, x) => (typeof x === "bigint" ? { $bigint: x.toString() } : x));
}

async function sha256(bytes) {
  const b = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
}

/**
 * The fixture over a package root: { fill(store, options), state(store) }.
 * @example const { fill, state } = sessionFixture(api); await fill(store, { tag: "node" });
 */
export function sessionFixture(api) {
  const { defineTable, int, json, query, str } = api;
  const Notes = defineTable("notes", {
    columns: { id: str(), text: str(), meta: json().optional(), n: int(), big: int().optional() },
    key: ["id"],
    indexes: { byN: ["n"] },
  });
  const Turns = defineTable("turns", { columns: { n: int(), who: str(), blob: str().optional() }, key: ["n"] });
  const owners = (store) => ({ files: store.object({ host: "session", type: "files" }), chat: store.object({ host: "session", type: "chat" }) });

  /** Fills a new store: `rows` notes (more than a page), turns naming blobs, a document. */
  async function fill(store, { rows = 1234, tag = "a", blobs = 3 } = {}) {
    const { files, chat } = owners(store);
    const notes = files.table(Notes);
    await files.tx(async (tx) => {
      for (let i = 0; i < rows; i++) {
        await tx.put(notes, { id: `${tag}-${String(i).padStart(5, "0")}`, text: `note ${i} ✓ "${tag}"\n`, meta: i % 5 ? { i, list: [1, { ü: "ß" }] } : null, n: i % 17, big: i === 7 ? 2n ** 60n + 1n : null });
      }
    });
    const hashes = [];
    for (let b = 0; b < blobs; b++) {
      // Text, then binary of every byte value, then larger; one may be empty.
      const bytes = b === 0 ? new TextEncoder().encode(`blob of ${tag}`) : Uint8Array.from({ length: 1000 * b * b + 1 }, (_, i) => (i * (b + 31) + tag.length) & 255);
      hashes.push(await store.blobs.put(bytes));
    }
    let doc;
    await chat.tx(async (tx) => {
      for (let n = 0; n < hashes.length; n++) await tx.put(chat.table(Turns), { n, who: tag, blob: hashes[n] });
      doc = await tx.documents.create({ kind: "plan", key: tag }, { title: `plan ${tag}`, steps: [] });
    });
    await chat.tx(async (tx) => {
      await tx.documents.change(doc, [{ op: "add", path: "/steps/-", value: "export" }]);
    });
    await files.tx(async (tx) => { await tx.delete(notes, `${tag}-00003`); });
  }

  /** The whole state as JSON text: id, head, fingerprint, rows, document, outbox, blobs (hash, size, sha256 of the bytes read). */
  async function state(store) {
    const { files, chat } = owners(store);
    const rows = {};
    for (const [owner, def] of [[files, Notes], [chat, Turns]]) {
      const h = owner.table(def);
      const all = [];
      for (let after; ;) {
        const page = await h.page(query(def), 500, undefined, after ? { after } : undefined);
        all.push(...page.rows);
        if (!page.next) break;
        after = page.next;
      }
      rows[def.name] = all;
    }
    const docs = [];
    for (const who of new Set(rows.turns.map((t) => t.who))) {
      const doc = await chat.documents.find({ kind: "plan", key: who });
      docs.push({ value: doc?.value, version: doc?.version, versions: doc ? (await chat.documents.versions(doc.id)).map((v) => v.version) : [] });
    }
    const blobs = [];
    for (let page = await store.blobs.list(); ; page = await store.blobs.list({ after: page.next })) {
      for (const hash of page.hashes) {
        const bytes = await store.blobs.get(hash);
        blobs.push({ hash, size: bytes.byteLength, sha: await sha256(bytes) });
      }
      if (!page.next) break;
    }
    return encodeState({
      id: store.id, head: store.head, fingerprint: await store.fingerprint(), rows, docs,
      outbox: (await store.outbox.read(0, 100000)).commits, blobs,
    });
  }

  return { Notes, Turns, fill, state };
}
