// A small ustar writer and a strict reader, as much of POSIX tar as onestore
// archives use (docs/formats.md "Archive"; why our own: docs/architecture.md
// "Archives"). No dependency and no Node API: the same file runs in Node,
// browsers (a Worker, unbundled) and workerd.
//
// Writer: regular files only, names of at most 100 bytes, mode 0644, mtime
// 0, uid/gid 0, POSIX magic "ustar\0" "00", and the two zero blocks at the
// end. GNU tar lists and extracts it.
//
// Reader: 512-byte headers, each checksum checked, POSIX or GNU magic,
// octal sizes (a base-256 size is refused), the ustar prefix joined to the
// name. It reports every entry's type, so the caller refuses links, devices
// and the extended headers (pax "x"/"g", GNU "L"/"K") it does not take; it
// never follows one. Bodies are read only when asked, so a size above any
// limit is refused from its header alone.

const BLOCK = 512;
const enc = new TextEncoder();
const dec = new TextDecoder();

/** The end of an archive: two zero blocks. */
export const TAR_END = new Uint8Array(2 * BLOCK);

function putText(h, at, len, text) {
  const b = enc.encode(text);
  if (b.length > len) throw new Error(`tar: ${JSON.stringify(text)} does not fit in ${len} bytes`);
  h.set(b, at);
}

function putOctal(h, at, len, n) {
  putText(h, at, len, n.toString(8).padStart(len - 1, "0") + "\0");
}

/**
 * The 512-byte ustar header of a regular file `name` (at most 100 bytes)
 * of `size` bytes.
 * @example tarHeader("onestore/manifest.json", 120)
 */
export function tarHeader(name, size) {
  const h = new Uint8Array(BLOCK);
  putText(h, 0, 100, name);
  putOctal(h, 100, 8, 0o644);
  putOctal(h, 108, 8, 0);
  putOctal(h, 116, 8, 0);
  putOctal(h, 124, 12, size);
  putOctal(h, 136, 12, 0);
  h.fill(0x20, 148, 156);  // the checksum counts its own field as spaces
  h[156] = 0x30;           // "0": a regular file
  putText(h, 257, 6, "ustar\0");
  putText(h, 263, 2, "00");
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += h[i];
  putText(h, 148, 8, sum.toString(8).padStart(6, "0") + "\0 ");
  return h;
}

/** The zero bytes that pad a body of `size` bytes to whole blocks. */
export function tarPadding(size) {
  return new Uint8Array((BLOCK - (size % BLOCK)) % BLOCK);
}

/** The bytes an entry of a `size`-byte body takes: its header and padded body. */
export function tarEntryBytes(size) {
  return BLOCK + Math.ceil(size / BLOCK) * BLOCK;
}

const TYPES = {
  "0": "file", "\0": "file", "7": "file", "1": "link", "2": "symlink", "3": "character-device",
  "4": "block-device", "5": "directory", "6": "fifo", x: "pax-header", g: "pax-global-header",
  L: "gnu-long-name", K: "gnu-long-link-name",
};

/** A header that the reader refuses; `message` says why. */
export class TarError extends Error {}

function text(h, at, len) {
  const end = h.subarray(at, at + len).indexOf(0);
  return dec.decode(h.subarray(at, end < 0 ? at + len : at + end));
}

function octal(h, at, len, what) {
  if (h[at] & 0x80) throw new TarError(`its ${what} is in base-256 (a number beyond what octal holds)`);
  const s = text(h, at, len).trim();
  if (!/^[0-7]*$/.test(s)) throw new TarError(`its ${what} field ${JSON.stringify(s)} is not octal`);
  return s === "" ? 0 : parseInt(s, 8);
}

/**
 * Reads entries from a ReadableStream of bytes:
 *
 *   const tar = new TarReader(stream);
 *   for (let h; (h = await tar.next()); ) { const body = await tar.body(); ... }
 *
 * `next()` resolves to `{ name, type, size, linkname }`, or null after the
 * end blocks; `body()` to the current entry's bytes (a new Uint8Array of
 * exactly `size` bytes), and `skip()` passes over them. A cut archive, a
 * broken header or a failed source throws (a TarError for the archive's
 * own faults). `bytes` counts the bytes read so far.
 */
export class TarReader {
  constructor(stream) {
    this.reader = stream.getReader();
    this.chunks = [];   // buffered chunks, the first from offset `at`
    this.at = 0;
    this.buffered = 0;
    this.ended = false;
    this.pending = 0;   // body bytes (with padding) of the current entry not yet read
    this.size = 0;
    this.bytes = 0;
  }

  async fill(n) {
    while (this.buffered < n && !this.ended) {
      const { done, value } = await this.reader.read();
      if (done) this.ended = true;
      else if (value.byteLength > 0) {
        if (!(value instanceof Uint8Array)) throw new TarError(`the source gave ${Object.prototype.toString.call(value)}, not bytes`);
        this.chunks.push(value);
        this.buffered += value.byteLength;
      }
    }
    return this.buffered >= n;
  }

  // Takes n buffered bytes (n <= buffered) into `out` at `to`, or drops them.
  take(n, out, to = 0) {
    while (n > 0) {
      const c = this.chunks[0];
      const k = Math.min(n, c.byteLength - this.at);
      if (out) out.set(c.subarray(this.at, this.at + k), to);
      to += k;
      n -= k;
      this.at += k;
      this.buffered -= k;
      this.bytes += k;
      if (this.at === c.byteLength) {
        this.chunks.shift();
        this.at = 0;
      }
    }
  }

  /** The next entry's header, or null at the end of the archive. */
  async next() {
    if (this.pending > 0) await this.skip();
    if (!(await this.fill(BLOCK))) {
      if (this.buffered === 0) throw new TarError("the archive ends without its end blocks (cut at an entry's end)");
      throw new TarError(`the archive is cut inside a header (${this.buffered} of 512 bytes)`);
    }
    const h = new Uint8Array(BLOCK);
    this.take(BLOCK, h);
    if (h.every((b) => b === 0)) {
      // Both end blocks: an archive cut inside the second one is cut.
      if (!(await this.fill(BLOCK))) throw new TarError(`the archive is cut inside its end blocks (${512 + this.buffered} of their 1024 bytes are there)`);
      const second = new Uint8Array(BLOCK);
      this.take(BLOCK, second);
      if (!second.every((b) => b === 0)) throw new TarError("the archive's first end block (512 zero bytes) is not followed by the second");
      this.done();
      return null;
    }
    let sum = 0;
    let signed = 0;
    for (let i = 0; i < BLOCK; i++) {
      const b = i >= 148 && i < 156 ? 0x20 : h[i];
      sum += b;
      signed += b > 127 ? b - 256 : b;
    }
    const stored = octal(h, 148, 8, "checksum");
    if (stored !== sum && stored !== signed) throw new TarError(`a header's checksum is ${stored}, its bytes sum to ${sum}`);
    const magic = text(h, 257, 6);
    const posix = magic === "ustar" && h[263] === 0x30 && h[264] === 0x30;
    const gnu = magic === "ustar " && h[263] === 0x20 && h[264] === 0;
    if (!posix && !gnu) throw new TarError(`a header has magic ${JSON.stringify(dec.decode(h.subarray(257, 265)))}, not ustar`);
    const size = octal(h, 124, 12, "size");
    const flag = String.fromCharCode(h[156]);
    const prefix = posix ? text(h, 345, 155) : "";
    const name = (prefix ? prefix + "/" : "") + text(h, 0, 100);
    this.size = size;
    this.pending = Math.ceil(size / BLOCK) * BLOCK;
    return { name, type: TYPES[flag] ?? `type ${JSON.stringify(flag)}`, size, linkname: text(h, 157, 100) };
  }

  /** The current entry's body (its `size` bytes), then its padding is passed over. */
  async body() {
    const size = this.size;
    const padded = this.pending;
    if (!(await this.fill(padded))) {
      throw new TarError(`the archive is cut inside an entry of ${size} bytes (${this.buffered} of its ${padded} padded bytes are there)`);
    }
    const out = new Uint8Array(size);
    this.take(size, out);
    this.take(padded - size);
    this.pending = 0;
    return out;
  }

  /** Passes over the current entry's body. */
  async skip() {
    while (this.pending > 0) {
      if (!(await this.fill(1))) throw new TarError("the archive is cut inside an entry");
      const n = Math.min(this.pending, this.buffered);
      this.take(n);
      this.pending -= n;
    }
  }

  // After the two zero blocks the rest (a tar's record padding) is not
  // read: the source is let go.
  done() {
    this.chunks = [];
    this.buffered = 0;
    this.cancel();
  }

  /** Stops the source. */
  cancel(reason) {
    return this.reader.cancel(reason).catch(() => {});
  }
}
