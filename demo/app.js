// The demo page: linked to the session store that lives in a dedicated
// Worker (store-worker.js). Everything on screen comes over the link: the
// transcript is a held table, the head seq, the outbox, the folders and the
// note are held derives, and each commit arrives as one message carrying all
// of them. Writes are calls to the worker's methods.
import { connect, query } from "../js/browser.js";
import { Messages, NOTE, STORE_NAME } from "./schema.js";

const $ = (id) => document.getElementById(id);
const PAGE = 6;

// A short name for this tab, kept across reloads of the same tab.
const tab = sessionStorage.getItem("onestore-demo-tab") ?? (() => {
  const t = Math.random().toString(16).slice(2, 6).toUpperCase();
  sessionStorage.setItem("onestore-demo-tab", t);
  return t;
})();

const state = {
  mode: null,
  fenced: false,
  messages: [],
  paging: { under: "", cursors: [undefined], index: 0, next: undefined },
  noteDirty: false,
  // The note document: its latest record, its versions, and the version
  // shown (-1: the latest, editable; else an index into versions, read-only).
  note: { latest: null, versions: [], index: -1 },
  lastOutboxSeq: 0,
  outbox: { records: [], owner: "", actor: "", owners: new Set(), actors: new Set() },
};

// ---- the worker and the link ----

// ?device=<name> gives this page a store of its own ("another device" in the
// same browser profile); ?continue=<relay>/sessions/<id> pulls that session
// from the relay into it first (see "Continue on another device" below).
const pageParams = new URL(location.href).searchParams;
const device = pageParams.get("device");
const storeName = device ? `${STORE_NAME}-${device}` : STORE_NAME;
const workerParams = new URLSearchParams({ tab, store: storeName });
if (device) workerParams.set("device", device);
if (pageParams.get("continue")) workerParams.set("continue", pageParams.get("continue"));
const worker = new Worker(new URL(`./store-worker.js?${workerParams}`, import.meta.url), { type: "module" });
const link = connect(worker);
const channel = "BroadcastChannel" in self ? new BroadcastChannel(`onestore-demo:${storeName}`) : null;

worker.addEventListener("message", (e) => {
  const m = e.data;
  if (!m?.demo) return;
  if (m.t === "ready") onReady(m);
  else if (m.t === "fenced") onFenced(m);
  else if (m.t === "progress") onArchiveProgress(m);
  else if (m.t === "sync") onSync(m);
  else if (m.t === "error") showBanner(`The store could not open: ${m.code ? `${m.code}: ` : ""}${m.message}`, "fenced");
});
worker.addEventListener("error", (e) => showBanner(`The store's worker failed: ${e.message}`, "fenced"));

channel?.addEventListener("message", (e) => {
  const m = e.data;
  if (m?.t === "owner" && m.tab !== tab && state.mode === "opfs") setOwner(m.tab, false);
});

function onReady(m) {
  state.mode = m.mode;
  document.title = `Session ${m.id.slice(0, 8)} · onestore demo`;
  $("session-title").textContent = `Agent session ${m.id.slice(0, 8)}`;
  const storage = $("storage-chip");
  if (m.mode === "opfs") {
    $("storage").textContent = "OPFS · persisted";
    storage.classList.add("persisted");
    setOwner(tab, true);
    channel?.postMessage({ t: "owner", tab });
  } else {
    $("storage").textContent = "Memory · not persisted";
    storage.classList.add("volatile");
    $("owner").textContent = `This tab (${tab})`;
    showBanner("This browser build has no OPFS backend, so the session lives in memory: a reload starts it again, and each tab has its own copy.", "warn");
  }
  if (m.pulled) {
    // The session is in this device's store now: a reload opens it again
    // rather than pulling.
    const here = new URL(location.href);
    here.searchParams.delete("continue");
    history.replaceState(null, "", here);
    toast(`Pulled session ${m.id.slice(0, 8)} from the relay at seq ${m.head}: this device drives it now`);
  }
  state.sessionId = m.id;
  start();
  watchRelay(m.id);
}

// ---- the relay: its head for this session beside the store's ----
//
// The relay's URL comes from ?relay=<url> or /demo/relay.json: `npm start`
// answers it with its local relay (examples/relay/ in workerd); the file in
// demo/ says there is none.
// The page reads GET <relay>/sessions/<id> (docs/formats.md, "The relay
// protocol"); the store's worker drives the sync when the package has
// startSync.

async function relayUrl() {
  const given = new URL(location.href).searchParams.get("relay");
  if (given) return given.endsWith("/") ? given : `${given}/`;
  try {
    const res = await fetch("./relay.json", { cache: "no-store" });
    if (res.ok) return (await res.json()).relay ?? null;
  } catch { /* no relay configured */ }
  return null;
}

async function watchRelay(id) {
  const chip = $("relay-chip");
  const value = $("relay-head");
  const relay = await relayUrl();
  if (!relay) {
    chip.classList.add("offline");
    chip.title = "No relay: `npm start` runs a local one beside this page (or open the page with ?relay=<url>)";
    return;
  }
  const session = `${relay}sessions/${id}`;
  link.call("startSync", { relay: session }).then((r) => {
    state.syncing = r.started;
    if (!r.started) chip.title = `${session}: ${r.reason}`;
    else offerContinue(relay, session);
  }, (e) => toast(e));
  const show = async () => {
    // Split off, this store is a session of its own that no relay holds:
    // the old session's head on the relay says nothing of it.
    if (state.splitOff) {
      value.textContent = "split off";
      chip.classList.add("offline");
      chip.classList.remove("synced", "behind");
      chip.title = `${session}: this store split off into a session of its own, which does not sync`;
      return;
    }
    try {
      const res = await fetch(session, { cache: "no-store" });
      const info = await res.json();
      if (!res.ok) throw new Error(info.error?.message ?? res.statusText);
      value.textContent = String(info.head);
      const head = Number($("head").textContent);
      chip.classList.toggle("synced", info.head === head);
      chip.classList.toggle("behind", info.head !== head);
      chip.classList.remove("offline");
      chip.title = `${session}\nlease epoch ${info.epoch}, driver ${info.driver ?? "none"}`;
      chip.dataset.epoch = String(info.epoch);
    } catch (e) {
      value.textContent = "offline";
      chip.classList.add("offline");
      chip.classList.remove("synced", "behind");
      chip.title = `${session}: ${e.message}`;
    }
  };
  await show();
  setInterval(show, 2000);
}

// ---- the sync panel: the driver's state, the relay's acked seq, the head ----
//
// "Continue on another device" gives a link to this page with
// ?continue=<the session's URL on the relay>&device=<a new name>: opened in
// another browser (or profile), its worker pulls the session with
// pullSession into its own OPFS store and drives it with startSync. The
// relay fences this page's driver then, and this store splits off: sync
// "lost", a new session id, its origin (the session and the last seq both
// share) in store.origin. It goes on working as a separate session.

function onSync(m) {
  const lost = m.state === "lost";
  $("sync-state").textContent = lost ? "split off" : m.state;
  $("sync-acked").textContent = m.state === "off" ? "–" : String(m.acked);
  $("sync-head").textContent = String(m.head);
  $("sync-session").textContent = m.id;
  $("sync-session").title = m.session ? `driving ${m.session}` : "";
  $("s-title").closest(".sync").classList.toggle("lost", lost);
  if (!lost || state.splitOff) return;
  state.splitOff = true;
  const from = m.origin;
  $("sync-origin").textContent = `Split off session ${from.id} at seq ${from.seq}: another device continues that session.`;
  $("continue").disabled = true;
  $("continue-box").classList.add("hidden");  // the link names the session another device drives now
  $("session-title").textContent = `Agent session ${m.id.slice(0, 8)}`;
  document.title = `Session ${m.id.slice(0, 8)} · onestore demo`;
  showBanner(`Another device took session ${from.id.slice(0, 8)} over at seq ${from.seq}. This copy is now its own session ${m.id.slice(0, 8)}: nothing here was lost, and it no longer syncs.`, "warn");
}

function offerContinue(relay, session) {
  const button = $("continue");
  button.disabled = false;
  button.onclick = () => {
    const url = new URL("./", location.href);
    url.searchParams.set("device", Math.random().toString(16).slice(2, 6));
    url.searchParams.set("continue", session);
    if (pageParams.get("relay")) url.searchParams.set("relay", relay);
    const a = $("continue-link");
    a.href = url.href;
    a.textContent = url.href;
    $("continue-box").classList.remove("hidden");
    navigator.clipboard?.writeText(url.href).then(() => toast("Link copied: open it in another browser or profile"), () => {});
  };
}

function onFenced(m) {
  state.fenced = true;
  document.body.classList.add("fenced");
  for (const el of document.querySelectorAll("form :is(input, select, textarea, button)")) el.disabled = true;
  $("owner-chip").classList.add("fenced");
  if ($("owner").textContent.startsWith("This tab")) $("owner").textContent = "Another tab";
  showBanner(`Another tab opened this session and took the store over at seq ${m.head}. This tab is read-only now.`, "fenced", {
    label: "Take it back",
    run: () => location.reload(),
  });
}

function setOwner(who, mine) {
  $("owner").textContent = mine ? `This tab (${who})` : `Tab ${who}`;
  $("owner-chip").classList.toggle("fenced", !mine);
}

// ---- holds: everything live ----

function start() {
  link.hold("agent/messages", query(Messages).orderBy((m) => m.at), (e) => {
    if (e.error) return toast(e.error);
    if (e.rows) state.messages = e.rows;
    const fresh = new Set();
    for (const op of e.ops ?? []) {
      if (op.op === "put") {
        const i = state.messages.findIndex((r) => r.id === op.row.id);
        if (i >= 0) state.messages[i] = op.row;
        else state.messages.push(op.row);
        fresh.add(op.row.id);
      } else if (op.op === "delete" && op.key) {
        state.messages = state.messages.filter((r) => r.id !== op.key[0]);
      }
    }
    renderMessages(fresh);
  });
  link.hold("stats", (e) => {
    if (e.error) return toast(e.error);
    const head = $("head");
    if (head.textContent !== String(e.value.head)) {
      head.textContent = e.value.head;
      $("head").parentElement.classList.remove("flash");
      void head.offsetWidth;
      head.parentElement.classList.add("flash");
    }
    $("sync-head").textContent = String(e.value.head);
    $("msg-count").textContent = `${e.value.messages} messages`;
    $("edit-count").textContent = `${e.value.edits} edits · table file-history/edits`;
  });
  link.hold("outbox", (e) => (e.error ? toast(e.error) : onOutbox(e.value)));
  link.hold("folders", (e) => (e.error ? toast(e.error) : renderFolders(e.value)));
  // The note is a document: its value and version now and after each change.
  link.hold({ document: NOTE }, (e) => (e.error ? toast(e.error) : onNote(e.document)));
  link.call("outboxFilters").then(({ owners, actors }) => addFilterOptions(owners, actors), toast);
  // The edits table itself: any commit that touches it reloads the page shown.
  link.hold("file-history/edits", (e) => {
    if (e.ops) loadPage(0, true);
  });
  loadPage(0);
}

// ---- transcript ----

const roleName = { user: "You", assistant: "Assistant", tool: "Tool" };
const time = (ms) => new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });

function renderMessages(fresh = new Set()) {
  const list = $("messages");
  list.replaceChildren(...state.messages.map((m) => {
    const li = document.createElement("li");
    li.className = `msg ${m.role}${fresh.has(m.id) ? " new" : ""}`;
    const who = document.createElement("span");
    who.className = "who";
    who.textContent = `${roleName[m.role] ?? m.role} · ${time(m.at)}`;
    const bubble = document.createElement("div");
    bubble.className = "bubble";
    bubble.textContent = m.text;
    li.append(who, bubble);
    return li;
  }));
  list.scrollTop = list.scrollHeight;
}

$("composer").addEventListener("submit", async (e) => {
  e.preventDefault();
  const text = $("text").value.trim();
  if (!text) return;
  $("send").disabled = true;
  try {
    await link.call("addMessage", { role: $("role").value, text }, { actor: { kind: "person", id: `tab-${tab}` } });
    $("text").value = "";
  } catch (err) {
    toast(err);
  } finally {
    $("send").disabled = state.fenced;
    $("text").focus();
  }
});

// ---- search by meaning: nearest over the messages' embeddings ----

$("search").addEventListener("submit", async (e) => {
  e.preventDefault();
  const text = $("search-text").value.trim();
  if (!text) return;
  try {
    const hits = await link.call("searchMessages", { text, k: 3 });
    $("hits").replaceChildren(...hits.map((h) => {
      const li = document.createElement("li");
      li.className = `hit ${h.role}`;
      const d = document.createElement("span");
      d.className = "distance";
      d.textContent = h.distance.toFixed(3);
      d.title = "cosine distance: 0 is the same direction";
      const t = document.createElement("span");
      t.className = "hit-text";
      t.textContent = `${roleName[h.role] ?? h.role}: ${h.text}`;
      li.append(d, t);
      return li;
    }));
  } catch (err) {
    toast(err);
  }
});

// ---- file history: a query paged with cursors ----

async function loadPage(index, keepPosition = false) {
  const p = state.paging;
  if (keepPosition) { p.cursors = [undefined]; index = 0; }  // a rename moves rows: start again
  try {
    const page = await link.call("pageEdits", { under: p.under, after: p.cursors[index], limit: PAGE });
    p.index = index;
    p.next = page.next;
    if (page.next) p.cursors[index + 1] = page.next;
    renderEdits(page, keepPosition);
  } catch (err) {
    toast(err);
  }
}

function renderEdits(page, changed) {
  const body = $("edits");
  if (page.rows.length === 0) {
    body.innerHTML = `<tr><td colspan="4" class="empty">No edit under this prefix.</td></tr>`;
  } else {
    body.replaceChildren(...page.rows.map((r) => {
      const tr = document.createElement("tr");
      if (changed) tr.className = "changed";
      const cut = r.path.lastIndexOf("/") + 1;
      const path = document.createElement("td");
      path.className = "path";
      const dir = document.createElement("span");
      dir.className = "dir";
      dir.textContent = r.path.slice(0, cut);
      path.append(dir, r.path.slice(cut));
      const tool = document.createElement("td");
      const tag = document.createElement("span");
      tag.className = `tag ${r.meta?.tool === "write_file" ? "write" : ""}`;
      tag.textContent = r.meta?.tool ?? "edit";
      tool.append(tag);
      const entry = document.createElement("td");
      entry.className = "num";
      entry.textContent = `#${r.entry}`;
      const at = document.createElement("td");
      at.className = "num";
      at.textContent = time(r.at);
      tr.append(path, tool, entry, at);
      return tr;
    }));
  }
  const p = state.paging;
  const first = p.index * PAGE + 1;
  $("page-info").textContent = page.total === 0 ? "0 rows" : `Page ${p.index + 1} · rows ${first}–${first + page.rows.length - 1} of ${page.total}`;
  $("newer").disabled = p.index === 0;
  $("older").disabled = !page.next;
  $("cursor").textContent = p.cursors[p.index] ?? "(first page)";
}

$("older").addEventListener("click", () => loadPage(state.paging.index + 1));
$("newer").addEventListener("click", () => loadPage(Math.max(0, state.paging.index - 1)));
let filterTimer;
$("under").addEventListener("input", () => {
  clearTimeout(filterTimer);
  filterTimer = setTimeout(() => {
    state.paging = { under: $("under").value, cursors: [undefined], index: 0, next: undefined };
    loadPage(0);
  }, 200);
});

function renderFolders(folders) {
  const select = $("rename-from");
  const current = select.value;
  select.replaceChildren(...folders.map((f) => {
    const o = document.createElement("option");
    o.value = f.path;
    o.textContent = `${f.path}  (${f.files})`;
    return o;
  }));
  const keep = folders.find((f) => f.path === current) ?? folders.find((f) => f.path === state.renamedTo)
    ?? folders.find((f) => f.path === "src/panels/settings/") ?? folders.find((f) => f.path.split("/").length > 2) ?? folders[0];
  if (keep) select.value = keep.path;
  suggestTarget();
}

function suggestTarget() {
  const from = $("rename-from").value;
  if (!from || $("rename-to").dataset.touched) return;
  $("rename-to").value = from === "src/panels/settings/" ? "src/components/settings/" : from;
}
$("rename-from").addEventListener("change", () => { delete $("rename-to").dataset.touched; suggestTarget(); });
$("rename-to").addEventListener("input", () => { $("rename-to").dataset.touched = "1"; });

$("rename").addEventListener("submit", async (e) => {
  e.preventDefault();
  const from = $("rename-from").value;
  let to = $("rename-to").value.trim();
  if (!to) return;
  if (!to.endsWith("/")) to += "/";
  $("rename-go").disabled = true;
  state.renamedTo = to;  // the folder list arrives with the commit, before the call's answer
  try {
    const { count, seq } = await link.call("renameFolder", { from, to }, { actor: { kind: "person", id: `tab-${tab}` } });
    delete $("rename-to").dataset.touched;
    $("rename-from").value = to;
    suggestTarget();
    toast(`Renamed ${count} ${count === 1 ? "edit" : "edits"} from ${from} to ${to}: one updateWhere, one outbox op (seq ${seq})`);
  } catch (err) {
    toast(err);
  } finally {
    $("rename-go").disabled = state.fenced;
  }
});

// ---- the note: a document with its version history ----

async function onNote(doc) {
  const n = state.note;
  n.latest = doc ?? null;
  try {
    n.versions = await link.call("noteVersions");
  } catch (err) {
    toast(err);
  }
  if (n.index === -1) showLatest();
  else renderNoteHistory();
}

function showLatest() {
  const n = state.note;
  n.index = -1;
  $("n-title").closest(".note").classList.remove("past");
  for (const id of ["note-title", "note-body"]) $(id).readOnly = false;
  $("note-save").textContent = "Save version";
  const doc = n.latest;
  if (doc && !state.noteDirty) {  // never overwrite what the user is typing
    $("note-title").value = doc.value?.title ?? "";
    $("note-body").value = doc.value?.body ?? "";
  }
  renderNoteHistory();
}

function renderNoteHistory() {
  const n = state.note;
  const count = n.versions.length;
  const shown = n.index === -1 ? count - 1 : n.index;
  const v = n.versions[shown];
  $("note-meta").textContent = v ? `version ${v.version} · ${time(v.at)}` : "";
  $("note-version").textContent = !v ? "no versions yet"
    : n.index === -1 ? `version ${v.version} of ${count} (latest)`
      : `version ${v.version} of ${count} · seq ${v.seq}${v.actor ? ` · ${v.actor.id}` : ""}`;
  $("note-older").disabled = shown <= 0 || state.fenced;
  $("note-newer").disabled = n.index === -1;
}

// Steps to version index `i` (oldest 0): documents.load at its seq.
async function showVersion(i) {
  const n = state.note;
  if (i >= n.versions.length - 1) return showLatest();
  try {
    const doc = await link.call("noteAt", { seq: n.versions[i].seq });
    n.index = i;
    $("n-title").closest(".note").classList.add("past");
    for (const id of ["note-title", "note-body"]) $(id).readOnly = true;
    $("note-title").value = doc?.value?.title ?? "";
    $("note-body").value = doc?.value?.body ?? "";
    $("note-save").textContent = "Restore this version";
    renderNoteHistory();
  } catch (err) {
    toast(err);
  }
}

$("note-older").addEventListener("click", () => {
  const n = state.note;
  showVersion((n.index === -1 ? n.versions.length - 1 : n.index) - 1);
});
$("note-newer").addEventListener("click", () => showVersion(state.note.index + 1));

for (const id of ["note-title", "note-body"]) {
  $(id).addEventListener("input", () => {
    state.noteDirty = true;
    $("note-state").textContent = "Unsaved changes";
    $("note-state").classList.add("dirty");
  });
}
$("note-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  try {
    // A past version shown is saved as a new version: the history is kept.
    await link.call("saveNote", { title: $("note-title").value, body: $("note-body").value }, { actor: { kind: "person", id: `tab-${tab}` } });
    state.noteDirty = false;
    $("note-state").textContent = "Saved";
    $("note-state").classList.remove("dirty");
    if (state.note.index !== -1) showLatest();
  } catch (err) {
    toast(err);
  }
});

// ---- outbox ----

// Each commit brings the newest records; with a filter, the page asks the
// worker's store.log for the newest matching ones instead.
async function onOutbox(records) {
  const o = state.outbox;
  o.records = records;
  addFilterOptions(records.map((r) => r.owner), records.map((r) => r.actor).filter(Boolean));
  await showOutbox();
}

async function showOutbox() {
  const o = state.outbox;
  if (!o.owner && !o.actor) {
    $("outbox-showing").textContent = "";
    return renderOutbox(o.records);
  }
  try {
    const records = await link.call("outboxLog", { owner: o.owner || undefined, actor: o.actor || undefined });
    $("outbox-showing").textContent = `store.log · ${records.length} shown`;
    renderOutbox(records);
  } catch (err) {
    toast(err);
  }
}

function addFilterOptions(owners, actors) {
  const o = state.outbox;
  const fill = (select, set, values) => {
    let added = false;
    for (const v of values) if (!set.has(v)) { set.add(v); added = true; }
    if (!added) return;
    const current = select.value;
    const first = select.options[0].cloneNode(true);
    select.replaceChildren(first, ...[...set].sort().map((v) => Object.assign(document.createElement("option"), { value: v, textContent: v })));
    select.value = current;
  };
  fill($("outbox-owner"), o.owners, owners);
  fill($("outbox-actor"), o.actors, actors);
}

for (const [id, key] of [["outbox-owner", "owner"], ["outbox-actor", "actor"]]) {
  $(id).addEventListener("change", () => {
    state.outbox[key] = $(id).value;
    state.lastOutboxSeq = 0;
    showOutbox();
  });
}

function renderOutbox(records) {
  const prev = state.lastOutboxSeq;
  state.lastOutboxSeq = records[0]?.seq ?? prev;
  $("records").replaceChildren(...records.map((r) => {
    const li = document.createElement("li");
    li.className = `record${prev && r.seq > prev ? " new" : ""}`;
    const seq = document.createElement("span");
    seq.className = "seq";
    seq.textContent = `#${r.seq}`;
    const what = document.createElement("div");
    what.className = "what";
    const owner = document.createElement("div");
    owner.innerHTML = `<span class="owner"></span> <span class="actor"></span> <span class="muted"></span>`;
    owner.querySelector(".owner").textContent = r.owner;
    owner.querySelector(".actor").textContent = r.actor ? `· ${r.actor}` : "";
    owner.querySelector(".muted").textContent = `· ${time(r.at)}`;
    const ops = document.createElement("div");
    ops.className = "ops";
    ops.textContent = summarize(r.ops);
    ops.title = ops.textContent;
    what.append(owner, ops);
    const bytes = document.createElement("span");
    bytes.className = "bytes";
    bytes.innerHTML = `<strong></strong> B`;
    bytes.firstChild.textContent = r.bytes.toLocaleString();
    li.append(seq, what, bytes);
    return li;
  }));
}

function summarize(ops) {
  const groups = new Map();
  for (const o of ops) {
    const k = `${o.op}${o.bulk ? " where" : ""} ${o.table}`;
    const g = groups.get(k) ?? { n: 0, rows: 0, bulk: o.bulk };
    g.n++;
    g.rows += o.count ?? 0;
    groups.set(k, g);
  }
  return [...groups].map(([k, g]) => (g.bulk ? `${k} (${g.rows} rows)` : g.n > 1 ? `${g.n}× ${k}` : k)).join(" · ");
}

// ---- banner and toasts ----

function showBanner(text, kind, action) {
  const b = $("banner");
  b.className = `banner ${kind}`;
  b.replaceChildren(Object.assign(document.createElement("span"), { textContent: text }));
  if (action) {
    const button = Object.assign(document.createElement("button"), { type: "button", textContent: action.label });
    button.disabled = false;
    button.addEventListener("click", action.run);
    b.append(button);
  }
}

let toastTimer;
function toast(what) {
  const t = $("toast");
  const isError = what instanceof Error;
  t.textContent = isError ? `${what.code ?? what.name}: ${what.message}` : what;
  t.className = `toast${isError ? " error" : ""}`;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => t.classList.add("hidden"), isError ? 6000 : 3500);
}

// ---- archive: export and import, with a progress bar ----

function onArchiveProgress({ kind, done, total, bytes }) {
  (window.archiveProgress ??= []).push({ kind, done, total });  // what the bar showed, for tests
  const bar = $("archive-progress");
  bar.max = Math.max(total, 1);
  bar.value = done;
  $("archive-state").textContent = `${kind === "export" ? "Exporting" : "Importing"} · ${done} of ${total} rows, records and blobs · ${(bytes / 1024).toFixed(0)} KiB`;
}

let lastArchive = null;

$("export").addEventListener("click", async () => {
  $("export").disabled = true;
  try {
    const { bytes, head } = await link.call("exportArchive", {});
    lastArchive = bytes;
    const a = $("download");
    if (a.href) URL.revokeObjectURL(a.href);
    a.href = URL.createObjectURL(new Blob([bytes], { type: "application/x-tar" }));
    a.classList.remove("hidden");
    $("archive-state").textContent = `Exported at seq ${head} · ${(bytes.length / 1024).toFixed(0)} KiB`;
  } catch (e) {
    toast(e.message);
  } finally {
    $("export").disabled = false;
  }
});

async function importBytes(bytes) {
  const r = await link.call("importArchive", { bytes });
  $("archive-state").textContent = `Imported into ${r.where} at seq ${r.head} · ${r.same ? "same content as this session" : "other content"} (${r.fingerprint})`;
  return r;
}

$("import-file").addEventListener("change", async (e) => {
  const file = e.target.files?.[0];
  if (!file) return;
  try {
    await importBytes(new Uint8Array(await file.arrayBuffer()));
  } catch (err) {
    toast(`${err.code ?? "error"}: ${err.message}`);
  } finally {
    e.target.value = "";
  }
});

// For tests and the console: import the last export again.
window.importLastExport = () => importBytes(lastArchive);
