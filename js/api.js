// Everything of the public API that does not depend on the runtime. Each
// runtime's entry (js/index.js for Node) adds `openStore` bound to its loader.

export { defineTable, str, int, bool, num, json, vector } from "./schema.js";
export { query, eq, ne, lt, lte, gt, gte, inArray, isNull, prefix, and, or, not } from "./query.js";
export { value, col, add, sub, max, min, concat, replacePrefix, coalesce, when } from "./expr.js";
export { compareText } from "./text.js";
export { defineEdges } from "./edges.js";
export { StoreError, ErrorCodes } from "./errors.js";
export { serve, connect } from "./link.js";
export { MAX_BLOB_BYTES } from "./blobs.js";
