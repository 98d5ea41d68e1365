// The Node implementation of the files object that the wasm module's SQLite
// VFS calls synchronously (see wasm/files_library.js for the interface).
// Every method is synchronous and throws on failure; the wasm side catches
// and turns the error into an SQLite I/O error with this message.
//
// Parent directories are not created here: the JS open layer does that.
import fs from "node:fs";

/**
 * Creates a files object over node:fs.
 *
 * @example
 *   const mod = await createOnestoreCore({ wasmBinary, onestoreFiles: createNodeFiles() });
 * @returns {{open: Function, read: Function, write: Function, truncate: Function,
 *   sync: Function, size: Function, close: Function, delete: Function, exists: Function}}
 */
export function createNodeFiles() {
  const fds = new Map(); // id -> fd
  let nextId = 1;

  function fdOf(id) {
    const fd = fds.get(id);
    if (fd === undefined) throw new Error(`file id ${id} is not open`);
    return fd;
  }

  return {
    /** Opens path for reading and writing; with `create`, creates it if missing. */
    open(path, create) {
      let fd;
      try {
        fd = fs.openSync(path, "r+");
      } catch (e) {
        if (!(create && e && e.code === "ENOENT")) throw e;
        // "wx+": create only if still missing, so a file that appeared in
        // between is never truncated.
        try {
          fd = fs.openSync(path, "wx+");
        } catch (e2) {
          if (e2 && e2.code === "EEXIST") fd = fs.openSync(path, "r+");
          else throw e2;
        }
      }
      const id = nextId++;
      fds.set(id, fd);
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
      let done = 0;
      while (done < bytes.length) {
        done += fs.writeSync(fd, bytes, done, bytes.length - done, offset + done);
      }
    },

    truncate(id, size) {
      fs.ftruncateSync(fdOf(id), size);
    },

    sync(id) {
      fs.fsyncSync(fdOf(id));
    },

    size(id) {
      return fs.fstatSync(fdOf(id)).size;
    },

    close(id) {
      const fd = fdOf(id);
      fds.delete(id);
      fs.closeSync(fd);
    },

    /** Deletes path; a missing file throws ENOENT (the VFS treats that as gone). */
    delete(path) {
      fs.unlinkSync(path);
    },

    exists(path) {
      return fs.existsSync(path);
    },
  };
}

/** The files object the Node loader hands to the wasm module. */
export const nodeFiles = createNodeFiles();
export default nodeFiles;
