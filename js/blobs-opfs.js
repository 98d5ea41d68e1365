// The blobs of an OPFS store, in its own folder (docs/formats.md, "Blob
// layout"):
//
//   OPFS root / "onestore" / <name> / "blobs" / "sha256" / "9f" / "9f3a…"
//
// They use OPFS's asynchronous calls (a blob put is async anyway); the
// store's commit path stays synchronous and never waits for them. A blob is
// written through a sync access handle to a temporary file in its folder
// (".tmp-…", never listed), flushed, closed and then moved to its hash, so a
// crash leaves either no blob or the whole blob. deleteStore removes the
// store's folder, blobs included.

import { OPFS_DIR } from "./files-opfs.js";

const isMissing = (e) => e?.name === "NotFoundError" || e?.name === "TypeMismatchError";

/**
 * The blob backend of OPFS store `name`.
 * @example const b = opfsBlobs("session-42"); await b.write(hash, bytes);
 */
export function opfsBlobs(name) {
  async function rootDir(create) {
    let d = await navigator.storage.getDirectory();
    for (const part of [OPFS_DIR, name, "blobs", "sha256"]) d = await d.getDirectoryHandle(part, { create });
    return d;
  }
  async function dirOf(hash, create) {
    return (await rootDir(create)).getDirectoryHandle(hash.slice(0, 2), { create });
  }
  async function fileOf(hash) {
    try {
      return await (await dirOf(hash, false)).getFileHandle(hash);
    } catch (e) {
      if (isMissing(e)) return undefined;
      throw e;
    }
  }
  return {
    async has(hash) {
      return (await fileOf(hash)) !== undefined;
    },
    async size(hash) {
      const fh = await fileOf(hash);
      return fh ? (await fh.getFile()).size : undefined;
    },
    async get(hash) {
      const fh = await fileOf(hash);
      if (!fh) return undefined;
      return new Uint8Array(await (await fh.getFile()).arrayBuffer());
    },
    async write(hash, bytes) {
      const dir = await dirOf(hash, true);
      const tmpName = `.tmp-${hash}-${crypto.randomUUID()}`;
      const tmp = await dir.getFileHandle(tmpName, { create: true });
      try {
        const h = await tmp.createSyncAccessHandle();
        try {
          const n = h.write(bytes, { at: 0 });
          if (n !== bytes.byteLength) throw new Error(`short write of blob ${hash}: ${n} of ${bytes.byteLength} bytes`);
          h.flush();
        } finally {
          h.close();
        }
        await tmp.move(hash);
      } catch (e) {
        await dir.removeEntry(tmpName).catch(() => {});
        // Two puts of the same new blob raced and the other one's move won:
        // the blob (the same bytes) is there. (Chromium's move replaces an
        // existing file; a browser whose move refuses to would land here.)
        if (await this.has(hash)) return;
        throw e;
      }
    },
    async list(after, n) {
      let root;
      try {
        root = await rootDir(false);
      } catch (e) {
        if (isMissing(e)) return [];
        throw e;
      }
      const prefixes = [];
      for await (const [p, h] of root.entries()) if (h.kind === "directory" && /^[0-9a-f]{2}$/.test(p)) prefixes.push(p);
      prefixes.sort();
      const out = [];
      for (const p of prefixes) {
        if (p < after.slice(0, 2)) continue;
        const names = [];
        for await (const [x, h] of (await root.getDirectoryHandle(p)).entries()) {
          if (h.kind === "file" && x.startsWith(p) && /^[0-9a-f]{64}$/.test(x) && x > after) names.push(x);
        }
        for (const x of names.sort()) {
          out.push(x);
          if (out.length >= n) return out;
        }
      }
      return out;
    },
  };
}
