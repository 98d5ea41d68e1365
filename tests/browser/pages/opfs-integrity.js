// PRAGMA integrity_check on an OPFS store's file for the test workers
// (opfs-worker.js, kill-worker.js), with nothing of the store's code
// between: its Web Lock (stolen), its file handles, SQLite (the bench-only
// build's RawSqlite, bench-core.js). Not a test.
import { opfsLockName } from "../../../js/loader-browser.js";
import { acquireOpfsFiles, opfsDbPath } from "../../../js/files-opfs.js";
import { loadBenchCore } from "./bench-core.js";

/**
 * The rows of PRAGMA integrity_check on the file of the OPFS store `name`
 * (close the store first): [{ integrity_check: "ok" }] when it is whole.
 *
 * @example
 * const rows = await integrityCheck("session-42");
 */
export async function integrityCheck(name) {
  const mod = await loadBenchCore();  // RawSqlite is only in the bench build
  return navigator.locks.request(opfsLockName(name), { steal: true }, async () => {
    const release = await acquireOpfsFiles(name, 5000);
    const raw = new mod.RawSqlite();
    try {
      const opened = raw.open(opfsDbPath(name));
      if (opened) throw new Error(opened);
      raw.exec("PRAGMA locking_mode=EXCLUSIVE");
      return JSON.parse(raw.all("PRAGMA integrity_check", "[]"));
    } finally {
      raw.close();
      raw.delete();
      release();
    }
  });
}
