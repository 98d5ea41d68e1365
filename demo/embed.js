// The demo's embedding: a small deterministic function, no model. Each
// lower-cased word (letters and digits; not a short or common one) is padded with spaces and cut into
// character trigrams; each trigram is hashed (FNV-1a) into one of DIMS
// buckets with a sign, and the vector is scaled to length 1. Texts that share
// words or word pieces ("tests", "test", "testing") point the same way, so
// `nearest` with cosine finds messages that talk about the same things. A real
// app would use a model's embeddings here; the store does not care.

export const DIMS = 96;

// Words too common to say what a message is about.
const STOP = new Set(["the", "and", "for", "you", "its", "it's", "into", "them", "their", "then", "with", "this", "that", "can", "let", "let's", "not", "are", "was", "were", "our", "own", "one", "all", "has", "have", "i'll", "i've"]);

function fnv1a(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * The embedding of `text`: a Float32Array of DIMS, length 1 (all zeros for
 * a text without letters or digits).
 *
 * @example
 * embed("move the tests")   // Float32Array(96) [...]
 */
export function embed(text) {
  const v = new Float32Array(DIMS);
  const words = String(text).toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  for (const w of words) {
    if (w.length < 3 || STOP.has(w)) continue;
    const padded = ` ${w} `;
    for (let i = 0; i + 3 <= padded.length; i++) {
      const h = fnv1a(padded.slice(i, i + 3));
      v[h % DIMS] += h & 0x80000000 ? -1 : 1;
    }
  }
  let norm = 0;
  for (let i = 0; i < DIMS; i++) norm += v[i] * v[i];
  if (norm > 0) {
    const s = 1 / Math.sqrt(norm);
    for (let i = 0; i < DIMS; i++) v[i] *= s;
  }
  return v;
}
