// Checking a revealed deal against the commitment sent before the race (docs/protocol.md
// 4.5): commitment == hex(SHA-256("<code>:<salt>")), as client/state.py checks. WebCrypto
// exists only in a secure context, and a race server at home is often plain http, so a
// short SHA-256 stands in there: a check that silently did not happen would be worse.

// SHA-256's constants (FIPS 180-4, 4.2.2 and 5.3.3): the first 32 bits of the fractional
// parts of the cube roots of the first 64 primes (K) and the square roots of the first 8 (H),
// computed rather than listed. Doubles give them to about 2^-16 of the last bit and none
// lies within 0.005 of that bit's boundary, so every engine gets the same words.
const PRIMES = [];
for (let n = 2; PRIMES.length < 64; n++) if (PRIMES.every((p) => n % p)) PRIMES.push(n);
const frac32 = (x) => ((x - Math.floor(x)) * 2 ** 32) >>> 0;
const K = Uint32Array.from(PRIMES, (p) => frac32(Math.cbrt(p)));

/** SHA-256 of `bytes` in plain JavaScript (for pages WebCrypto is not given to). */
export function sha256(bytes) {
  const n = Math.ceil((bytes.length + 9) / 64) * 64;
  const data = new Uint8Array(n);
  data.set(bytes);
  data[bytes.length] = 0x80;
  const view = new DataView(data.buffer);
  view.setUint32(n - 4, bytes.length * 8);
  view.setUint32(n - 8, Math.floor(bytes.length / 0x20000000));
  const h = Uint32Array.from(PRIMES.slice(0, 8), (p) => frac32(Math.sqrt(p)));
  const w = new Uint32Array(64);
  const rot = (x, r) => (x >>> r) | (x << (32 - r));
  for (let off = 0; off < n; off += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(off + i * 4);
    for (let i = 16; i < 64; i++) {
      const s0 = rot(w[i - 15], 7) ^ rot(w[i - 15], 18) ^ (w[i - 15] >>> 3);
      const s1 = rot(w[i - 2], 17) ^ rot(w[i - 2], 19) ^ (w[i - 2] >>> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    let [a, b, c, d, e, f, g, k] = h;
    for (let i = 0; i < 64; i++) {
      const t1 = k + (rot(e, 6) ^ rot(e, 11) ^ rot(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
      const t2 = (rot(a, 2) ^ rot(a, 13) ^ rot(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      [k, g, f, e, d, c, b, a] = [g, f, e, (d + t1) >>> 0, c, b, a, (t1 + t2) >>> 0];
    }
    [a, b, c, d, e, f, g, k].forEach((x, i) => {
      h[i] = (h[i] + x) >>> 0;
    });
  }
  return Uint8Array.from([...h].flatMap((x) => [x >>> 24, (x >>> 16) & 255, (x >>> 8) & 255, x & 255]));
}

const hex = (bytes) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");

/** SHA-256 of `bytes`, by WebCrypto where the page has it. */
export async function digest(bytes) {
  if (!globalThis.crypto?.subtle) return sha256(bytes);
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
}

/** hex(SHA-256(text)). */
export const sha256Hex = async (text) => hex(await digest(new TextEncoder().encode(text)));

/**
 * The check for the results: {text, good}, or null when nothing was committed to (a deal
 * its host chose by code) or the code is still secret (a daily deal, until the next day).
 */
export async function checkDeal(commitment, code, salt) {
  if (!commitment || !code) return null;
  if (!salt || (await sha256Hex(`${code}:${salt}`)) !== commitment) {
    return { text: "the revealed deal does NOT match the commitment sent before the start", good: false };
  }
  return { text: "deal checked: the one committed to before the start (SHA-256)", good: true };
}
