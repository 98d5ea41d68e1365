// The bench-only wasm build (build/wasm/bench/onestore-bench.mjs + .wasm, the
// shipped core's objects plus RawSqlite) in a browser Worker, for the pages'
// integrity checks: PRAGMA integrity_check on a store's OPFS file with
// nothing of the store's code between. RawSqlite is not in the shipped
// dist/onestore-core.wasm (issue 13). The instance gets the package's OPFS
// files object, so the handles acquireOpfsFiles() holds are the ones its
// SQLite reads; a Core's open registers its VFS (RawSqlite's does not).
import { opfsFiles } from "../../../js/files-opfs.js";

let modulePromise = null;

export function loadBenchCore() {
  modulePromise ??= (async () => {
    const dir = new URL("../../../build/wasm/bench/", import.meta.url);
    const { default: factory } = await import(new URL("onestore-bench.mjs", dir).href);
    const response = await fetch(new URL("onestore-bench.wasm", dir));
    if (!response.ok) throw new Error(`the bench build is missing from ${dir} (HTTP ${response.status}): run npm run build`);
    const mod = await factory({ wasmBinary: new Uint8Array(await response.arrayBuffer()), onestoreFiles: opfsFiles });
    const core = new mod.Core();
    core.open(JSON.stringify({ backend: "memory" }));
    core.close();
    core.delete();
    return mod;
  })();
  return modulePromise;
}
