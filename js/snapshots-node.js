// The snapshots of a Node sqlite store, in a folder beside its file
// (docs/formats.md, "Snapshot layout"):
//
//   <file>.snapshots/<id>.sqlite   the copy of the database: the file copied by
//                                  the kernel (a reflink where the file system
//                                  has them) while the core holds SQLite's
//                                  shared lock, so no commit lands meanwhile
//   <file>.snapshots/<id>.json     { id, seq, at, label, n }, written once the copy is whole
//
// A copy without its .json (a crash between the two) is not listed, and the
// next open of the store deletes it.

import { closeSync, constants, copyFileSync, existsSync, fsyncSync, openSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { mkdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";

import { ErrorCodes, StoreError } from "./errors.js";

/** The folder of a sqlite store file's snapshots. */
export function snapshotsDir(file) {
  return `${file}.snapshots`;
}

// Makes a folder's new and renamed entries durable.
function syncDir(dir) {
  const fd = openSync(dir, "r");
  try { fsyncSync(fd); } finally { closeSync(fd); }
}

const SIDES = ["", "-journal", "-wal", "-lock", "-lock.break", "-lock.want"];

/**
 * The snapshot shelf of the sqlite store at absolute path `file`
 * (js/snapshots.js). `list()` also deletes copies left without their .json.
 *
 * @example
 * const shelf = nodeSnapshots("/app/.data/s.sqlite"); const known = await shelf.list();
 */
export function nodeSnapshots(file) {
  const dir = snapshotsDir(file);
  const pathOf = (id, ext) => join(dir, `${id}.${ext}`);
  let made = false;
  return {
    fileOf(id) {
      if (!made) {
        // The core writes the copy synchronously, through the VFS, which
        // does not make folders: made once, before the first copy.
        throw new Error(`the folder ${dir} was not prepared`);
      }
      const copy = pathOf(id, "sqlite");
      // A copy deleted by hand: SQLite would make an empty database in its
      // place, and a restore from it would delete every row.
      if (!existsSync(copy)) {
        throw new StoreError(ErrorCodes.NotFound, `snapshot ${id}: its copy ${copy} is gone (deleted outside onestore), so it can be neither restored nor read; store.snapshots() still lists it until it is pruned`);
      }
      return copy;
    },
    // Copies the database file to the snapshot's, synchronously (inside a
    // step of the commit queue, while the core holds the file), and syncs it.
    copyFile(id) {
      const to = pathOf(id, "sqlite");
      copyFileSync(file, to, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
      const fd = openSync(to, "r+");
      try { fsyncSync(fd); } finally { closeSync(fd); }
    },
    async prepare() {
      await mkdir(dir, { recursive: true });
      made = true;
    },
    async list() {
      // A store that never took a snapshot has no folder: no error made
      // (and thrown, and caught) at every open of it.
      if (!existsSync(dir)) return [];
      let names;
      try {
        names = readdirSync(dir);
      } catch (e) {
        if (e?.code === "ENOENT") return [];
        throw e;
      }
      const out = [];
      const ids = new Set();
      for (const name of names.filter((n) => n.endsWith(".json"))) {
        try {
          const meta = JSON.parse(await readFile(join(dir, name), "utf8"));
          if (typeof meta?.id === "string" && `${meta.id}.json` === name && Number.isSafeInteger(meta.n)) {
            out.push(meta);
            ids.add(meta.id);
          }
        } catch { /* a .json cut by a crash: not a snapshot */ }
      }
      // What a crash left: a copy whose .json was never written, and a
      // .json whose write it cut (save's temporary file, never renamed).
      for (const name of names) {
        const m = /^(.*)\.sqlite(-journal|-wal|-lock|-lock\.break|-lock\.want)?$/.exec(name);
        if ((m && !ids.has(m[1])) || /^\.tmp-.*\.json$/.test(name)) await rm(join(dir, name), { force: true });
      }
      return out;
    },
    // The list is written synchronously, inside the step that took or
    // dropped the snapshot (js/snapshots.js, later): a snapshot is listed
    // as soon as it is taken, and keepSnapshots holds while commits run
    // back to back.
    sync: true,
    save(meta) {
      const tmp = pathOf(`.tmp-${meta.id}`, "json");
      const fd = openSync(tmp, "w");
      try {
        writeFileSync(fd, JSON.stringify(meta));
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, pathOf(meta.id, "json"));
      syncDir(dir);
    },
    remove(id) {
      rmSync(pathOf(id, "json"), { force: true });
      for (const side of SIDES) rmSync(pathOf(id, "sqlite") + side, { force: true });
    },
  };
}
