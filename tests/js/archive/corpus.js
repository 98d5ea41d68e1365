// The attack corpus: hostile archives generated from a real export, each
// with the code importStore must refuse it with. Every case changes one
// thing of an archive that imports fine, so each refusal is for that thing.

import { unpackTar } from "modern-tar";
import { END, concat, entry, header, pax } from "./tar.js";

const dec = new TextDecoder();

/** The entries of a valid archive's bytes: [{ name, text }] (a blob's text is its bytes). */
export async function entriesOf(bytes) {
  return (await unpackTar(bytes)).map((e) => ({ name: e.header.name, text: isBlob(e.header.name) ? e.data : dec.decode(e.data) }));
}

function isBlob(name) {
  return name.startsWith("onestore/sha256/");
}

/** A tar of entries [{ name, text, ...header options }] with its end blocks. */
export function tarOf(entries, { end = true } = {}) {
  return concat([...entries.map((e) => entry(e.name, e.text, e)), ...(end ? [END] : [])]);
}

function edit(entries, name, fn) {
  let hit = false;
  const out = entries.map((e) => {
    if (e.name !== name) return e;
    hit = true;
    return { ...e, text: fn(e.text) };
  });
  if (!hit) throw new Error(`corpus: no entry ${name}`);
  return out;
}

function editManifest(entries, fn) {
  return edit(entries, "onestore/manifest.json", (t) => JSON.stringify(fn(JSON.parse(t))));
}

// Cuts `text`'s lines: keeps those `keep(line, i)` accepts, maps the others.
function lines(text, fn) {
  return text.split("\n").slice(0, -1).flatMap((l, i) => fn(l, i)).map((l) => l + "\n").join("");
}

/**
 * The hostile archives for a valid one's entries. The valid archive must
 * have a manifest, pages 1 and 2 of table 0, one page of tables 1 and 2,
 * one outbox page, and at least two blobs of at least one byte.
 */
export function hostileArchives(valid) {
  const [manifest, ...rest] = valid;
  const page = "onestore/tables/0002/000001.jsonl";  // edits: pages 1 and 2
  const bytes = tarOf(valid);
  const cases = [];
  const add = (name, archive, code = "invalid/archive") => cases.push({ name, bytes: archive, code, open: () => archive });
  // A stream that gives its bytes and then stalls, as a peer or a bomb that
  // promises more does: the refusal must come from the header alone.
  const addStalled = (name, archive) => cases.push({
    name, bytes: archive, code: "invalid/archive",
    open: () => new ReadableStream({ start(c) { c.enqueue(archive); }, pull: () => new Promise(() => {}) }),
  });
  const withEntry = (extra, at = 1) => tarOf([...valid.slice(0, at), extra, ...valid.slice(at)]);

  // Paths outside the archive.
  add("a ../ path", withEntry({ name: "../escape.txt", text: "x" }));
  add("a ../ path inside the layout", withEntry({ name: "onestore/../../escape.txt", text: "x" }));
  add("a ../ path as a table page", withEntry({ name: "onestore/tables/../../../tmp/x.jsonl", text: "x" }));
  add("an absolute path", withEntry({ name: "/tmp/onestore-escape.txt", text: "x" }));
  add("an absolute manifest path", tarOf([{ ...manifest, name: "/onestore/manifest.json" }, ...rest]));
  add("a ./ segment", withEntry({ name: "onestore/./tables/0000/000001.jsonl", text: "x" }));
  add("a backslash path", withEntry({ name: "onestore\\..\\..\\escape.txt", text: "x" }));
  add("a drive-letter path", withEntry({ name: "C:/escape.txt", text: "x" }));
  add("a ../ path in the ustar prefix field", withEntry({ name: "escape.txt", prefix: "../..", text: "x" }));
  add("a ../ path from a pax header", concat([entry(manifest.name, manifest.text), pax({ path: "../../pax-escape.txt" }), entry("innocent.txt", "x"), tarOf(rest)]));
  add("a ../ path from a GNU long name", concat([entry(manifest.name, manifest.text), entry("././@LongLink", "../../gnu-escape.txt\0", { type: "L" }), entry("innocent.txt", "x"), tarOf(rest)]));
  add("a folder outside the layout", withEntry({ name: "evil/", text: "", type: "5" }));
  // Links and special files.
  add("a symlink", withEntry({ name: "onestore/link", text: "", type: "2", linkname: "/etc/passwd" }));
  add("a symlink in place of a page", tarOf([manifest, { name: page, text: "", type: "2", linkname: "../../etc/passwd" }, ...rest.filter((e) => e.name !== page)]));
  add("a hard link", withEntry({ name: "onestore/hard", text: "", type: "1", linkname: "onestore/manifest.json" }));
  add("a character device", withEntry({ name: "onestore/dev", text: "", type: "3" }));
  add("a fifo", withEntry({ name: "onestore/fifo", text: "", type: "6" }));
  // Duplicates and unknown entries.
  add("a duplicate manifest", withEntry(manifest));
  add("a duplicate page", tarOf([...valid, rest[0]]));
  add("an unknown entry", withEntry({ name: "onestore/run.sh", text: "rm -rf /" }));
  add("a page of a table the manifest does not list", withEntry({ name: "onestore/tables/0009/000001.jsonl", text: "[1]\n" }));
  add("a page beyond the table's pages", withEntry({ name: "onestore/tables/0000/000002.jsonl", text: "[1]\n" }));
  add("an outbox page beyond the manifest's", withEntry({ name: "onestore/outbox/000002.jsonl", text: "{}\n" }));
  add("no manifest first", tarOf([...rest, manifest]));
  // Sizes.
  addStalled("an entry too large, refused at its header", concat([entry(manifest.name, manifest.text), header({ name: page, size: 1536 * 1024 * 1024 }), new Uint8Array(512)]));
  addStalled("a tar bomb: an 8 GB size, refused at its header", concat([entry(manifest.name, manifest.text), header({ name: page, size: 0o77777777777 }), new Uint8Array(1024)]));
  addStalled("a layout folder that declares 100 MB, refused at its header", concat([entry(manifest.name, manifest.text), header({ name: "onestore/tables/", size: 100 * 1024 * 1024, type: "5" }), new Uint8Array(512)]));
  addStalled("a layout folder that declares 8 GB, refused at its header", concat([entry(manifest.name, manifest.text), header({ name: "onestore/outbox/", size: 0o77777777777, type: "5" }), new Uint8Array(512)]));
  add("an entry too large, cut", concat([entry(manifest.name, manifest.text), header({ name: page, size: 1536 * 1024 * 1024 }), new Uint8Array(512), END]));
  add("a tar bomb: an 8 GB size over a few bytes", concat([entry(manifest.name, manifest.text), header({ name: page, size: 0o77777777777 }), new Uint8Array(1024)]));
  const base256 = new Uint8Array(12);
  base256[0] = 0x80;
  base256[4] = 0x7f;  // about 2^63 in GNU's base-256 size
  add("a tar bomb: a base-256 size near 2^63", concat([entry(manifest.name, manifest.text), header({ name: page, rawSize: base256 }), new Uint8Array(1024)]));
  add("a size declared above the bytes (small)", concat([entry(manifest.name, manifest.text), header({ name: page, size: 5000 }), new Uint8Array(512)]));
  // Truncation and garbage.
  add("an archive cut in a body", bytes.slice(0, 512 + Math.ceil(manifest.text.length / 512) * 512 + 512 + 100));
  add("an archive cut in a header", bytes.slice(0, 512 + Math.ceil(manifest.text.length / 512) * 512 + 200));
  add("an archive cut after the manifest", tarOf([manifest]));
  // Every entry whole, the end cut: before, one end block of the two was
  // enough, and these imported.
  add("an archive cut inside its second end block", bytes.slice(0, -1));
  add("an archive cut after its first end block", bytes.slice(0, -512));
  add("an archive without its last page", tarOf(valid.slice(0, -1)));
  add("an empty archive", END);
  add("no bytes at all", new Uint8Array(0));
  add("garbage bytes", Uint8Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) & 255));
  add("a header with a wrong checksum", concat([entry(manifest.name, manifest.text), concat([header({ name: page, size: 0, checksum: false })]), END]));
  // Content that does not match the manifest.
  add("a changed row (wrong digest)", tarOf(edit(valid, page, (t) => t.replace('"src/', '"SRC/'))));
  add("a row removed", tarOf(edit(valid, page, (t) => lines(t, (l, i) => (i === 3 ? [] : [l])))));
  add("a row added", tarOf(edit(valid, "onestore/tables/0000/000001.jsonl", (t) => t + '["zzz",1]\n')));
  add("a row of the wrong type", tarOf(edit(valid, "onestore/tables/0000/000001.jsonl", (t) => lines(t, (l, i) => (i === 0 ? ['["a","five"]'] : [l])))));
  add("a row that is not JSON", tarOf(edit(valid, "onestore/tables/0000/000001.jsonl", (t) => lines(t, (l, i) => (i === 0 ? ['["a",5'] : [l])))));
  add("a page that is not UTF-8", tarOf(valid.map((e) => (e.name === "onestore/tables/0000/000001.jsonl" ? { ...e, text: new Uint8Array([0x5b, 0xff, 0xfe, 0x5d, 0x0a]) } : e))));
  add("a wrong digest in the manifest", tarOf(editManifest(valid, (m) => { m.tables[1].digest = "t1-" + "0".repeat(64); return m; })));
  add("a wrong fingerprint in the manifest", tarOf(editManifest(valid, (m) => { m.fingerprint = "f1-" + "0".repeat(32); return m; })));
  add("a wrong row count in the manifest", tarOf(editManifest(valid, (m) => { m.tables[0].rows += 1; return m; })));
  add("a table record changed in the manifest", tarOf(editManifest(valid, (m) => { m.tables[0].record.columns.count.type = "str"; return m; })));
  add("a table listed twice in the manifest", tarOf(editManifest(valid, (m) => { m.tables.push(m.tables[0]); return m; })));
  add("a manifest that is not JSON", tarOf(edit(valid, manifest.name, (t) => t.slice(0, -10))));
  add("a manifest of another kind", tarOf(editManifest(valid, (m) => { m.kind = "zip"; return m; })));
  add("a manifest listing a blob that is not a hash", tarOf(editManifest(valid, (m) => { m.blobs[0].hash = "x"; return m; })));
  add("a head the outbox does not end at", tarOf(editManifest(valid, (m) => { m.head += 1; m.outbox.from += 1; return m; })));
  add("an outbox record out of order", tarOf(edit(valid, "onestore/outbox/000001.jsonl", (t) => lines(t, (l, i) => (i === 0 ? [l.replace(/"seq":\d+/, '"seq":999')] : [l])))));
  // A record store.at and a replica would fail on later: refused at import.
  const firstRecord = (f) => tarOf(edit(valid, "onestore/outbox/000001.jsonl", (t) => lines(t, (l, i) => (i === 0 ? [JSON.stringify(f(JSON.parse(l)))] : [l]))));
  add("an outbox record with an op of an unknown kind", firstRecord((r) => ({ ...r, ops: [...r.ops, { op: "frobnicate", table: "x/y" }] })));
  add("an outbox record with a field a record has not", firstRecord((r) => ({ ...r, extra: 1 })));
  add("an outbox record whose from is not its seq - 1", firstRecord((r) => ({ ...r, from: r.seq + 5 })));
  add("an outbox record without ops", firstRecord(({ ops, ...r }) => r));
  // Well formed, in order, and of the right shape: only the outbox's digest
  // (the tables' digests and the fingerprint do not cover it) tells.
  add("an outbox record whose time changed", firstRecord((r) => ({ ...r, at: r.at + 1 })));
  add("an outbox record whose owner changed", firstRecord((r) => ({ ...r, owner: `${r.owner}x` })));
  add("a wrong outbox digest in the manifest", tarOf(editManifest(valid, (m) => { m.outbox.digest = "o1-" + "0".repeat(64); return m; })));
  add("an outbox digest that is not one", tarOf(editManifest(valid, (m) => { m.outbox.digest = "sha256:" + "0".repeat(64); return m; })));
  add("a manifest of a newer format", tarOf(editManifest(valid, (m) => { m.format += 1; return m; })), "schema/newer");

  // Blobs (onestore/sha256/<xx>/<hash>, listed in the manifest).
  const blobs = valid.filter((e) => isBlob(e.name));
  if (blobs.length < 2) throw new Error("corpus: the valid archive needs two blobs");
  const [blob, blob2] = blobs;
  const hash = blob.name.slice(-64);
  const other = (hash[0] === "0" ? "1" : "0") + hash.slice(1);  // a hash of no blob here
  const without = (name) => valid.filter((e) => e.name !== name);
  const flipped = blob.text.slice();
  flipped[0] ^= 1;
  add("a blob whose bytes are not its hash", tarOf(valid.map((e) => (e === blob ? { ...e, text: flipped } : e))));
  add("a blob entry the manifest does not list", withEntry({ name: `onestore/sha256/${other.slice(0, 2)}/${other}`, text: blob.text }, valid.length));
  add("a blob under another hash's folder", tarOf(valid.map((e) => (e === blob ? { ...e, name: `onestore/sha256/${hash[0] === "f" ? "00" : "ff"}/${hash}` } : e))));
  add("a blob outside its folder", tarOf(valid.map((e) => (e === blob ? { ...e, name: `onestore/sha256/${hash}` } : e))));
  add("a blob under blobs/", tarOf(valid.map((e) => (e === blob ? { ...e, name: `onestore/blobs/${hash}` } : e))));
  add("a blob path with ../", tarOf(valid.map((e) => (e === blob ? { ...e, name: `onestore/sha256/../../${hash}` } : e))));
  add("a blob as a symlink", tarOf(valid.map((e) => (e === blob ? { name: blob.name, text: "", type: "2", linkname: "/etc/passwd" } : e))));
  add("a blob entry twice", tarOf([...valid, blob]));
  add("a blob missing", tarOf(without(blob.name)));
  add("a blob cut short of its listed size", tarOf(valid.map((e) => (e === blob ? { ...e, text: blob.text.slice(0, -1) } : e))));
  add("a manifest's table record nested 1500 deep", tarOf(editManifest(valid, (m) => {
    let v = 0;
    for (let i = 0; i < 1500; i++) v = [v];
    m.tables[0].record.deep = v;
    return m;
  })));
  add("a blob listed with another size", tarOf(editManifest(valid, (m) => { m.blobs[0].size += 1; return m; })));
  add("a blob listed above the blob limit", tarOf(editManifest(valid, (m) => { m.blobs[0].size = 64 * 1024 * 1024 + 1; return m; })));
  add("blobs listed out of hash order", tarOf(editManifest(valid, (m) => { m.blobs.reverse(); return m; })));
  add("a blob listed twice", tarOf(editManifest(valid, (m) => { m.blobs.push(m.blobs.at(-1)); return m; })));
  add("a blob left out of the manifest (fingerprint)", tarOf(editManifest(without(blob2.name), (m) => { m.blobs = m.blobs.filter((b) => b.hash !== blob2.name.slice(-64)); return m; })));
  add("blobs in a manifest of format 1", tarOf(editManifest(valid, (m) => { m.format = 1; return m; })));
  addStalled("an oversized blob, refused at its header", concat([...valid.filter((e) => !isBlob(e.name)).map((e) => entry(e.name, e.text)), header({ name: blob.name, size: 65 * 1024 * 1024 }), new Uint8Array(512)]));
  return cases;
}
