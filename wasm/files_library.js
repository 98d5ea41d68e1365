// The JS side of wasm/js_file_system.cc: the file system the SQLite VFS calls
// synchronously. Linked with `--js-library wasm/files_library.js`.
//
// Each function calls the object given to the module factory as
// `onestoreFiles` (in Node, js/files-node.js), whose interface is:
//   open(path, create) -> id          (a missing file without create: throw
//                                      an Error whose code is "ENOENT")
//   read(id, uint8array, offset) -> bytesRead   (fewer only at end of file)
//   write(id, uint8array, offset)
//   truncate(id, size)
//   sync(id)
//   size(id) -> number
//   close(id)
//   delete(path)
//   exists(path) -> bool
//   lock(path) -> bool                (optional: the lock of a database
//   unlock(path)                       between processes, see FileSystem::Lock
//   lockHeld(path) -> bool             in src/backends/sqlite/file.h; a files
//                                      object without them has one process)
// Offsets and sizes are JS numbers (exact up to 2^53).
//
// No JS exception crosses into wasm: each function catches, keeps the message
// for onestore_files_last_error, and returns a negative code (-2 when the
// file does not exist, -1 otherwise). A view of wasm memory is made afresh on
// every call, because memory can grow between calls.
//
// These functions and the extern "C" list in wasm/js_file_system.cc must stay
// in step: same names, same arguments, same return codes.
mergeInto(LibraryManager.library, {
  $ONESTORE_FILES: {
    lastError: '',
    // Returns the files object, or throws if the module was given none.
    files: function () {
      var files = Module['onestoreFiles'];
      if (!files) {
        throw new Error('no file system: pass `onestoreFiles` to the module factory');
      }
      return files;
    },
    fail: function (e) {
      var message;
      try {
        message = (e && e.message) ? String(e.message) : String(e);
        // A DOMException's name is its kind (QuotaExceededError,
        // NoModificationAllowedError...): keep it with the message.
        if (e && typeof e.name === 'string' && e.name !== 'Error' && message.indexOf(e.name) < 0) {
          message = e.name + ': ' + message;
        }
      } catch (ignored) {
        message = 'unknown JS error';
      }
      ONESTORE_FILES.lastError = message;
      return (e && e.code === 'ENOENT') ? -2 : -1;
    },
  },

  onestore_files_open__deps: ['$ONESTORE_FILES'],
  onestore_files_open: function (path, create) {
    try {
      var id = ONESTORE_FILES.files()['open'](UTF8ToString(path), !!create);
      if (typeof id !== 'number' || id < 0 || (id | 0) !== id) {
        throw new Error('onestoreFiles.open returned ' + id + ', not a file id');
      }
      return id;
    } catch (e) {
      return ONESTORE_FILES.fail(e);
    }
  },

  onestore_files_read__deps: ['$ONESTORE_FILES'],
  onestore_files_read: function (id, buf, n, offset) {
    try {
      var got = ONESTORE_FILES.files()['read'](id, HEAPU8.subarray(buf, buf + n), offset);
      if (typeof got !== 'number' || got < 0 || got > n) {
        throw new Error('onestoreFiles.read returned ' + got + ' for ' + n + ' bytes');
      }
      return got;
    } catch (e) {
      return ONESTORE_FILES.fail(e);
    }
  },

  onestore_files_write__deps: ['$ONESTORE_FILES'],
  onestore_files_write: function (id, buf, n, offset) {
    try {
      ONESTORE_FILES.files()['write'](id, HEAPU8.subarray(buf, buf + n), offset);
      return 0;
    } catch (e) {
      return ONESTORE_FILES.fail(e);
    }
  },

  onestore_files_truncate__deps: ['$ONESTORE_FILES'],
  onestore_files_truncate: function (id, size) {
    try {
      ONESTORE_FILES.files()['truncate'](id, size);
      return 0;
    } catch (e) {
      return ONESTORE_FILES.fail(e);
    }
  },

  onestore_files_sync__deps: ['$ONESTORE_FILES'],
  onestore_files_sync: function (id) {
    try {
      ONESTORE_FILES.files()['sync'](id);
      return 0;
    } catch (e) {
      return ONESTORE_FILES.fail(e);
    }
  },

  onestore_files_size__deps: ['$ONESTORE_FILES'],
  onestore_files_size: function (id) {
    try {
      var size = ONESTORE_FILES.files()['size'](id);
      if (typeof size === 'bigint') size = Number(size);
      if (typeof size !== 'number' || !(size >= 0)) {
        throw new Error('onestoreFiles.size returned ' + size);
      }
      return size;
    } catch (e) {
      return ONESTORE_FILES.fail(e);
    }
  },

  onestore_files_close__deps: ['$ONESTORE_FILES'],
  onestore_files_close: function (id) {
    try {
      ONESTORE_FILES.files()['close'](id);
      return 0;
    } catch (e) {
      return ONESTORE_FILES.fail(e);
    }
  },

  onestore_files_delete__deps: ['$ONESTORE_FILES'],
  onestore_files_delete: function (path) {
    try {
      ONESTORE_FILES.files()['delete'](UTF8ToString(path));
      return 0;
    } catch (e) {
      return ONESTORE_FILES.fail(e);
    }
  },

  onestore_files_exists__deps: ['$ONESTORE_FILES'],
  onestore_files_exists: function (path) {
    try {
      return ONESTORE_FILES.files()['exists'](UTF8ToString(path)) ? 1 : 0;
    } catch (e) {
      return ONESTORE_FILES.fail(e);
    }
  },

  onestore_files_lock__deps: ['$ONESTORE_FILES'],
  onestore_files_lock: function (path) {
    try {
      var files = ONESTORE_FILES.files();
      if (!files['lock']) return 1;
      return files['lock'](UTF8ToString(path)) ? 1 : 0;
    } catch (e) {
      return ONESTORE_FILES.fail(e);
    }
  },

  onestore_files_unlock__deps: ['$ONESTORE_FILES'],
  onestore_files_unlock: function (path) {
    try {
      var files = ONESTORE_FILES.files();
      if (files['unlock']) files['unlock'](UTF8ToString(path));
      return 0;
    } catch (e) {
      return ONESTORE_FILES.fail(e);
    }
  },

  onestore_files_lock_held__deps: ['$ONESTORE_FILES'],
  onestore_files_lock_held: function (path) {
    try {
      var files = ONESTORE_FILES.files();
      if (!files['lockHeld']) return 0;
      return files['lockHeld'](UTF8ToString(path)) ? 1 : 0;
    } catch (e) {
      return ONESTORE_FILES.fail(e);
    }
  },

  onestore_files_last_error__deps: ['$ONESTORE_FILES'],
  // The message's UTF-8 length; its first cap - 1 bytes and a NUL at buf
  // (cut at a byte: the core reads it as the message of an error).
  onestore_files_last_error: function (buf, cap) {
    var message = new TextEncoder().encode(ONESTORE_FILES.lastError);
    if (cap > 0) {
      var n = Math.min(message.length, cap - 1);
      HEAPU8.set(message.subarray(0, n), buf);
      HEAPU8[buf + n] = 0;
    }
    return message.length;
  },
});
