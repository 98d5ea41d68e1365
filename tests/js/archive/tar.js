// A raw ustar writer for the attack corpus only: it writes what no tar
// library would (wrong checksums, sizes above the bytes, links, ../ paths,
// pax and GNU long-name records), so each hostile archive is exactly the
// bytes a test means.

const enc = new TextEncoder();

function octal(n, width) {
  return n.toString(8).padStart(width - 1, "0") + "\0";
}

/**
 * One 512-byte header. `size` is what the header declares (default: the
 * body's length); `type` a typeflag character; `checksum: false` writes a
 * wrong one; `rawSize` puts the given bytes in the size field.
 */
export function header({ name, size, type = "0", linkname = "", checksum = true, rawSize, prefix = "" }) {
  const h = new Uint8Array(512);
  const put = (s, at, len) => h.set(enc.encode(s).slice(0, len), at);
  put(name, 0, 100);
  put(octal(0o644, 8), 100, 8);
  put(octal(0, 8), 108, 8);
  put(octal(0, 8), 116, 8);
  if (rawSize) h.set(rawSize, 124);
  else put(octal(size, 12), 124, 12);
  put(octal(0, 12), 136, 12);
  put("        ", 148, 8);
  put(type, 156, 1);
  put(linkname, 157, 100);
  put("ustar\0", 257, 6);
  put("00", 263, 2);
  put(prefix, 345, 155);
  let sum = 0;
  for (const b of h) sum += b;
  if (!checksum) sum += 7;
  put(sum.toString(8).padStart(6, "0") + "\0 ", 148, 8);
  return h;
}

/** An entry: header + body padded to 512. `declared` overrides the header's size. */
export function entry(name, body = "", opts = {}) {
  const bytes = typeof body === "string" ? enc.encode(body) : body;
  const padded = new Uint8Array(Math.ceil(bytes.length / 512) * 512);
  padded.set(bytes);
  return concat([header({ name, size: opts.declared ?? bytes.length, ...opts }), padded]);
}

/** A pax extended header ("x") whose records apply to the next entry. */
export function pax(records) {
  let text = "";
  for (const [k, v] of Object.entries(records)) {
    const rest = ` ${k}=${v}\n`;
    let len = rest.length + 1;
    while (String(len).length + rest.length !== len) len = String(len).length + rest.length;
    text += `${len}${rest}`;
  }
  return entry("PaxHeader", text, { type: "x" });
}

/** The end of an archive: two zero blocks. */
export const END = new Uint8Array(1024);

export function concat(parts) {
  const n = parts.reduce((a, p) => a + p.length, 0);
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
