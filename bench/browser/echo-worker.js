// The floor of workload 16 (bench/link-figures.mjs): a dedicated Worker that
// answers each message with the same message and does nothing else, so a
// round trip to it is what the browser's messaging and scheduling cost
// alone, paced as link.html paces its writes.
self.onmessage = (e) => self.postMessage(e.data);
