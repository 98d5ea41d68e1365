// store.lock across Node processes that share a sqlite store: a lock file per
// name in `<file>.locks/` (docs/formats.md, "Lock files"), made with O_EXCL
// holding `<pid> <token>`, made whole (written aside, then hard-linked to
// its name, which fails when the name exists). A waiter polls it; a file
// whose process is gone (a crash) is taken over.

import { link, mkdir, readFile, rm, rename, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createHash, randomUUID } from "node:crypto";

import { wellFormed } from "./encode.js";
import { wroteBefore } from "./files-node.js";
import { lockTimeout } from "./locks.js";

/** The folder of a sqlite store file's lock files. */
export function locksDir(file) {
  return `${file}.locks`;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e?.code === "EPERM";
  }
}

/**
 * The lock files of the store at absolute path `file`.
 *
 * @example
 * const release = await nodeFileLocks("/app/s.sqlite").acquire("import", 5000);
 */
export function nodeFileLocks(file) {
  const dir = locksDir(file);
  const pathOf = (name) => {
    // Well formed: encodeURIComponent throws on a lone surrogate (the name
    // then shares its lock with the one that has U+FFFD there).
    let base = encodeURIComponent(wellFormed(name)).replaceAll(".", "%2E");
    // A name whose encoding would pass a file name's 255 bytes (with the
    // holder's ".lock.new-<uuid>"): its sha256, after "%%", which no
    // encoded name holds.
    if (base.length > 200) base = `%%${createHash("sha256").update(name).digest("hex")}`;
    return join(dir, `${base}.lock`);
  };
  return {
    async acquire(name, timeout) {
      const path = pathOf(name);
      const token = `${process.pid} ${randomUUID()}`;
      const deadline = Date.now() + timeout;
      const mine = `${path}.new-${randomUUID()}`;
      // The folder may be removed between the two (an import removes it
      // once empty, js/loader-node.js): then it is made again.
      for (;;) {
        await mkdir(dir, { recursive: true });
        try {
          await writeFile(mine, token);
          break;
        } catch (e) {
          if (e?.code !== "ENOENT") throw e;
        }
      }
      for (let wait = 2; ; wait = Math.min(wait * 2, 50)) {
        try {
          await link(mine, path);
          await rm(mine, { force: true });
          return async () => {
            // Only our own file: a holder taken over as dead is not ours to remove.
            const now = await readFile(path, "utf8").catch(() => "");
            if (now === token) await rm(path, { force: true });
          };
        } catch (e) {
          if (e?.code !== "EEXIST") {
            await rm(mine, { force: true });
            throw e;
          }
        }
        const holder = await readFile(path, "utf8").catch(() => null);
        const pid = holder === null ? NaN : Number(holder.split(" ")[0]);
        // This process's pid in a file written before it started: an
        // earlier process's (js/files-node.js, wroteBefore).
        const earlier = pid === process.pid && wroteBefore(await stat(path).then((s) => s.mtimeMs, () => Infinity));
        if (holder !== null && (!alive(pid) || earlier)) {
          // Its process is gone: moved aside (one waiter wins the rename).
          // Were it already a new holder's file, it is put back.
          const aside = `${path}.dead-${randomUUID()}`;
          try {
            await rename(path, aside);
            const moved = await readFile(aside, "utf8");
            if (moved !== holder) await link(aside, path).catch(() => {});
            await rm(aside, { force: true });
          } catch { /* another waiter took it first */ }
          continue;
        }
        if (Date.now() >= deadline) {
          await rm(mine, { force: true });
          throw lockTimeout(name, timeout, holder ? `process ${pid}` : "another process");
        }
        await sleep(Math.min(wait, Math.max(1, deadline - Date.now())));
      }
    },
  };
}
