// The Node implementation of the files object that the wasm module's SQLite
// VFS calls synchronously (see wasm/files_library.js for the interface).
// Every method is synchronous and throws on failure; the wasm side catches
// and turns the error into an SQLite I/O error with this message.
//
// Parent directories are not created here: the JS open layer does that.
import fs from "node:fs";
import { hostname } from "node:os";
import { dirname } from "node:path";

/**
 * Creates a files object over node:fs.
 *
 * @example
 *   const mod = await createOnestoreCore({ wasmBinary, onestoreFiles: createNodeFiles() });
 * @returns {{open: Function, read: Function, write: Function, truncate: Function,
 *   sync: Function, size: Function, close: Function, delete: Function, exists: Function,
 *   lock: Function, unlock: Function, keepLock: Function, removed: Function, wanted: Function, lockHeld: Function}}
 */
export function createNodeFiles() {
  const fds = new Map(); // id -> fd
  // ids of files this object created whose directory entry is not synced
  // yet: id -> the directory (see sync).
  const newFiles = new Map();
  let nextId = 1;
  const announced = new Set(); // database paths whose lock this process announced it waits for
  const roles = new Map(); // database path -> the role its opener holds it in ("store" or "replica")
  // database path -> the lock file this process wrote ({ ino, mtimeMs }):
  // a lock file of that path that is not this one is another's.
  const mine = new Map();
  const paths = new Map(); // id -> the path it was opened by
  const readOnlyIds = new Set(); // ids of files this process may only read

  // A write to a file opened for reading only: the file system's refusal,
  // named as it would have named the open.
  function writeRefused(id, what) {
    const err = new Error(`EACCES: ${paths.get(id)} can only be read by this process (permission denied), ${what}`);
    err.code = "EACCES";
    return err;
  }
  // Database paths this process gave up (keepLock found another writer):
  // their files take no more writes from this process, so that closing the
  // fenced store (a checkpoint, the switch out of WAL) cannot write into a
  // file that another process now owns.
  const abandoned = new Set();

  // Whether `path` is a file (the database or a side file) of an
  // abandoned database.
  function isAbandoned(path) {
    for (const db of abandoned) if (path === db || path.startsWith(`${db}-`)) return true;
    return false;
  }

  // Throws where `id`'s database was abandoned (`what`: the call refused).
  function refuseAbandoned(id, what) {
    const path = paths.get(id);
    if (!isAbandoned(path)) return;
    const err = new Error(`${what} ${path}: the store was fenced (another process took the file): nothing more is written`);
    err.code = "EIO";
    throw err;
  }

  // Whether the WAL this process has open for database `path` is the file
  // at `<path>-wal` (another writer's close removes or replaces it).
  function sameWal(path) {
    const wal = `${path}-wal`;
    for (const [id, p] of paths) {
      if (p !== wal) continue;
      try {
        return fs.statSync(wal).ino === fs.fstatSync(fdOf(id)).ino;
      } catch (e) {
        if (e?.code === "ENOENT") return false;
        throw e;
      }
    }
    return true;  // none open
  }

  // The lock file of `path` as stat gives it, or null when there is none.
  function lockStat(path) {
    try {
      return fs.statSync(`${path}-lock`);
    } catch (e) {
      if (e?.code === "ENOENT") return null;
      throw e;
    }
  }

  // Writes the lock file of `path` if there is none; whether it did.
  function writeLock(path) {
    const role = roles.get(path);
    try {
      fs.writeFileSync(`${path}-lock`, role ? `${me()} ${role}` : me(), { flag: "wx" });
    } catch (e) {
      if (e?.code !== "EEXIST") throw e;
      return false;
    }
    const st = lockStat(path);
    if (st) mine.set(path, { ino: st.ino, mtimeMs: st.mtimeMs });
    abandoned.delete(path);  // a new store of this process holds it now
    return true;
  }

  // Removes this process's announcement (it got the lock).
  function withdraw(want, path) {
    announced.delete(path);
    try {
      if (fs.readFileSync(want, "utf8") === me()) fs.unlinkSync(want);
    } catch (e) {
      if (e?.code !== "ENOENT") throw e;
    }
  }

  function fdOf(id) {
    const fd = fds.get(id);
    if (fd === undefined) throw new Error(`file id ${id} is not open`);
    return fd;
  }

  return {
    /** Opens path for reading and writing; with `create`, creates it if missing. */
    open(path, create) {
      let fd;
      let created = false;
      // A file opened with create is often missing (the WAL each open
      // starts): asked first, so that no ENOENT is thrown and caught (an
      // error Node builds, with its stack, costs about 4 access() calls in
      // a plain loop and far more under wasm frames: docs/performance.md,
      // "Issue 13, an open without a thrown ENOENT"). "wx+" creates only if
      // still missing, so a file that appeared in between is never truncated.
      if (create && !fs.existsSync(path)) {
        try {
          fd = fs.openSync(path, "wx+");
          created = true;
        } catch (e) {
          if (e?.code !== "EEXIST") throw e;
        }
      }
      let readOnly = false;
      if (fd === undefined) {
        try {
          fd = fs.openSync(path, "r+");
        } catch (e) {
          if (!create && (e?.code === "EACCES" || e?.code === "EPERM" || e?.code === "EROFS")) {
            // Readable only: a read-only connection (listStores) reads it;
            // a write says why it cannot (writeRefused).
            fd = fs.openSync(path, "r");
            readOnly = true;
          } else {
            if (!(create && e?.code === "ENOENT")) throw e;
            fd = fs.openSync(path, "wx+");  // removed in between: made again
            created = true;
          }
        }
      }
      const id = nextId++;
      fds.set(id, fd);
      paths.set(id, path);
      if (readOnly) readOnlyIds.add(id);
      if (created) newFiles.set(id, dirname(path));
      return id;
    },

    /** Reads into `bytes` at `offset`; returns the bytes read (fewer only at the end). */
    read(id, bytes, offset) {
      const fd = fdOf(id);
      let done = 0;
      while (done < bytes.length) {
        const n = fs.readSync(fd, bytes, done, bytes.length - done, offset + done);
        if (n === 0) break;
        done += n;
      }
      return done;
    },

    /** Writes all of `bytes` at `offset`. */
    write(id, bytes, offset) {
      const fd = fdOf(id);
      if (abandoned.size > 0) refuseAbandoned(id, "write");
      if (readOnlyIds.has(id)) throw writeRefused(id, "write");
      let done = 0;
      while (done < bytes.length) {
        done += fs.writeSync(fd, bytes, done, bytes.length - done, offset + done);
      }
    },

    truncate(id, size) {
      if (abandoned.size > 0) refuseAbandoned(id, "truncate");
      if (readOnlyIds.has(id)) throw writeRefused(id, "truncate");
      fs.ftruncateSync(fdOf(id), size);
    },

    // fdatasync: the file's data and what reading it back needs (its size),
    // not its times, as SQLite's own VFS syncs on Linux (where Node's
    // fdatasync is the system call; elsewhere libuv falls back to fsync).
    // A WAL reused after a checkpoint keeps its size, so a commit's sync
    // writes no inode and no file-system journal entry.
    //
    // The first sync of a file this object created also syncs its
    // directory, as SQLite's own VFS does: until then the file's name may
    // not survive a power cut, and with it every commit in it (a store
    // makes a new WAL each time it opens).
    sync(id) {
      fs.fdatasyncSync(fdOf(id));
      const dir = newFiles.get(id);
      if (dir !== undefined) {
        const dirFd = fs.openSync(dir, "r");
        try {
          fs.fsyncSync(dirFd);
        } finally {
          fs.closeSync(dirFd);
        }
        newFiles.delete(id);
      }
    },

    size(id) {
      return fs.fstatSync(fdOf(id)).size;
    },

    close(id) {
      const fd = fdOf(id);
      fds.delete(id);
      paths.delete(id);
      readOnlyIds.delete(id);
      newFiles.delete(id);
      fs.closeSync(fd);
    },

    /** Deletes path; a missing file throws ENOENT (the VFS treats that as gone). */
    delete(path) {
      if (abandoned.size > 0 && isAbandoned(path)) return;  // another process's now
      fs.unlinkSync(path);
    },

    exists(path) {
      return fs.existsSync(path);
    },

    /**
     * Takes the lock of the database at `path` between processes (the file
     * "<path>-lock" holding "<pid>@<host>"); false when another live holder
     * has it, or when another process waits for it and this one must let it
     * go first. SQLite takes it for each transaction, read or write. A lock
     * left by a process of this host that no longer runs is stale and taken
     * over. Same format as the native PosixFileSystem.
     *
     * Fairness: a process that finds the lock held announces itself in
     * "<path>-lock.want" (holding "<pid>@<host>", rewritten at each try, so
     * its age tells whether it still waits). Every other process, the holder
     * included, then leaves the lock to it: a holder that releases the lock
     * between transactions (one that commits in a loop, say) would otherwise
     * take it back before a waiter's next try, again and again, until the
     * waiter's lockTimeout ran out. The first waiter to announce itself goes
     * first; the announcement is removed when it gets the lock, and ignored
     * once its process ended or it has not tried for WANT_FRESH_MS.
     */
    lock(path) {
      const lock = `${path}-lock`;
      const want = `${path}-lock.want`;
      if (waiterAhead(want)) return false;
      for (let attempt = 0; attempt < 3; attempt++) {
        if (writeLock(path)) {
          if (announced.has(path)) withdraw(want, path);
          return true;
        }
        const state = holderState(lock);
        if (state === "live") break;
        // "gone": released since; try again. Never unlink then: the file
        // may already be a new holder's.
        if (state === "stale") breakStale(lock);
      }
      fs.writeFileSync(want, me());
      announced.add(path);
      return false;
    },

    unlock(path) {
      // Only this process's own lock file: one written by another process
      // after this one's was removed by hand is that process's.
      const own = mine.get(path);
      mine.delete(path);
      const st = lockStat(path);
      if (st === null || !own || st.ino !== own.ino || st.mtimeMs !== own.mtimeMs) return;
      try {
        fs.unlinkSync(`${path}-lock`);
      } catch (e) {
        if (e?.code !== "ENOENT") throw e;
      }
    },

    /**
     * For a store that holds the lock of `path` for its life
     * (js/loader-node.js, asked with each look for a waiter): whether its
     * lock file is still the one it wrote. A lock file removed by hand, or
     * by a cleaner of old files in /tmp, is written again at once
     * ("kept"); one that another process wrote meanwhile (it found none,
     * and opened the file) is "taken": this store must stop. "held" when
     * nothing changed, or this process holds no lock of `path`.
     */
    /**
     * Whether the file `file` (a database, its WAL) that this process has
     * open was removed since (no name left on the disk): what is written
     * to it from then on is lost at close.
     */
    removed(file) {
      for (const [id, p] of paths) {
        if (p === file && fs.fstatSync(fdOf(id)).nlink === 0) return true;
      }
      return false;
    },

    keepLock(path) {
      const own = mine.get(path);
      if (own === undefined) return "held";
      const st = lockStat(path);
      if (st !== null && st.ino === own.ino && st.mtimeMs === own.mtimeMs) return "held";
      // Gone: written again, unless another process came and went
      // meanwhile (its close removed the WAL this one writes).
      if (st === null && sameWal(path) && writeLock(path)) return "kept";
      mine.delete(path);
      abandoned.add(path);
      return "taken";
    },

    /**
     * Whether another process announced that it waits for the lock of
     * `path` (a fresh "<path>-lock.want" of a running process other than
     * this one). A store that keeps its lock for life (js/loader-node.js)
     * asks this, and hands the store over when it is true.
     */
    wanted(path) {
      return waiterAhead(`${path}-lock.want`);
    },

    /** Whether a live holder has the lock of `path`. */
    lockHeld(path) {
      return holderState(`${path}-lock`) === "live";
    },

    /**
     * Sets the role ("store" or "replica") that this process's locks of
     * `path` name after the holder: "<pid>@<host> store". The Node loader
     * sets it before each open, so that another opener can tell the role of
     * a held file from its lock (js/loader-node.js).
     */
    holdAs(path, role) {
      roles.set(path, role);
    },

    /** The role that the live holder of `path`'s lock named, or null. */
    lockRole(path) {
      let text;
      try {
        text = fs.readFileSync(`${path}-lock`, "utf8");
      } catch {
        return null;
      }
      const space = text.indexOf(" ");
      return space > 0 && holderState(`${path}-lock`) === "live" ? text.slice(space + 1) : null;
    },
  };
}

// How long an announcement of a waiter ("<db>-lock.want") counts after its
// last try. A waiter tries again every 2 ms (RetryLock in
// src/backends/sqlite/embedded_connection.cc), so this leaves room for a
// loaded machine; one that gave up is ignored after this, and one whose
// process ended at once. (One stat of the missing file per transaction,
// about 1 µs, is what the hand-over costs when nobody waits.)
const WANT_FRESH_MS = 1000;

let holderText = null;
// "<pid>@<host>" of this process.
// Whether a file that names this process ("<pid>@<host>") was written
// before this process started: by an earlier process with the same pid on
// this host, which no longer runs (a container's process 1, restarted after
// a kill -9, finds its predecessor's "1@<host>"). performance.timeOrigin is
// the process's start in every thread of it.
export function wroteBefore(mtimeMs) {
  return mtimeMs < performance.timeOrigin;
}

function me() {
  holderText ??= `${process.pid}@${hostname()}`;
  return holderText;
}

// Whether another process announced that it waits for the lock (and still
// does): this one then lets it go first.
function waiterAhead(want) {
  const st = fs.statSync(want, { throwIfNoEntry: false });
  if (st === undefined || Date.now() - st.mtimeMs > WANT_FRESH_MS) return false;
  let text;
  try {
    text = fs.readFileSync(want, "utf8");
  } catch (e) {
    if (e?.code === "ENOENT") return false;
    throw e;
  }
  if (text === me()) return false;
  return processState(text) !== "ended";
}

// The lock file's holder ("<pid>@<host>", then " store" or " replica" when
// the holder named its role): "gone" (no lock file), "live", or "stale" (a
// process of this host that no longer runs, this process's pid in a file it
// did not write, or a file without a holder that is over 2 s old: cut short
// by a crash). A holder on another host is live.
function holderState(lock) {
  let text;
  let mtimeMs;
  try {
    text = fs.readFileSync(lock, "utf8");
    mtimeMs = fs.statSync(lock).mtimeMs;
  } catch (e) {
    if (e?.code === "ENOENT") return "gone";
    throw e;
  }
  if (text.indexOf("@") < 0) return Date.now() - mtimeMs < 2000 ? "live" : "stale";
  text = text.split(" ")[0];  // "<pid>@<host>", without the role after it
  if (text === me()) return wroteBefore(mtimeMs) ? "stale" : "live";
  return processState(text) === "ended" ? "stale" : "live";
}

// Whether the process named by "<pid>@<host>" has "ended" (a process of this
// host that no longer runs) or may be "running" (a live pid, another host, or
// text being written right now).
function processState(text) {
  const at = text.indexOf("@");
  if (at < 0 || text.slice(at + 1) !== hostname()) return "running";
  const pid = Number.parseInt(text.slice(0, at), 10);
  if (!(pid > 0)) return "running";
  try {
    process.kill(pid, 0);
    return "running";
  } catch (e) {
    return e?.code === "ESRCH" ? "ended" : "running";
  }
}

// Removes a stale lock file, holding "<lock>.break" while it looks again, so
// that of two waiters that judged the same lock stale only one removes it:
// the other finds the first one's new lock (live) or none. A breaker left by
// a crash is removed once it is over 2 s old.
function breakStale(lock) {
  const breaker = `${lock}.break`;
  try {
    fs.writeFileSync(breaker, me(), { flag: "wx" });
  } catch (e) {
    if (e?.code !== "EEXIST") throw e;
    try {
      if (Date.now() - fs.statSync(breaker).mtimeMs > 2000) fs.unlinkSync(breaker);
    } catch (e2) {
      if (e2?.code !== "ENOENT") throw e2;
    }
    return;
  }
  try {
    if (holderState(lock) === "stale") {
      try { fs.unlinkSync(lock); } catch (e) { if (e?.code !== "ENOENT") throw e; }
    }
  } finally {
    try { fs.unlinkSync(breaker); } catch (e) { if (e?.code !== "ENOENT") throw e; }
  }
}

/** The files object the Node loader hands to the wasm module. */
export const nodeFiles = createNodeFiles();
export default nodeFiles;
