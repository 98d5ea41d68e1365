// The demo session's tables, shared by the page (queries it sends over the
// link) and the worker (which owns the store).
import { defineTable, int, json, str } from "../js/browser.js";

/** The transcript: one row per message. Owner "agent" → table "agent/messages". */
export const Messages = defineTable("messages", {
  columns: { id: int(), role: str(), text: str(), at: int() },
  key: ["id"],
  indexes: { byAt: ["at"] },
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
