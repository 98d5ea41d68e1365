// The blobs of a durable store, in the Durable Object's own SQLite, in a
// table of their own beside the store's (docs/formats.md, "Blob layout"):
//
//   _blobs(hash TEXT, part INTEGER, data BLOB, PRIMARY KEY (hash, part))
//
// A blob is cut into parts of 1 MiB (a row of a Durable Object's SQLite holds
// at most 2 MB); an empty blob is one empty part. All parts are written in
// one transactionSync, so a blob is there whole or not at all. The table is
// reached through ctx.storage.sql in JS: the bytes never cross into wasm.

/** The size of one part of a blob in the _blobs table. */
export const DURABLE_PART_BYTES = 1024 * 1024;

const create = (table) => `CREATE TABLE IF NOT EXISTS ${table} (hash TEXT NOT NULL, part INTEGER NOT NULL, ` +
  "data BLOB NOT NULL, PRIMARY KEY (hash, part)) WITHOUT ROWID";

/**
 * The blob backend of a Durable Object's `storage` (ctx.storage), in table
 * `table` (_blobs; an import stages its blobs in _blobs_import).
 * @example const b = durableBlobs(ctx.storage); await b.write(hash, bytes);
 */
export function durableBlobs(storage, table = "_blobs") {
  let made = false;
  const sql = (q, ...params) => {
    if (!made) {
      storage.sql.exec(create(table));
      made = true;
    }
    return storage.sql.exec(q, ...params).toArray();
  };
  return {
    async has(hash) {
      return sql(`SELECT 1 AS x FROM ${table} WHERE hash = ? AND part = 0`, hash).length > 0;
    },
    async size(hash) {
      const rows = sql(`SELECT count(*) AS parts, sum(length(data)) AS bytes FROM ${table} WHERE hash = ?`, hash);
      return rows[0].parts > 0 ? rows[0].bytes : undefined;
    },
    async get(hash) {
      const rows = sql(`SELECT data FROM ${table} WHERE hash = ? ORDER BY part`, hash);
      if (rows.length === 0) return undefined;
      let size = 0;
      for (const r of rows) size += r.data.byteLength;
      const out = new Uint8Array(size);
      let at = 0;
      for (const r of rows) {
        out.set(new Uint8Array(r.data), at);
        at += r.data.byteLength;
      }
      return out;
    },
    async write(hash, bytes) {
      storage.transactionSync(() => {
        let part = 0;
        let at = 0;
        do {
          const end = Math.min(at + DURABLE_PART_BYTES, bytes.byteLength);
          const chunk = bytes.buffer.slice(bytes.byteOffset + at, bytes.byteOffset + end);
          sql(`INSERT OR IGNORE INTO ${table} (hash, part, data) VALUES (?, ?, ?)`, hash, part, chunk);
          part += 1;
          at = end;
        } while (at < bytes.byteLength);
      });
    },
    async list(after, n) {
      return sql(`SELECT hash FROM ${table} WHERE part = 0 AND hash > ? ORDER BY hash LIMIT ?`, after, n).map((r) => r.hash);
    },
  };
}
