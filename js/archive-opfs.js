// The new generation of an OPFS store that importStore builds (design.md,
// "Archives"; docs/architecture.md, "Generations"):
//
//   OPFS root / "onestore" / "<name>.import-<12 hex>" / db.sqlite, blobs/…   the generation, a store of its own
//
// It is opened, filled and checked as a store of its own name (its own Web
// Lock and handles). The switch, under the store's Web Lock (taken over as
// openStore takes it): the generation's blob list is written to
// "blobs.json" in its folder, its db.sqlite is moved over the store's
// (OPFS replaces the file: the atomic step), then each blob file is moved
// into the store's blobs/ folder and the store's blobs that the archive
// does not hold are removed, and the generation's folder goes. OPFS cannot
// move a folder, hence blob by blob: a generation folder without db.sqlite
// but with blobs.json is a switch to finish, which the next open or import
// of the store does. A generation that never switched is deleted by the
// next import of the store.

import { ErrorCodes, StoreError } from "./errors.js";
import { OPFS_DIR, acquireOpfsFiles, checkOpfsAvailable, checkOpfsName, opfsFiles } from "./files-opfs.js";

const isMissing = (e) => e?.name === "NotFoundError" || e?.name === "TypeMismatchError";
const HASH = /^[0-9a-f]{64}$/;

function genPattern(name) {
  return (entry) => entry.startsWith(`${name}.import-`) && /^[0-9a-f]{12}$/.test(entry.slice(name.length + 8));
}

async function topDir() {
  return (await navigator.storage.getDirectory()).getDirectoryHandle(OPFS_DIR, { create: true });
}

async function child(dir, name, kind = "directory") {
  try {
    return kind === "directory" ? await dir.getDirectoryHandle(name) : await dir.getFileHandle(name);
  } catch (e) {
    if (isMissing(e)) return null;
    throw e;
  }
}

async function names(dir) {
  const out = [];
  for await (const [n, h] of dir.entries()) out.push([n, h]);
  return out;
}

// Moves the generation's blobs into store `name`, removes the store's blobs
// the generation's list does not hold and its snapshots, and removes the
// generation.
async function finishSwitch(top, name, genName) {
  const gen = await top.getDirectoryHandle(genName);
  const list = new Set(JSON.parse(await (await (await gen.getFileHandle("blobs.json")).getFile()).text()));
  const dir = await top.getDirectoryHandle(name, { create: true });
  const into = await (await dir.getDirectoryHandle("blobs", { create: true })).getDirectoryHandle("sha256", { create: true });
  const genBlobs = await child(gen, "blobs");
  const from = genBlobs ? await child(genBlobs, "sha256") : null;
  if (from) {
    for (const [xx, sub] of await names(from)) {
      if (sub.kind !== "directory") continue;
      const to = await into.getDirectoryHandle(xx, { create: true });
      for (const [h, fh] of await names(sub)) if (fh.kind === "file" && HASH.test(h)) await fh.move(to, h);
    }
  }
  for (const [xx, sub] of await names(into)) {
    if (sub.kind !== "directory") continue;
    for (const [h, fh] of await names(sub)) if (fh.kind === "file" && HASH.test(h) && !list.has(h)) await sub.removeEntry(h);
  }
  // The previous store's snapshots are of its content, not the archive's: a
  // restore or store.at would bring its rows back. (Again after a cut: the
  // generation's blobs.json is removed last.)
  if (await child(dir, "snapshots")) await dir.removeEntry("snapshots", { recursive: true });
  await top.removeEntry(genName, { recursive: true });
}

/**
 * Finishes every switch of store `name` that a crash cut after its
 * db.sqlite was moved (see above). Call it holding the store's Web Lock.
 *
 * @example await settleOpfsImports("session-42");
 */
export async function settleOpfsImports(name) {
  const top = await topDir();
  for (const [n, h] of await names(top)) {
    if (h.kind !== "directory" || !genPattern(name)(n)) continue;
    if (!(await child(h, "db.sqlite", "file")) && (await child(h, "blobs.json", "file"))) await finishSwitch(top, name, n);
  }
}

/**
 * The generations of OPFS stores, for importStoreWith (js/store.js):
 * `begin(openOptions)` is null for a memory store, else `{ options,
 * commit, discard }`. `lockName(name)` names a store's Web Lock;
 * `timeoutOf(options)` its lock timeout.
 *
 * @example const gen = await opfsGenerations({ lockName, timeoutOf }).begin({ backend: "opfs", name: "s" });
 */
export function opfsGenerations({ lockName, timeoutOf }) {
  return Object.freeze({
    async begin(openOptions) {
      if (openOptions.backend !== "opfs") return null;
      const { name } = openOptions;
      checkOpfsName(name, "importStore");
      checkOpfsAvailable(`importStore(opfs ${JSON.stringify(name)})`);
      const timeout = timeoutOf(openOptions, "importStore");
      const genName = `${name}.import-${globalThis.crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
      checkOpfsName(genName, "importStore (the new generation's folder, the name and \".import-\" and 12 digits)", true);
      // What earlier imports left: a switch to finish, or a generation that
      // never switched (deleted unless an import in another tab holds it).
      // Only where no one holds the store: an owner's open settled them
      // already, and taking its lock here (a steal) fenced it at once, before
      // a byte of the archive was read, even when the archive was then
      // refused. The owner is fenced at the switch, as documented.
      await navigator.locks.request(lockName(name), { ifAvailable: true }, async (lock) => {
        if (lock) await settleOpfsImports(name);
      });
      const top = await topDir();
      for (const [n, h] of await names(top)) {
        if (h.kind !== "directory" || !genPattern(name)(n)) continue;
        await navigator.locks.request(lockName(n), { ifAvailable: true }, async (lock) => {
          if (lock) await top.removeEntry(n, { recursive: true }).catch(() => {});
        });
      }
      let switched = false;  // the db file moved: the switch is finished, never undone
      return {
        options: { name: genName },
        async commit({ manifest, closeCore }) {
          closeCore();
          await navigator.locks.request(lockName(name), { steal: true }, async () => {
            // A journal or WAL with content belongs to the store being
            // replaced and would be played into the new file: refused.
            const release = await acquireOpfsFiles(name, timeout);
            let busy;
            try {
              busy = ["db.sqlite-journal", "db.sqlite-wal"].find((f) => opfsFiles.exists(`/${OPFS_DIR}/${name}/${f}`));
            } finally {
              release();
            }
            if (busy) {
              throw new StoreError(ErrorCodes.InvalidArgs, `importStore: the store ${JSON.stringify(name)} has a ${busy} with content (a transaction to recover); open and close it before importing over it`);
            }
            try {
              const gen = await top.getDirectoryHandle(genName);
              const listFile = await gen.getFileHandle("blobs.json", { create: true });
              const w = await listFile.createWritable();
              await w.write(JSON.stringify(manifest.blobs.map((b) => b.hash)));
              await w.close();
              const dir = await top.getDirectoryHandle(name, { create: true });
              await (await gen.getFileHandle("db.sqlite")).move(dir, "db.sqlite");
              switched = true;
              await finishSwitch(top, name, genName);
            } catch (e) {
              if (e instanceof StoreError) throw e;
              throw new StoreError(ErrorCodes.StorageFailed, `importStore: cannot switch ${genName} in as ${name}: ${e?.name}: ${e?.message}`, { cause: e });
            }
          });
        },
        async discard() {
          if (switched) return;  // the next open of the store finishes it
          await navigator.locks.request(lockName(genName), { steal: true }, () => top.removeEntry(genName, { recursive: true }).catch((e) => {
            if (!isMissing(e)) throw e;
          }));
        },
      };
    },
  });
}
