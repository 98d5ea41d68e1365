// Reads a binary batch of ops (wasm/ABI.md, "Binary ops") back into the wire
// JSON text of its ops, for the tests that look at what a transaction sends
// (the fake core, tests/js/binary-ops.test.js). Not a test file itself.

const utf8 = new TextDecoder();

/**
 * The wire JSON text (an array of ops) of a binary batch, each put as the
 * JSON encoder writes it; a JSON text is returned as it is.
 *
 * @example
 * batchToJson(core.calls[0][1])   // '[{"op":"put","table":"n/notes","row":{"id":"a","text":"A"}}]'
 */
export function batchToJson(batch) {
  if (typeof batch === "string") return batch;
  if (batch[0] !== 0xb1) return utf8.decode(batch);
  let p = 1;
  const varint = () => {
    let v = 0;
    for (let m = 1; ; m *= 128) {
      if (p >= batch.length) throw new Error(`a varint past the end of the batch, at ${p}`);
      const b = batch[p++];
      v += (b & 0x7f) * m;
      if (b < 0x80) return v;
    }
  };
  const str = () => {
    const n = varint();
    if (p + n > batch.length) throw new Error(`a string past the end of the batch, at ${p}`);
    const s = utf8.decode(batch.subarray(p, p + n));
    p += n;
    return s;
  };
  const value = () => {
    const tag = batch[p++];
    switch (tag) {
      case 0: return "null";
      case 1: return "false";
      case 2: return "true";
      case 3: return String(varint());
      case 7: return `-${varint()}`;
      case 4: return JSON.stringify(str());
      case 5: case 6: return str();
      default: throw new Error(`an unknown value tag ${tag} at ${p - 1}`);
    }
  };
  const ops = [];
  let table = null;
  let names = null;
  while (p < batch.length) {
    const tag = batch[p++];
    if (tag === 0x53) {
      table = str();
      names = Array.from({ length: varint() }, str);
    } else if (tag === 0x4a) {
      ops.push(str());
    } else if (tag === 0x50) {
      const row = names.map((k) => `${JSON.stringify(k)}:${value()}`).join(",");
      ops.push(`{"op":"put","table":${JSON.stringify(table)},"row":{${row}}}`);
    } else {
      throw new Error(`an unknown record ${tag} at ${p - 1}`);
    }
  }
  return `[${ops.join(",")}]`;
}
