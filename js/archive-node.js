// Node helpers of archives: store.export() written to a file.

import { randomUUID } from "node:crypto";
import { open, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import { ErrorCodes, StoreError, invalidArgs } from "./errors.js";
import { describe } from "./schema.js";
import { fileMagic, SQLITE_MAGIC } from "./loader-node.js";

/**
 * Writes the store's archive to `path` ("<path>.<random>.part" first,
 * renamed when complete); resolves to the number of bytes. Each call has a
 * file of its own until its rename: two exports to one path at once each
 * leave a whole archive, and the last rename wins (with one "<path>.part"
 * for both, the second wrote on into the file the first had renamed and
 * reported written).
 *
 * @example
 * const bytes = await exportFileNode(store, "session.tar");
 */
export async function exportFileNode(store, path, options) {
  if (store === null || typeof store !== "object" || typeof store.export !== "function") {
    throw invalidArgs(`exportToFile: the first argument must be an open store (or a replica), got ${describe(store)}`);
  }
  if (typeof path !== "string" || path === "" || path.includes("\0")) {
    throw invalidArgs(`exportToFile: path must name a file, got ${describe(path)}`);
  }
  await refuseDatabase(path);
  const part = `${path}.${randomUUID().slice(0, 8)}.part`;
  let file;
  let bytes = 0;
  try {
    // The file first: the export holds the commit queue from its first read
    // until its stream ends or is cancelled, so it starts only once there is
    // somewhere to write it (a loop that throws cancels it).
    file = await open(part, "wx");
    const stream = store.export(options);
    for await (const chunk of stream) {
      await file.write(chunk);
      bytes += chunk.byteLength;
    }
    await file.sync();
    await file.close();
    file = null;
    await refuseDatabase(path);
    await rename(part, path);
    const dir = await open(dirname(path), "r");
    try { await dir.sync(); } finally { await dir.close(); }
  } catch (e) {
    await file?.close().catch(() => {});
    await rm(part, { force: true }).catch(() => {});
    if (e instanceof StoreError) throw e;
    throw new StoreError(ErrorCodes.StorageFailed, `exportToFile: cannot write ${path}: ${e.message}`, { cause: e });
  }
  return bytes;
}

// An archive replaces an earlier archive at its path, never a SQLite
// database: `exportToFile(store, <its own file>)` renamed the tar over the
// open store, whose next commits were lost.
async function refuseDatabase(path) {
  if ((await fileMagic(path)) === SQLITE_MAGIC) {
    throw invalidArgs(`exportToFile: ${path} is a SQLite database (a store's file?), which an archive would replace; give the archive a path of its own (session.tar)`);
  }
}
