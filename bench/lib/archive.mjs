// Workloads 11 and 12: export and import of a store of `p.archiveRows` rows
// (the bench's edits table) and `p.archiveBlobs` blobs of
// `p.archiveBlobBytes` bytes each (100k rows and 100 MB of blobs in the full
// plan), on the onestore columns. The export is written to a file
// (exportToFile: written, fsynced, renamed); the import reads that file into
// a new store of the same backend (a sqlite file: a new generation, each blob
// fsynced, then switched). Rate: the archive's bytes per second.

import { randomFillSync } from "node:crypto";
import { createReadStream, statSync } from "node:fs";
import { join } from "node:path";

import * as api from "../../js/index.js";
import { Edits, OWNER, ROW, figure, median, now } from "./common.mjs";

/**
 * { export, import } figures of one onestore column's backend.
 * @example const f = await archiveFigures({ backend: "sqlite", durability: "full", dir, p, log });
 */
export async function archiveFigures({ id, backend, durability, dir, p, log }) {
  const file = (name) => (backend === "sqlite" ? { path: join(dir, `${id}-${name}.sqlite`) } : {});
  const store = await api.openStore({ backend, durability, ...file("archive-source") });
  const edits = store.object({ type: OWNER }).table(Edits);
  for (let from = 0; from < p.archiveRows; from += 10000) {
    await store.object({ type: OWNER }).tx(async (tx) => {
      for (let i = from; i < Math.min(from + 10000, p.archiveRows); i++) await tx.put(edits, ROW(i));
    });
  }
  const bytes = new Uint8Array(p.archiveBlobBytes);
  for (let b = 0; b < p.archiveBlobs; b++) await store.blobs.put(randomFillSync(bytes));
  const tar = join(dir, `${id}-archive.tar`);
  const exports = [];
  const imports = [];
  let size = 0;
  for (let run = 0; run < p.archiveRuns; run++) {
    let t0 = now();
    size = await api.exportToFile(store, tar);
    exports.push(now() - t0);
    t0 = now();
    const copy = await api.importStore(createReadStream(tar, { highWaterMark: 1 << 20 }), { backend, durability, ...file(`archive-copy-${run}`) });
    imports.push(now() - t0);
    if (copy.head !== store.head) throw new Error(`bench: the imported store is at ${copy.head}, not ${store.head}`);
    await copy.close();
  }
  await store.close();
  if (statSync(tar).size !== size) throw new Error("bench: the archive's size is not what exportToFile wrote");
  const extra = { rows: p.archiveRows, blobs: p.archiveBlobs, blobBytes: p.archiveBlobs * p.archiveBlobBytes, archiveBytes: size };
  const fig = (runs) => {
    const value = median(runs);
    return figure(value, "ms", { runs, per: "archive", mbPerSecond: size / 1e6 / (value / 1000), ...extra });
  };
  log(`${id}: archive of ${size} bytes: export ${median(exports).toFixed(0)} ms, import ${median(imports).toFixed(0)} ms`);
  return { export: fig(exports), import: fig(imports) };
}
