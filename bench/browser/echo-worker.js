// The floor of workload 16 (bench/link-figures.mjs): a dedicated Worker that
// answers each message with the same message, so a round trip to it is what
// the browser's messaging and scheduling cost alone, paced as link.html
// paces its writes. For the OPFS `full` shapes it also writes and flushes
// `bytes` to an OPFS file of its own before each answer, appended as a WAL
// grows (a one-put commit appends about four pages to the store's WAL and
// flushes it once): the floor of a durable write through a worker.
let file = null;  // { root, name, handle, buf, at }
const WRAP = 4 << 20;  // start the file over every 4 MiB, as a checkpointed WAL does

self.onmessage = async (e) => {
  const m = e.data;
  if (m.open !== undefined) {
    const root = await navigator.storage.getDirectory();
    const handle = await (await root.getFileHandle(m.open, { create: true })).createSyncAccessHandle();
    file = { root, name: m.open, handle, buf: new Uint8Array(m.bytes).fill(7), at: 0 };
    self.postMessage({ opened: true });
    return;
  }
  if (m.close !== undefined) {
    if (file !== null) {
      file.handle.close();
      await file.root.removeEntry(file.name);
      file = null;
    }
    self.postMessage({ closed: true });
    return;
  }
  if (file !== null) {
    file.handle.write(file.buf, { at: file.at });
    file.handle.flush();
    file.at = file.at + file.buf.length >= WRAP ? 0 : file.at + file.buf.length;
  }
  self.postMessage(m);
};
