// A dedicated Worker for tests/browser/archive.test.js: exports and imports
// OPFS stores through the package's browser root (archive.html). Each call
// is { id, op, args }; each answer { id, ok, value } or { id, ok: false,
// error: { code, name, message } }. Archives cross as base64 text.
import * as api from "../../../js/browser.js";
import { sessionFixture } from "../../js/archive/session.js";

const { openStore, importStore } = api;
const { fill, state } = sessionFixture(api);
const stores = new Map();

function errorOf(e) {
  return { code: e?.code, name: e?.name, message: String(e?.message ?? e) };
}

function toBase64(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

function fromBase64(text) {
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

async function open(name) {
  if (!stores.has(name)) stores.set(name, await openStore({ backend: "opfs", name }));
  return stores.get(name);
}

async function close(name) {
  await stores.get(name)?.close();
  stores.delete(name);
}

// The names in OPFS onestore/ and, for each, its entries (blobs/ listed).
async function listing() {
  const root = await navigator.storage.getDirectory();
  const top = await root.getDirectoryHandle("onestore", { create: true });
  const out = {};
  const walk = async (dir, path) => {
    for await (const [n, h] of dir.entries()) {
      out[path + n] = h.kind;
      if (h.kind === "directory") await walk(h, path + n + "/");
    }
  };
  await walk(top, "");
  return out;
}

const ops = {
  async fill({ name, tag, rows }) {
    await fill(await open(name), { tag, rows });
  },
  async state({ name }) {
    return state(await open(name));
  },
  async close({ name }) {
    await close(name);
  },
  async export({ name }) {
    const progress = [];
    const bytes = new Uint8Array(await new Response((await open(name)).export({ onProgress: (p) => progress.push(p) })).arrayBuffer());
    return { tar: toBase64(bytes), progress: progress.at(-1), reports: progress.length };
  },
  // `keepOpen`: the store at that name stays open in this worker, as its
  // owner, while the import runs.
  async import({ name, tar, cut, keepOpen }) {
    if (!keepOpen) await close(name);
    const bytes = fromBase64(tar);
    // `cut`: the stream fails after that many bytes, as a network does.
    const source = cut === undefined ? bytes : new ReadableStream({
      start(c) { c.enqueue(bytes.slice(0, cut)); },
      pull(c) { c.error(new Error("the network went away")); },
    });
    const progress = [];
    const store = await importStore(source, { backend: "opfs", name }, { onProgress: (p) => progress.push(p) });
    if (keepOpen) await close(name);  // fenced by the switch
    stores.set(name, store);
    return { progress: progress.at(-1), reports: progress.length };
  },
  listing,
  // What a switch cut after its db.sqlite moved leaves (js/archive-opfs.js):
  // a generation folder with blobs.json and its blobs, without db.sqlite.
  async cutSwitch({ name, text }) {
    await close(name);
    const bytes = new TextEncoder().encode(text);
    const hash = [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))].map((x) => x.toString(16).padStart(2, "0")).join("");
    const top = await (await navigator.storage.getDirectory()).getDirectoryHandle("onestore");
    const gen = await top.getDirectoryHandle(`${name}.import-0123456789ab`, { create: true });
    const dir = await (await (await gen.getDirectoryHandle("blobs", { create: true })).getDirectoryHandle("sha256", { create: true })).getDirectoryHandle(hash.slice(0, 2), { create: true });
    const write = async (d, file, data) => {
      const w = await (await d.getFileHandle(file, { create: true })).createWritable();
      await w.write(data);
      await w.close();
    };
    await write(dir, hash, bytes);
    await write(gen, "blobs.json", JSON.stringify([hash]));
    return hash;
  },
  async snapshot({ name, label }) {
    return (await open(name)).snapshot({ label });
  },
  async snapshots({ name }) {
    return (await open(name)).snapshots();
  },
  async blobs({ name }) {
    return (await (await open(name)).blobs.list()).hashes;
  },
};

self.onmessage = async ({ data: { id, op, args } }) => {
  try {
    self.postMessage({ id, ok: true, value: await ops[op](args) });
  } catch (e) {
    self.postMessage({ id, ok: false, error: errorOf(e) });
  }
};
