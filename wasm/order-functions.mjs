// Puts the functions of the linked core (dist/onestore-core.wasm) back in the
// order the linker wrote them, then drops their names: the same code, 16 KB
// smaller gzipped (issue 13; docs/performance.md, "Issue 13, the download,
// step two").
//
//   node wasm/order-functions.mjs <module.wasm> <reference.wasm>
//
// Why: Emscripten 3.1.6's last optimizing step (wasm-metadce, run at -O3)
// sorts the functions by how often they are called. That scatters the code of
// one source file (SQLite's b-tree, its parser, nlohmann's serializer...) over
// the whole code section, and gzip, whose window is 32 KB, finds fewer
// repeats: the same bodies compress to 17 KB more than in link order. This
// script rewrites <module.wasm> (linked with --profiling-funcs, so its
// functions carry names) with its functions in the order of the same names in
// <reference.wasm> (the same objects linked at -O0, where the order is the
// linker's: object by object, each in source order). The most-called
// functions go first, so that a call to them still takes a one-byte index.
// Functions the reference does not name (made by the optimizer) keep their
// relative order after the others. The name section is dropped: the shipped
// module has none. Nothing else changes: the bodies are the same bytes except
// for the indices of the functions they call, and the table, the exports and
// the start function point at the same functions as before.
//
// The module must be what Emscripten 3.1.6 emits here: MVP features, mutable
// globals and SIMD, element segments of the MVP form. Anything else makes
// the script fail (and the build with it) rather than guess.

import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

class Reader {
  constructor(buf, pos) {
    this.buf = buf;
    this.pos = pos;
  }
  byte() {
    return this.buf[this.pos++];
  }
  u32() {
    let result = 0;
    let shift = 0;
    let b;
    do {
      b = this.buf[this.pos++];
      result += (b & 0x7f) * 2 ** shift;
      shift += 7;
    } while (b & 0x80);
    return result;
  }
  skipLeb() {
    while (this.buf[this.pos++] & 0x80);
  }
  skipName() {
    const length = this.u32();
    this.pos += length;
  }
}

function leb(n) {
  const out = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
}

function sections(buf) {
  if (buf.length < 8 || buf.readUInt32LE(0) !== 0x6d736100 || buf.readUInt32LE(4) !== 1) {
    throw new Error("not a wasm module (version 1)");
  }
  const r = new Reader(buf, 8);
  const out = [];
  while (r.pos < buf.length) {
    const headerStart = r.pos;
    const id = r.byte();
    const size = r.u32();
    out.push({ id, headerStart, start: r.pos, end: r.pos + size });
    r.pos += size;
  }
  return out;
}

// Calls onCall(start, end, index) for the function index of every call and
// ref.func in one body; checks every opcode is one it knows.
function walkBody(buf, start, end, onCall) {
  const r = new Reader(buf, start);
  const groups = r.u32();
  for (let i = 0; i < groups; i++) {
    r.u32();
    r.byte();
  }
  while (r.pos < end) {
    const at = r.pos;
    const op = r.byte();
    if (op === 0x10 || op === 0xd2) {  // call, ref.func
      const p = r.pos;
      const index = r.u32();
      onCall(p, r.pos, index);
    } else if (op === 0x02 || op === 0x03 || op === 0x04) {  // block, loop, if: a block type
      r.skipLeb();
    } else if (op === 0x0c || op === 0x0d || (op >= 0x20 && op <= 0x26) || op === 0x3f ||
               op === 0x40 || op === 0x41 || op === 0x42) {  // one index or integer
      r.skipLeb();
    } else if (op === 0x0e) {  // br_table
      const n = r.u32();
      for (let i = 0; i <= n; i++) r.skipLeb();
    } else if (op === 0x11 || (op >= 0x28 && op <= 0x3e)) {  // call_indirect; loads and stores
      r.skipLeb();
      r.skipLeb();
    } else if (op === 0x1c) {  // select with types
      r.pos += r.u32();
    } else if (op === 0x43) {
      r.pos += 4;
    } else if (op === 0x44) {
      r.pos += 8;
    } else if (op === 0xd0) {
      r.pos += 1;
    } else if (op === 0xfc) {
      const sub = r.u32();
      if (sub <= 7) {
        // saturating truncations: no immediate
      } else if (sub === 8 || sub === 10 || sub === 12 || sub === 14) {
        r.skipLeb();
        r.skipLeb();
      } else if (sub === 9 || sub === 11 || sub === 13 || (sub >= 15 && sub <= 17)) {
        r.skipLeb();
      } else {
        throw new Error(`unknown instruction 0xfc ${sub} at byte ${at}`);
      }
    } else if (op === 0xfd) {
      const sub = r.u32();
      if (sub <= 11 || sub === 92 || sub === 93) {  // loads and stores: a memarg
        r.skipLeb();
        r.skipLeb();
      } else if (sub === 12 || sub === 13) {  // v128.const, i8x16.shuffle
        r.pos += 16;
      } else if (sub >= 21 && sub <= 34) {  // lane extract and replace
        r.pos += 1;
      } else if (sub >= 84 && sub <= 91) {  // lane loads and stores: memarg, lane
        r.skipLeb();
        r.skipLeb();
        r.pos += 1;
      } else if (sub > 255) {
        throw new Error(`unknown instruction 0xfd ${sub} at byte ${at}`);
      }
    } else if (!(op <= 0x01 || op === 0x05 || op === 0x0b || op === 0x0f || op === 0x1a ||
                 op === 0x1b || (op >= 0x45 && op <= 0xc4) || op === 0xd1)) {
      throw new Error(`unknown opcode 0x${op.toString(16)} at byte ${at}`);
    }
  }
  if (r.pos !== end) throw new Error(`a function body ends at byte ${r.pos}, not ${end}`);
}

// The module's imported function count, its bodies (with their calls) and
// its function names (index -> name) if it has a name section.
function read(buf) {
  const all = sections(buf);
  let imported = 0;
  const bodies = [];
  const names = new Map();
  for (const s of all) {
    const r = new Reader(buf, s.start);
    if (s.id === 2) {
      const count = r.u32();
      for (let i = 0; i < count; i++) {
        r.skipName();
        r.skipName();
        const kind = r.byte();
        if (kind === 0) {
          r.u32();
          imported++;
        } else if (kind === 1 || kind === 2) {
          if (kind === 1) r.byte();
          const flags = r.u32();
          r.u32();
          if (flags & 1) r.u32();
        } else if (kind === 3) {
          r.pos += 2;
        } else {
          throw new Error(`unknown import kind ${kind}`);
        }
      }
    } else if (s.id === 10) {
      const count = r.u32();
      for (let i = 0; i < count; i++) {
        const size = r.u32();
        const body = { start: r.pos, end: r.pos + size, calls: [] };
        walkBody(buf, body.start, body.end, (p, e, index) => body.calls.push([p, e, index]));
        bodies.push(body);
        r.pos += size;
      }
    } else if (s.id === 0) {
      const length = r.u32();
      if (buf.toString("utf8", r.pos, r.pos + length) !== "name") continue;
      r.pos += length;
      while (r.pos < s.end) {
        const sub = r.byte();
        const size = r.u32();
        const subEnd = r.pos + size;
        if (sub === 1) {
          const count = r.u32();
          for (let i = 0; i < count; i++) {
            const index = r.u32();
            const n = r.u32();
            names.set(index, buf.toString("utf8", r.pos, r.pos + n));
            r.pos += n;
          }
        }
        r.pos = subEnd;
      }
    }
  }
  return { sections: all, imported, bodies, names };
}

// The new order (new position -> old defined-function index).
function chooseOrder(module, reference) {
  const n = module.bodies.length;
  const place = new Map();
  for (const [index, name] of reference.names) {
    if (index >= reference.imported && !place.has(name)) place.set(name, index - reference.imported);
  }
  const key = new Array(n);
  let unknown = 0;
  for (let i = 0; i < n; i++) {
    const at = place.get(module.names.get(module.imported + i));
    if (at === undefined) unknown++;
    key[i] = at === undefined ? reference.bodies.length + i : at;
  }
  if (unknown > n / 10) {
    throw new Error(`${unknown} of ${n} functions have no name in the reference: ` +
                    "was the module linked with --profiling-funcs, and the reference from the same objects?");
  }
  // The most-called functions first, as many as one-byte indices allow.
  const calls = new Array(n).fill(0);
  for (const body of module.bodies) {
    for (const [, , index] of body.calls) if (index >= module.imported) calls[index - module.imported]++;
  }
  const hot = Math.max(0, 128 - module.imported);
  const first = [...Array(n).keys()].sort((a, b) => calls[b] - calls[a] || a - b).slice(0, hot);
  const isFirst = new Set(first);
  const rest = [...Array(n).keys()].filter((i) => !isFirst.has(i)).sort((a, b) => key[a] - key[b]);
  return { order: [...first, ...rest], unknown };
}

function rewrite(buf, module, order) {
  const n = module.bodies.length;
  const newIndex = new Array(n);
  order.forEach((old, position) => {
    newIndex[old] = position;
  });
  const mapIndex = (f) => (f < module.imported ? f : module.imported + newIndex[f - module.imported]);
  const out = [buf.subarray(0, 8)];
  const section = (id, parts) => {
    const bytes = Buffer.concat(parts);
    out.push(Buffer.from([id, ...leb(bytes.length)]), bytes);
  };
  for (const s of module.sections) {
    const r = new Reader(buf, s.start);
    if (s.id === 3) {  // function section: type indices
      const count = r.u32();
      const types = [];
      for (let i = 0; i < count; i++) types.push(r.u32());
      section(3, [Buffer.from(leb(count)), Buffer.from(order.flatMap((old) => leb(types[old])))]);
    } else if (s.id === 10) {  // code section
      const parts = [Buffer.from(leb(n))];
      for (const old of order) {
        const body = module.bodies[old];
        const chunks = [];
        let at = body.start;
        for (const [p, e, index] of body.calls) {
          chunks.push(buf.subarray(at, p), Buffer.from(leb(mapIndex(index))));
          at = e;
        }
        chunks.push(buf.subarray(at, body.end));
        const bytes = Buffer.concat(chunks);
        parts.push(Buffer.from(leb(bytes.length)), bytes);
      }
      section(10, parts);
    } else if (s.id === 7) {  // exports
      const count = r.u32();
      const parts = [Buffer.from(leb(count))];
      for (let i = 0; i < count; i++) {
        const from = r.pos;
        r.skipName();
        const kind = r.byte();
        const to = r.pos;
        const index = r.u32();
        parts.push(buf.subarray(from, to), Buffer.from(leb(kind === 0 ? mapIndex(index) : index)));
      }
      section(7, parts);
    } else if (s.id === 8) {  // start
      section(8, [Buffer.from(leb(mapIndex(r.u32())))]);
    } else if (s.id === 9) {  // elements: the table's function indices
      const count = r.u32();
      const parts = [Buffer.from(leb(count))];
      for (let i = 0; i < count; i++) {
        const flags = r.u32();
        if (flags !== 0) throw new Error(`element segment of form ${flags}: only the MVP form is handled`);
        const from = r.pos;
        const op = r.byte();
        if (op !== 0x41 && op !== 0x23) throw new Error("element segment offset is not a constant");
        r.skipLeb();
        if (r.byte() !== 0x0b) throw new Error("element segment offset is not a constant");
        const offset = buf.subarray(from, r.pos);
        const k = r.u32();
        const indices = [];
        for (let j = 0; j < k; j++) indices.push(...leb(mapIndex(r.u32())));
        parts.push(Buffer.from([0]), offset, Buffer.from(leb(k)), Buffer.from(indices));
      }
      section(9, parts);
    } else if (s.id === 0 && module.names.size > 0 && isNameSection(buf, s)) {
      // dropped: the shipped module has no names
    } else {
      out.push(buf.subarray(s.headerStart, s.end));
    }
  }
  return Buffer.concat(out);
}

function isNameSection(buf, s) {
  const r = new Reader(buf, s.start);
  const length = r.u32();
  return buf.toString("utf8", r.pos, r.pos + length) === "name";
}

// The module `bytes` (linked with --profiling-funcs) with its functions in
// the order of `reference` (see above), without names; `unknown` counts the
// functions the reference does not name. Throws on anything it cannot read.
export function orderFunctions(bytes, reference) {
  const buf = Buffer.from(bytes);
  const module = read(buf);
  if (module.names.size === 0) throw new Error("the module has no function names: link it with --profiling-funcs");
  const { order, unknown } = chooseOrder(module, read(Buffer.from(reference)));
  const out = rewrite(buf, module, order);
  if (!WebAssembly.validate(out)) throw new Error("the reordered module does not validate");
  // The same functions, each calling the same functions as before.
  const check = read(out);
  if (check.bodies.length !== module.bodies.length) throw new Error("function count changed");
  const position = new Array(order.length);
  order.forEach((old, at) => {
    position[old] = at;
  });
  const moved = (f) => (f < module.imported ? f : module.imported + position[f - module.imported]);
  order.forEach((old, at) => {
    const a = module.bodies[old].calls.map((c) => c[2]);
    const b = check.bodies[at].calls.map((c) => c[2]);
    if (a.length !== b.length || !a.every((f, i) => moved(f) === b[i])) {
      throw new Error(`function ${old} calls other functions after reordering`);
    }
  });
  return { bytes: out, unknown, functions: order.length };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [modulePath, referencePath] = process.argv.slice(2);
  if (!modulePath || !referencePath) {
    console.error("usage: node wasm/order-functions.mjs <module.wasm> <reference.wasm>");
    process.exit(2);
  }
  const before = readFileSync(modulePath);
  const { bytes, unknown, functions } = orderFunctions(before, readFileSync(referencePath));
  writeFileSync(modulePath, bytes);
  console.log(`order-functions: ${functions} functions in link order ` +
              `(${unknown} not in the reference), names dropped: ${before.length} -> ${bytes.length} bytes`);
}
