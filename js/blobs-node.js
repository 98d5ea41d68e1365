// The blobs of a Node sqlite store, in files beside the store file
// (docs/formats.md, "Blob layout"):
//
//   <file>.blobs/sha256/9f/9f3a…   one file per blob, named by its sha256
//
// A blob is written to a temporary file in its folder (".tmp-…", never
// listed), fsynced, renamed to its hash, and the folder fsynced (and any
// folder just created, up to the store's own), all before write() resolves:
// after that a crash or power loss keeps it.

import { createHash, randomUUID } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { dirname, join, sep } from "node:path";

/** SHA-256 of `bytes` as lowercase hex, with node:crypto. */
export async function nodeSha256(bytes) {
  return createHash("sha256").update(bytes).digest("hex");
}

/** The folder of a sqlite store file's blobs. */
export function blobsDir(file) {
  return `${file}.blobs`;
}

async function syncDir(dir) {
  const fd = await open(dir, "r");
  try {
    await fd.sync();
  } finally {
    await fd.close();
  }
}

// Runs fn on every item, SYNCS_AT_ONCE at a time; throws the first failure
// once all ran.
const SYNCS_AT_ONCE = 16;
async function inBatches(items, fn) {
  for (let i = 0; i < items.length; i += SYNCS_AT_ONCE) {
    const results = await Promise.allSettled(items.slice(i, i + SYNCS_AT_ONCE).map(fn));
    const bad = results.find((r) => r.status === "rejected");
    if (bad) throw bad.reason;
  }
}

const isMissing = (e) => e?.code === "ENOENT" || e?.code === "ENOTDIR";

/**
 * The blob backend of the sqlite store at absolute path `file`.
 * @example const b = nodeFileBlobs("/app/.data/s.sqlite"); await b.write(hash, bytes);
 */
export function nodeFileBlobs(file) {
  const root = join(blobsDir(file), "sha256");
  const pathOf = (hash) => join(root, hash.slice(0, 2), hash);
  // Writes not yet synced (write with { durable: false }): files and folders.
  const unsynced = { files: new Set(), dirs: new Set() };
  return {
    async has(hash) {
      try {
        return (await stat(pathOf(hash))).isFile();
      } catch (e) {
        if (isMissing(e)) return false;
        throw e;
      }
    },
    async size(hash) {
      try {
        const st = await stat(pathOf(hash));
        return st.isFile() ? st.size : undefined;
      } catch (e) {
        if (isMissing(e)) return undefined;
        throw e;
      }
    },
    async get(hash) {
      let buf;
      try {
        buf = await readFile(pathOf(hash));
      } catch (e) {
        if (isMissing(e)) return undefined;
        throw e;
      }
      return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    },
    // `durable: false` (an import's new generation, synced whole before it
    // is switched in): no fsync now; sync() does them all later.
    async write(hash, bytes, { durable = true } = {}) {
      const dir = join(root, hash.slice(0, 2));
      // The first folder mkdir created, if any: it and each folder below it
      // are new entries of their parents, which are fsynced too.
      const created = await mkdir(dir, { recursive: true });
      const tmp = join(dir, `.tmp-${hash}-${randomUUID()}`);
      const fd = await open(tmp, "wx");
      try {
        try {
          await fd.writeFile(bytes);
          if (durable) await fd.sync();
        } finally {
          await fd.close();
        }
        await rename(tmp, pathOf(hash));
      } catch (e) {
        await rm(tmp, { force: true }).catch(() => {});
        throw e;
      }
      const dirs = [dir];
      if (created !== undefined) {
        for (let d = dirname(dir); ; d = dirname(d)) {
          dirs.push(d);
          if (d.length <= dirname(created).length) break;
        }
      }
      if (!durable) {
        unsynced.files.add(pathOf(hash));
        for (const d of dirs) unsynced.dirs.add(d);
        return;
      }
      for (const d of dirs) await syncDir(d);
    },
    /** Syncs every write made with { durable: false }: the files, then their folders. */
    async sync() {
      // Several fsyncs at once (the file system joins them into fewer
      // journal commits): the files, then the folders by depth, deepest
      // first, so that a folder's entry in its parent is synced after its
      // own content.
      await inBatches([...unsynced.files], async (f) => {
        const fd = await open(f, "r");
        try { await fd.sync(); } finally { await fd.close(); }
      });
      const byDepth = new Map();
      for (const d of unsynced.dirs) {
        const depth = d.split(sep).length;
        if (!byDepth.has(depth)) byDepth.set(depth, []);
        byDepth.get(depth).push(d);
      }
      for (const depth of [...byDepth.keys()].sort((a, b) => b - a)) await inBatches(byDepth.get(depth), syncDir);
      unsynced.files.clear();
      unsynced.dirs.clear();
    },
    async list(after, n) {
      const out = [];
      let prefixes;
      try {
        prefixes = (await readdir(root)).filter((p) => /^[0-9a-f]{2}$/.test(p)).sort();
      } catch (e) {
        if (isMissing(e)) return out;
        throw e;
      }
      for (const p of prefixes) {
        if (p < after.slice(0, 2)) continue;
        let names;
        try {
          names = await readdir(join(root, p));
        } catch (e) {
          if (isMissing(e)) continue;
          throw e;
        }
        for (const h of names.filter((x) => x.length === 64 && x.startsWith(p) && /^[0-9a-f]{64}$/.test(x) && x > after).sort()) {
          out.push(h);
          if (out.length >= n) return out;
        }
      }
      return out;
    },
  };
}
