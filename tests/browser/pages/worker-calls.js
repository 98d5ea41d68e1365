// The page side of the test pages' workers (archive.html, bad-input.html,
// diff.html, kill.html, opfs.html): a page runs one module Worker and the
// test drives it through window.call(op, args), which posts { id, op, args }
// and resolves to the worker's answer { ok, value } or { ok: false, error:
// { code, name, message } }. A message with `event` is no answer: it goes to
// onEvent. A worker that fails answers every waiting call with a
// WorkerError. Not a test itself.

/**
 * Starts the Worker of module `url` and sets window.call to drive it;
 * returns `{ restart(), terminate() }`: restart ends the worker without a
 * word to the waiting calls (as a crash would leave them) and starts a new
 * one; terminate answers them with a Terminated error first.
 *
 * @example
 * const worker = driveWorker(new URL("./opfs-worker.js", import.meta.url), { onEvent: (m) => events.push(m) });
 */
export function driveWorker(url, { onEvent } = {}) {
  let worker;
  let next = 1;
  const waiting = new Map();
  const answerAll = (error) => {
    for (const ok of waiting.values()) ok({ ok: false, error });
    waiting.clear();
  };
  function start() {
    worker = new Worker(url, { type: "module" });
    worker.onmessage = (e) => {
      const m = e.data;
      if (m.event) {
        onEvent?.(m);
        return;
      }
      const ok = waiting.get(m.id);
      waiting.delete(m.id);
      ok?.(m);
    };
    worker.onerror = (e) => answerAll({ name: "WorkerError", message: e.message });
  }
  window.call = (op, args = {}) => new Promise((ok) => {
    const id = next++;
    waiting.set(id, ok);
    worker.postMessage({ id, op, args });
  });
  start();
  return {
    restart() {
      worker.terminate();
      start();
    },
    terminate() {
      worker.terminate();
      answerAll({ name: "Terminated", message: "the worker was terminated" });
      start();
    },
  };
}
