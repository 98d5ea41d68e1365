// The snapshots of an OPFS store, in its OPFS folder (docs/formats.md,
// "Snapshot layout"):
//
//   onestore/<name>/snapshots/<id>.sqlite          the copy of the database, made by
//                                                  SQLite's backup API through the VFS
//   onestore/<name>/snapshots/<id>.sqlite-journal  its rollback journal and WAL
//   onestore/<name>/snapshots/<id>.sqlite-wal      (empty between uses)
//   onestore/<name>/snapshots/<id>.json            { id, seq, at, label, n }, written once the copy is whole
//
// The core copies and restores synchronously, inside a step of the commit
// queue, while OPFS sync access handles can only be made asynchronously: so
// `prepare({ make, read })` acquires the handles of the snapshots a step
// writes (`make`) and reads (`read`) before the step, registers them with
// the VFS (js/files-opfs.js), and resolves to the `release()` called after
// it. A copy without its .json (a crash between the two) is not listed, and
// the next open of the store deletes it.

import { holdOpfsFiles, OPFS_DIR, opfsStoreDir } from "./files-opfs.js";

const FILES = (id) => [`${id}.sqlite`, `${id}.sqlite-journal`, `${id}.sqlite-wal`];

/**
 * The snapshot shelf of OPFS store `name` (js/snapshots.js).
 *
 * @example
 * const shelf = opfsSnapshots("session-42"); const known = await shelf.list();
 */
export function opfsSnapshots(name) {
  const base = `/${OPFS_DIR}/${name}/snapshots`;
  const held = new Map();  // id -> Promise resolved when its handles are released
  let dirPromise = null;

  function folder() {
    dirPromise ??= (async () => {
      const store = await opfsStoreDir(name);
      return store.getDirectoryHandle("snapshots", { create: true });
    })().catch((e) => {
      dirPromise = null;
      throw e;
    });
    return dirPromise;
  }

  async function writeJson(dir, file, text) {
    const w = await (await dir.getFileHandle(file, { create: true })).createWritable();
    try {
      await w.write(text);
    } catch (e) {
      await w.abort().catch(() => {});
      throw e;
    }
    await w.close();  // the file's content changes here, at once
  }

  return {
    // A restore of a copy made by the backup API of a store in exclusive WAL
    // mode opens it the same way (wasm/bindings.cc, snapshotRestore).
    fileOf: (id) => `${base}/${id}.sqlite`,
    // snapshotEvery's copy needs handles too: js/snapshots.js holds the
    // commit queue after the K-th commit's step, prepares them, copies, and
    // lets the queue go.
    prepareEvery: true,
    async prepare({ make = [], read = [] } = {}) {
      const dir = await folder();
      const releases = [];
      const freed = [];
      const release = () => {
        for (const r of releases.splice(0)) r();
        for (const f of freed.splice(0)) f();
      };
      try {
        for (const id of [...make, ...read]) {
          // Two steps of this store never hold one snapshot's handles at once.
          while (held.has(id)) await held.get(id);
          let free;
          held.set(id, new Promise((r) => { free = () => { held.delete(id); r(); }; }));
          freed.push(free);
          const need = read.includes(id) ? [`${id}.sqlite`] : [];
          releases.push(await holdOpfsFiles(dir, base, FILES(id), need));
        }
      } catch (e) {
        release();
        throw e;
      }
      return release;
    },
    async list() {
      const dir = await folder();
      const metas = [];
      const files = [];
      for await (const [file, handle] of dir.entries()) {
        if (handle.kind !== "file") continue;
        if (!file.endsWith(".json")) { files.push(file); continue; }
        try {
          const meta = JSON.parse(await (await handle.getFile()).text());
          if (typeof meta?.id === "string" && `${meta.id}.json` === file && Number.isSafeInteger(meta.n)) metas.push(meta);
        } catch {
          // A .json a crash left empty (made before its write): not a snapshot.
          await dir.removeEntry(file).catch(() => {});
        }
      }
      const ids = new Set(metas.map((m) => m.id));
      for (const file of files) {
        const m = /^(.*)\.sqlite(-journal|-wal)?$/.exec(file);
        if (m && !ids.has(m[1])) await dir.removeEntry(file).catch(() => {});
      }
      return metas;
    },
    async save(meta) {
      await writeJson(await folder(), `${meta.id}.json`, JSON.stringify(meta));
    },
    async remove(id) {
      while (held.has(id)) await held.get(id);  // a restore from it is still reading it
      const dir = await folder();
      for (const file of [`${id}.json`, ...FILES(id)]) {
        try {
          await dir.removeEntry(file);
        } catch (e) {
          if (e?.name !== "NotFoundError") throw e;
        }
      }
    },
  };
}
