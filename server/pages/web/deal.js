// The deal of a game code (docs/rules.md section 2), for replays only (a replay_page gives
// the code and the actions; the browser has no engine): a 7-letter code is a deal number
// shuffled by SplitMix64, a 26-character one a seed shuffled by SHA-256 in counter mode.
// tests/web/test_deal_js.py checks it against protocol/shuffle.py.

import { digest } from "./commit.js";
import { RANKS, SUITS, HIDDEN, findCard, applyAccepted } from "./rules.js";

const M64 = (1n << 64n) - 1n;
const B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** The 16 bytes of a seed written in 26 base32 characters. */
function seedBytes(text) {
  const out = new Uint8Array(16);
  let acc = 0, bits = 0, k = 0;
  for (const ch of text) {
    acc = (acc << 5) | B32.indexOf(ch);
    bits += 5;
    if (bits >= 8 && k < 16) {
      bits -= 8;
      out[k++] = (acc >>> bits) & 255;
    }
    acc &= (1 << bits) - 1;
  }
  return out;
}

/** The stream of 32-bit draws of a seed: SHA-256(seed || k, 4 bytes big-endian). */
async function* words(seed) {
  for (let k = 0; ; k++) {
    const data = new Uint8Array(20);
    data.set(seed);
    new DataView(data.buffer).setUint32(16, k);
    const v = new DataView((await digest(data)).buffer);
    for (let i = 0; i < 32; i += 4) yield v.getUint32(i);
  }
}

/** The shuffled deck (card indices, suit-major AS..KC) of a game code's deal part. */
export async function shuffled(dealText) {
  const deck = [...Array(52).keys()];
  const swap = (i, j) => ([deck[i], deck[j]] = [deck[j], deck[i]]);
  if (dealText.length === 7) {
    let state = 0n;
    for (const ch of dealText) state = state * 26n + BigInt(ch.charCodeAt(0) - 65);
    for (let i = 51; i > 0; i--) {
      state = (state + 0x9e3779b97f4a7c15n) & M64;
      let z = state;
      z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M64;
      z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M64;
      swap(i, Number((z ^ (z >> 31n)) % BigInt(i + 1)));
    }
    return deck;
  }
  const stream = words(seedBytes(dealText));
  for (let i = 51; i > 0; i--) {
    const m = i + 1;
    const limit = 2 ** 32 - (2 ** 32 % m);
    let w;
    do w = (await stream.next()).value;
    while (w >= limit);
    swap(i, w % m);
  }
  return deck;
}

/** A game code's rules and columns (bottom to top; the first c of column c face down). */
export async function deal(code) {
  const m = /^YU1-([CRSAM]E?G?T?)-([A-Z]{7}|[A-Z2-7]{26})$/.exec(code);
  if (!m) throw new Error(`not a game code: ${JSON.stringify(code)}`);
  const deck = (await shuffled(m[2])).map((i) => RANKS[i % 13] + SUITS[Math.floor(i / 13)]);
  const columns = [[], [], [], [], [], [], []];
  let k = 0;
  for (let row = 0; row < 7; row++) for (let c = row; c < 7; c++) columns[c].push(deck[k++]);
  for (let r = 0; r < 4; r++) for (let c = 1; c < 7; c++) columns[c].push(deck[k++]);
  return { rules: m[1], columns };
}

/**
 * Every position of a run as its runner saw it: entry k is the view after k `actions`
 * (a replay_page's [ms, move or "undo"]) and the move count, which an undo does not lower
 * (as in the engine). The face-down cards are known here, turned up as moves uncover them.
 */
export async function positions(code, actions) {
  const { rules, columns } = await deal(code);
  let at = {
    view: {
      rules,
      foundations: { S: 0, H: 0, D: 0, C: 0 },
      columns: columns.map((col, c) => col.map((card, i) => (i < c ? HIDDEN : card))),
    },
    down: columns.map((col, c) => col.slice(0, c)),
    moves: 0,
  };
  const out = [at];
  const back = [];
  for (const [, move] of actions) {
    if (move === "undo") {
      const before = back.pop();
      if (!before) throw new Error("an undo with no move to take back");
      at = { ...before, moves: at.moves };
    } else {
      const from = findCard(at.view, move.slice(0, 2));
      const down = at.down.map((d) => [...d]);
      let turned = null;
      if (from && !from.foundation && from.index > 0 && at.view.columns[from.column][from.index - 1] === HIDDEN) {
        turned = down[from.column].pop();
      }
      back.push(at);
      at = { view: applyAccepted(at.view, move, turned), down, moves: at.moves + 1 };
    }
    out.push(at);
  }
  return out;
}
