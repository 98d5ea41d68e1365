// The files of an OPFS store, for the real sqlite3 command's integrity_check
// in Node (tests/browser/harness.js, integrity): read with nothing of the
// store's code between, holding its Web Lock (stolen, so that no store opens
// meanwhile) with the store closed. Not a test.
import { opfsLockName } from "../../../js/loader-browser.js";
import { OPFS_FILES, opfsStoreDir } from "../../../js/files-opfs.js";

function base64(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/**
 * The store `name`'s database files that exist (db.sqlite and its journal or
 * WAL), each as base64: { "db.sqlite": "...", ... }. Close the store first.
 *
 * @example
 * const files = await storeFiles("session-42");
 */
export async function storeFiles(name) {
  return navigator.locks.request(opfsLockName(name), { steal: true }, async () => {
    const dir = await opfsStoreDir(name);
    const out = {};
    for (const file of OPFS_FILES) {
      let handle;
      try {
        handle = await dir.getFileHandle(file);
      } catch (e) {
        if (e?.name === "NotFoundError") continue;
        throw e;
      }
      out[file] = base64(new Uint8Array(await (await handle.getFile()).arrayBuffer()));
    }
    return out;
  });
}
