// What wasm/order-functions.mjs (the last step of the shipped core's link,
// issue 13) does to a module: its functions move into the reference's order,
// the most-called first, every call, table slot and export still reaches the
// same function, and the names are dropped. Checked on small modules built
// here byte by byte, and on the shipped core.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { orderFunctions } from "../../wasm/order-functions.mjs";

function leb(n) {
  const out = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
}
function sleb(n) {
  const out = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && !(b & 0x40)) || (n === -1 && b & 0x40)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}
const str = (s) => [...leb(s.length), ...Buffer.from(s)];
const section = (id, bytes) => [id, ...leb(bytes.length), ...bytes];
const vec = (items) => [...leb(items.length), ...items.flat()];

// A module of one imported function ("env" "seven", () -> i32) and `bodies`
// (each the instructions of a () -> i32 function, without locals or end),
// all exported under their names, the first `table` of them in a table, and
// a name section.
function makeModule(names, bodies, table = 0, withNames = true) {
  const n = names.length;
  const bytes = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  bytes.push(...section(1, vec([[0x60, 0x00, 0x01, 0x7f]])));
  bytes.push(...section(2, vec([[...str("env"), ...str("seven"), 0x00, 0x00]])));
  bytes.push(...section(3, vec(names.map(() => [0x00]))));
  bytes.push(...section(4, vec([[0x70, 0x00, ...leb(Math.max(table, 1))]])));
  bytes.push(...section(7, vec(names.map((name, i) => [...str(name), 0x00, ...leb(i + 1)]))));
  if (table > 0) {
    bytes.push(...section(9, vec([[0x00, 0x41, 0x00, 0x0b, ...vec([...Array(table).keys()].map((i) => leb(i + 1)))]])));
  }
  bytes.push(...section(10, vec(bodies.map((body) => {
    const b = [0x00, ...body, 0x0b];
    return [...leb(b.length), ...b];
  }))));
  if (withNames) {
    const fnNames = vec([[...leb(0), ...str("seven")], ...names.map((name, i) => [...leb(i + 1), ...str(name)])]);
    bytes.push(...section(0, [...str("name"), 0x01, ...leb(fnNames.length), ...fnNames]));
  }
  return Buffer.from(bytes);
}

const call = (f) => [0x10, ...leb(f)];
const i32 = (v) => [0x41, ...sleb(v)];
const ADD = 0x6a;

// The defined functions of a module, as the value each leaf body returns
// (i32.const v) or null for a body that is not a leaf; and its custom
// sections' names.
function layout(buf) {
  let p = 8;
  const u32 = () => {
    let r = 0;
    let s = 0;
    let b;
    do {
      b = buf[p++];
      r += (b & 0x7f) * 2 ** s;
      s += 7;
    } while (b & 0x80);
    return r;
  };
  const leaves = [];
  const custom = [];
  while (p < buf.length) {
    const id = buf[p++];
    const size = u32();
    const end = p + size;
    if (id === 10) {
      const count = u32();
      for (let i = 0; i < count; i++) {
        const len = u32();
        leaves.push(leafValue(buf.subarray(p, p + len)));
        p += len;
      }
    } else if (id === 0) {
      const n = u32();
      custom.push(buf.toString("utf8", p, p + n));
    }
    p = end;
  }
  return { leaves, custom };
}
// The v of a body that is only `i32.const v` (no locals), else null.
function leafValue(body) {
  if (body.length < 4 || body[0] !== 0x00 || body[1] !== 0x41 || body[body.length - 1] !== 0x0b) return null;
  let v = 0;
  let shift = 0;
  let p = 2;
  let b;
  do {
    b = body[p++];
    v |= (b & 0x7f) << shift;
    shift += 7;
  } while (b & 0x80);
  if (shift < 32 && b & 0x40) v |= -1 << shift;
  return p === body.length - 1 ? v : null;
}

test("functions take the reference's order after the most-called ones, and every export, call and table slot still reaches the same function", () => {
  // 200 leaves leaf0..leaf199 (leaf i returns i), and four callers: twice
  // calls leaf5 and leaf9, thrice calls leaf5 three times, withImport adds
  // the import's 7 to leaf3, viaTable calls table slot 4. Table slots 0..9
  // hold leaf0..leaf9.
  const names = [];
  const bodies = [];
  for (let i = 0; i < 200; i++) {
    names.push(`leaf${i}`);
    bodies.push(i32(i));
  }
  names.push("twice", "thrice", "withImport", "viaTable");
  bodies.push([...call(1 + 5), ...call(1 + 9), ADD]);
  bodies.push([...call(1 + 5), ...call(1 + 5), ADD, ...call(1 + 5), ADD]);
  bodies.push([...call(0), ...call(1 + 3), ADD]);
  bodies.push([...i32(4), 0x11, 0x00, 0x00]);  // call_indirect through table slot 4
  const module = makeModule(names, bodies, 10);
  // The reference names the same functions in another order: the leaves
  // from leaf199 down to leaf0, then the callers.
  const refNames = [...names.slice(0, 200).reverse(), ...names.slice(200)];
  const reference = makeModule(refNames, refNames.map(() => i32(0)));

  const { bytes, unknown, functions } = orderFunctions(module, reference);
  assert.equal(unknown, 0);
  assert.equal(functions, 204);

  const imports = { env: { seven: () => 7 } };
  const before = new WebAssembly.Instance(new WebAssembly.Module(module), imports).exports;
  const after = new WebAssembly.Instance(new WebAssembly.Module(bytes), imports).exports;
  for (const name of names) assert.equal(after[name](), before[name](), `export ${name}`);
  assert.equal(after.twice(), 14);
  assert.equal(after.thrice(), 15);
  assert.equal(after.withImport(), 10);
  assert.equal(after.viaTable(), 4);

  const { leaves, custom } = layout(bytes);
  assert.deepEqual(custom, [], "the name section is dropped");
  // The called leaves first (leaf5: 4 calls, then leaf3 and leaf9: 1 each,
  // in their old order); the first 127 places (one-byte indices with one
  // import) go by calls, then old index; the rest as the reference has
  // them (leaves from leaf199 down, then the callers).
  const hot = 128 - 1;
  assert.deepEqual(leaves.slice(0, 3), [5, 3, 9]);
  const rest = leaves.slice(hot).filter((v) => v !== null);
  const expected = refNames.slice(0, 200).map((n) => Number(n.slice(4))).filter((v) => !leaves.slice(0, hot).includes(v));
  assert.deepEqual(rest, expected);
  assert.ok(rest.length > 50, "enough functions past the first places to see the reference's order");
});

test("a module without function names is refused, not reordered at random", () => {
  const named = makeModule(["a", "b"], [i32(1), call(1)]);
  const unnamed = makeModule(["a", "b"], [i32(1), call(1)], 0, false);
  assert.throws(() => orderFunctions(unnamed, named), /no function names/);
});

test("the shipped core carries no function names and validates", () => {
  const wasm = readFileSync(new URL("../../dist/onestore-core.wasm", import.meta.url));
  assert.ok(WebAssembly.validate(wasm));
  const { custom } = layout(wasm);
  assert.ok(!custom.includes("name"), `custom sections: ${custom.join(", ")}`);
});
