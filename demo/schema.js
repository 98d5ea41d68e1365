// The demo session's tables, shared by the page (queries it sends over the
// link) and the worker (which owns the store).
import { defineTable, int, json, str, vector } from "../js/browser.js";
import { DIMS } from "./embed.js";

/**
 * The transcript: one row per message. Owner "agent" → table "agent/messages".
 * Version 2 added each message's embedding (demo/embed.js), for the search
 * box; a store from before gets it with the migration, and the worker fills
 * it in for the messages written before.
 */
export const Messages = defineTable("messages", {
  version: 2,
  columns: { id: int(), role: str(), text: str(), at: int(), embedding: vector(DIMS).optional() },
  key: ["id"],
  indexes: { byAt: ["at"] },
  migrations: { 2: { alter: { add: { embedding: vector(DIMS).optional() } } } },
});

/** The file-history plugin's edits. Owner "file-history" → "file-history/edits". */
export const Edits = defineTable("edits", {
  columns: { id: str(), path: str(), entry: int(), at: int(), meta: json() },
  key: ["id"],
  indexes: { byPath: ["path", "at"], byEntry: ["entry"] },
});

/** The session note: a document of owner "notes" at this address; every save is a version. */
export const NOTE = Object.freeze({ owner: "notes", kind: "note", key: "session" });

export const STORE_NAME = "demo-session";
