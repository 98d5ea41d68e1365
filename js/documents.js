// Documents: JSON values with an address inside an owner, kept by the core
// as a base plus deltas (src/documents/). The writes are ops of the owner's
// transaction (doc.create, doc.change, doc.retire; docs/formats.md); the
// reads (find, load, list, versions) are one core call each, of committed
// state.

import { invalidArgs, refuseUnknownOptions } from "./errors.js";
import { encodeJson, parseJsonExact } from "./encode.js";
import { plainData } from "./data.js";
import { describe } from "./schema.js";

/** The defaults of `checkpointWhen` (design.md "Documents"). */
export const DEFAULT_CHECKPOINT = Object.freeze({ deltas: 50, bytes: 64 * 1024 });

/**
 * Checks an owner's `checkpointWhen` option and fills in the defaults.
 *
 * @example
 * checkpointOf({ deltas: 10 }, "store.object(notes)")   // { deltas: 10, bytes: 65536 }
 */
export function checkpointOf(option, what) {
  if (option === undefined) return DEFAULT_CHECKPOINT;
  if (option === null || typeof option !== "object" || Array.isArray(option)) {
    throw invalidArgs(`${what}: checkpointWhen must be { deltas?, bytes? }, got ${describe(option)}`);
  }
  const out = { ...DEFAULT_CHECKPOINT };
  for (const [k, v] of Object.entries(option)) {
    if (k !== "deltas" && k !== "bytes") throw invalidArgs(`${what}: checkpointWhen has an unknown field ${JSON.stringify(k)} (deltas, bytes)`);
    if (v === undefined) continue;
    if (!Number.isSafeInteger(v) || v < 0) throw invalidArgs(`${what}: checkpointWhen.${k} must be an integer >= 0, got ${describe(v)}`);
    out[k] = v;
  }
  return Object.freeze(out);
}

function addressOf(address, what) {
  if (address === null || typeof address !== "object" || Array.isArray(address)) {
    throw invalidArgs(`${what}: the address must be { kind, key? }, got ${describe(address)}`);
  }
  const { kind, key, ...rest } = address;
  const extra = Object.keys(rest);
  if (extra.length) throw invalidArgs(`${what}: the address has an unknown field ${JSON.stringify(extra[0])} (kind, key)`);
  if (typeof kind !== "string") throw invalidArgs(`${what}: address.kind must be a string, got ${describe(kind)}`);
  if (key !== undefined && typeof key !== "string") throw invalidArgs(`${what}: address.key must be a string, got ${describe(key)}`);
  return key === undefined ? { kind } : { kind, key };
}

function idOf(id, what) {
  if (!Number.isSafeInteger(id) || id < 1) throw invalidArgs(`${what}: expected a document id (a positive integer), got ${describe(id)}`);
  return id;
}

function atOf(options, what) {
  if (options === undefined) return undefined;
  if (options === null || typeof options !== "object") throw invalidArgs(`${what}: options must be { at? }, got ${describe(options)}`);
  refuseUnknownOptions(options, ["at"], what);
  const { at } = options;
  if (at === undefined) return undefined;
  if (!Number.isSafeInteger(at) || at < 0) throw invalidArgs(`${what}: at must be a seq (a safe integer >= 0), got ${describe(at)}`);
  return at;
}

/**
 * The `tx.documents` of one transaction. `push(op, what)` adds a wire op to
 * the transaction; `mint()` gives a new document id.
 *
 * @example
 * const docs = txDocuments({ name: "notes", checkpoint, live, push, mint, refused });
 */
export function txDocuments({ name, checkpoint, live, push, mint, refused }) {
  return Object.freeze({
    /**
     * Creates a document at an address of this owner; resolves to its id.
     * A second live document at the address fails the commit (invalid/args).
     * @example const id = await tx.documents.create({ kind: "note", key: "n1" }, { title: "Plan" });
     */
    create(address, value) {
      const what = `${name}: tx.documents.create`;
      try {
        live(what);
        const addr = addressOf(address, what);
        if (value === undefined) throw invalidArgs(`${what}: a document needs a value (any JSON value), got undefined`);
        const data = plainData(value, `${what}: value`);
        const id = mint();
        push({ op: "doc.create", owner: name, id, ...addr, value: data }, what);
        return Promise.resolve(id);
      } catch (e) {
        return refused(e);
      }
    },
    /**
     * Changes a live document with an RFC 6902 JSON Patch. A patch that does
     * not apply fails the commit (invalid/args) and changes nothing.
     * @example await tx.documents.change(id, [{ op: "replace", path: "/title", value: "Plan v2" }]);
     */
    change(id, patch) {
      const what = `${name}: tx.documents.change`;
      try {
        live(what);
        idOf(id, what);
        if (!Array.isArray(patch)) throw invalidArgs(`${what}: the patch must be an array of JSON Patch ops (RFC 6902), got ${describe(patch)}`);
        push({ op: "doc.change", owner: name, id, patch: plainData(patch, `${what}: patch`), checkpointWhen: checkpoint }, what);
      } catch (e) {
        return refused(e);
      }
      return Promise.resolve();
    },
    /**
     * Retires a live document: its address is free again; its versions stay.
     * @example await tx.documents.retire(id);
     */
    retire(id) {
      const what = `${name}: tx.documents.retire`;
      try {
        live(what);
        idOf(id, what);
        push({ op: "doc.retire", owner: name, id }, what);
      } catch (e) {
        return refused(e);
      }
      return Promise.resolve();
    },
  });
}

/**
 * The `owner.documents` reads: committed state, one core call each.
 *
 * @example
 * const docs = ownerDocuments(gate, "notes");
 * const doc = await docs.find({ kind: "note", key: "n1" });
 */
export function ownerDocuments(gate, name) {
  function ask(what, request) {
    gate.checkOpen(what);
    const text = encodeJson({ owner: name, ...request }, what);
    return parseJsonExact(gate.call(what, () => gate.core.documents(text)));
  }
  return Object.freeze({
    /**
     * The live document at an address (at a past seq with `{ at }`):
     * { id, address, version, seq, value }, or undefined.
     * @example const doc = await notes.documents.find({ kind: "note", key: "n1" });
     */
    async find(address, options) {
      const what = `${name}.documents.find`;
      const addr = addressOf(address, what);
      return ask(what, { call: "find", address: addr, at: atOf(options, what) }) ?? undefined;
    },
    /**
     * A document by id, as it is now or as it was at seq `at`; undefined when
     * it did not exist or was retired then. not_found when the deltas that
     * version needs are no longer retained.
     * @example const old = await notes.documents.load(id, { at: 57 });
     */
    async load(id, options) {
      const what = `${name}.documents.load`;
      return ask(what, { call: "load", id: idOf(id, what), at: atOf(options, what) }) ?? undefined;
    },
    /**
     * One page of the owner's live documents, by kind then key: { rows, next? }.
     * @example const { rows, next } = await notes.documents.list({ kind: "note" }, 50, { after });
     */
    async list(filter, limit, options) {
      const what = `${name}.documents.list`;
      if (filter !== undefined && (filter === null || typeof filter !== "object" || Array.isArray(filter))) {
        throw invalidArgs(`${what}: the filter must be { kind? }, got ${describe(filter)}`);
      }
      if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000)) {
        throw invalidArgs(`${what}: limit must be an integer from 1 to 1000, got ${describe(limit)}`);
      }
      if (options !== undefined && (options === null || typeof options !== "object")) {
        throw invalidArgs(`${what}: the last argument must be { after? }, got ${describe(options)}`);
      }
      refuseUnknownOptions(options, ["after"], what);
      const after = options?.after;
      const page = ask(what, { call: "list", filter: filter ?? {}, limit: limit ?? 50, after });
      return page.next === undefined ? { rows: page.rows } : { rows: page.rows, next: page.next };
    },
    /**
     * Every version of a document: [{ version, seq, at, op, actor? }], oldest first.
     * @example const history = await notes.documents.versions(id);
     */
    async versions(id) {
      const what = `${name}.documents.versions`;
      return ask(what, { call: "versions", id: idOf(id, what) });
    },
  });
}
