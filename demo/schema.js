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

/** A documents-style note: one row per note, every save a new revision. Owner "notes" → "notes/docs". */
export const Docs = defineTable("docs", {
  columns: { id: str(), title: str(), body: str(), rev: int({ default: 1 }), at: int() },
  key: ["id"],
});

export const STORE_NAME = "demo-session";
