// The Yukon rules for the browser client: reading a runner's view (docs/rules.md section 10,
// every face-down card "??"), its legal moves (to light up where a picked card may go) and
// keeping it in step with the server's `accepted`. No DOM, so that it also runs under Node,
// where tests/web/test_rules_js.py checks it against the Python engine in protocol/ (the
// reference: the server decides what is legal, this only helps the player see it).

/**
 * A parsed view: foundation heights 0-13 by suit, columns bottom to top.
 * @typedef {{rules: string, foundations: Object<string, number>, columns: string[][]}} View
 */

/** Rank letters, ace (rank 1) to king (rank 13). */
export const RANKS = "A23456789TJQK";
/** Suit letters in foundation order: spades, hearts, diamonds, clubs. */
export const SUITS = "SHDC";
/** How a face-down card is written in a view. */
export const HIDDEN = "??";
/** Option G: a tableau move carries at most this many cards (rules.md section 5). */
export const GROUP_LIMIT = 20;

const RANK_WORDS = ["ace", "two", "three", "four", "five", "six", "seven", "eight", "nine",
  "ten", "jack", "queen", "king"];
export const SUIT_WORDS = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };
const RED = { S: false, H: true, D: true, C: false };

/**
 * Read a card written as in rules.md section 1 ("7S", "th", "10h").
 * @returns {{rank: number, suit: string, text: string}} rank 1-13, canonical text ("TH").
 */
export function parseCard(text) {
  const m = typeof text === "string" && /^(10|[A2-9TJQK])([SHDC])$/i.exec(text);
  if (!m) {
    throw new Error(`not a card: ${JSON.stringify(text)} (a rank A 2-9 T J Q K, then a suit S H D C)`);
  }
  const rankLetter = m[1] === "10" ? "T" : m[1].toUpperCase();
  const suit = m[2].toUpperCase();
  return { rank: RANKS.indexOf(rankLetter) + 1, suit, text: rankLetter + suit };
}

/** A card in words, for screen readers: "7S" gives "seven of spades". */
export function cardLabel(card) {
  if (card === HIDDEN) return "face-down card";
  const { rank, suit } = parseCard(card);
  return `${RANK_WORDS[rank - 1]} of ${SUIT_WORDS[suit]}`;
}

/** Read a rules field ("C", "CT", "MEGT"), only in the canonical form a view has. */
export function parseRules(text) {
  if (typeof text !== "string" || !/^[CRSAM]E?G?T?$/.test(text)) {
    throw new Error(`rules field ${JSON.stringify(text)} is not a variant C R S A M`
      + " followed by options in the order E G T");
  }
  return {
    variant: text[0],
    openSpaces: text.includes("E"),
    groupLimit: text.includes("G"),
    takeBack: text.includes("T"),
  };
}

/** May `card` go on a column whose top card is `top`, under `variant` (rules.md section 4)? */
export function buildsOn(variant, card, top) {
  const cr = RANKS.indexOf(card[0]);
  const tr = RANKS.indexOf(top[0]);
  const cs = card[1];
  const ts = top[1];
  switch (variant) {
    case "C": return cr + 1 === tr && RED[cs] !== RED[ts];
    case "R": return cr + 1 === tr;
    case "S": return cr + 1 === tr && cs === ts;
    case "A": return cs === ts && Math.abs(cr - tr) === 1;
    case "M": return cr + 1 === tr && cs !== ts;
    default: throw new Error(`unknown variant ${JSON.stringify(variant)}`);
  }
}

/**
 * Parse a view: `<rules> <foundations> <col1>/.../<col7>`. Checks what the engine checks
 * (rules.md section 10, "What makes a position valid"), so a view this accepts is one the
 * engine accepts; known face-down cards (lower case) are refused: a view has only "??".
 * @returns {View}
 * @throws {Error} with a message that says what is wrong and where.
 */
export function parseView(text) {
  if (typeof text !== "string") throw new Error(`a view is text, not ${typeof text}`);
  const fields = text.trim().split(" ");
  if (fields.length !== 3) {
    throw new Error("a view has three fields separated by single spaces (rules, foundations,"
      + ` columns), found ${fields.length}: ${JSON.stringify(text)}`);
  }
  const [rules, foundText, colsText] = fields;
  parseRules(rules);
  if (foundText.length !== 4) {
    throw new Error(`foundations field ${JSON.stringify(foundText)} must be four characters`
      + " (S H D C), each a rank or -");
  }
  const seen = new Map();
  const foundations = {};
  [...SUITS].forEach((suit, i) => {
    const ch = foundText[i];
    const height = ch === "-" ? 0 : RANKS.indexOf(ch) + 1;
    if (ch !== "-" && height === 0) {
      throw new Error(`foundations field ${JSON.stringify(foundText)}: ${JSON.stringify(ch)}`
        + ` for ${suit} is not a rank or -`);
    }
    foundations[suit] = height;
    for (let r = 0; r < height; r++) seen.set(RANKS[r] + suit, "on its foundation");
  });
  const parts = colsText.split("/");
  if (parts.length !== 7) throw new Error(`expected 7 columns separated by '/', found ${parts.length}`);
  let hidden = 0;
  const columns = parts.map((ctext, c) => {
    const n = c + 1;
    if (ctext.length % 2) throw new Error(`column ${n} ${JSON.stringify(ctext)}: cards are two characters each`);
    const column = [];
    for (let i = 0; i < ctext.length; i += 2) {
      const token = ctext.slice(i, i + 2);
      if (token === HIDDEN) {
        if (column.length && column[column.length - 1] !== HIDDEN) {
          throw new Error(`column ${n}: a face-down card lies on a face-up card (face-down cards come first)`);
        }
        hidden++;
      } else {
        if (!/^[A2-9TJQK][SHDC]$/.test(token)) {
          throw new Error(`column ${n}: ${JSON.stringify(token)} is not a card (a view writes`
            + " face-up cards in upper case and face-down ones as ??)");
        }
        if (seen.has(token)) throw new Error(`${token} appears twice (column ${n}, and ${seen.get(token)})`);
        seen.set(token, `column ${n}`);
      }
      column.push(token);
    }
    if (column.length && column[column.length - 1] === HIDDEN) {
      throw new Error(`column ${n}: its top card is face down, but an uncovered card turns face up`);
    }
    return column;
  });
  if (seen.size + hidden !== 52) throw new Error(`cards plus ?? make ${seen.size + hidden}, not 52`);
  return { rules, foundations, columns };
}

/** Write a view back as text; `formatView(parseView(t)) === t` for every canonical view. */
export function formatView(view) {
  const found = [...SUITS].map((s) => (view.foundations[s] ? RANKS[view.foundations[s] - 1] : "-")).join("");
  return `${view.rules} ${found} ${view.columns.map((col) => col.join("")).join("/")}`;
}

/**
 * Where a card is: `{column, index}` (0-based, index 0 = bottom) when face up in a column,
 * `{foundation: true}` when it tops its foundation, otherwise null.
 */
export function findCard(view, card) {
  for (let c = 0; c < 7; c++) {
    const index = view.columns[c].indexOf(card);
    if (index >= 0) return { column: c, index };
  }
  if (view.foundations[card[1]] === RANKS.indexOf(card[0]) + 1) return { foundation: true };
  return null;
}

/** A card's place in the engine's card index (suit-major: AS..KS, AH..KH, AD..KD, AC..KC). */
const cardIndex = (card) => SUITS.indexOf(card[1]) * 13 + RANKS.indexOf(card[0]);

/**
 * The legal moves of `view`, all of them, or only those of the card `only` (canonical text)
 * when it is given: one code path for legalMoves and destinations, so they cannot disagree.
 */
function generate(view, only) {
  const rules = parseRules(view.rules);
  const cols = view.columns;
  const found = view.foundations;
  // The face-up cards in card-index order (the engine's order), with their column and the
  // size of the block they would carry.
  const faceUp = [];
  cols.forEach((col, c) => col.forEach((card, i) => {
    if (card !== HIDDEN && (only === undefined || card === only)) {
      faceUp.push({ card, col: c, block: col.length - i, index: cardIndex(card) });
    }
  }));
  faceUp.sort((a, b) => a.index - b.index);
  const fits = (f) => !rules.groupLimit || f.block <= GROUP_LIMIT; // option G
  const moves = [];
  const empties = [];
  for (let d = 0; d < 7; d++) {
    const col = cols[d];
    if (!col.length) {
      empties.push(d);
      continue;
    }
    const top = col[col.length - 1];
    if ((only === undefined || top === only) && found[top[1]] === RANKS.indexOf(top[0])) {
      moves.push(`${top}>F`);
    }
    for (const f of faceUp) {
      if (f.col !== d && buildsOn(rules.variant, f.card, top) && fits(f)) moves.push(`${f.card}>${d + 1}`);
    }
  }
  if (empties.length) {
    // Under E every face-up card, column by column from the bottom; else the kings.
    const movable = rules.openSpaces
      ? [...faceUp].sort((a, b) => a.col - b.col || b.block - a.block)
      : faceUp.filter((f) => f.card[0] === "K");
    for (const f of movable) {
      if (!fits(f)) continue;
      for (const d of empties) if (f.col !== d) moves.push(`${f.card}>${d + 1}`);
    }
  }
  if (rules.takeBack) {
    for (const suit of SUITS) {
      const height = found[suit];
      const card = RANKS[height - 1] + suit;
      if (!height || (only !== undefined && card !== only)) continue;
      for (let d = 0; d < 7; d++) {
        const col = cols[d];
        const ok = col.length
          ? buildsOn(rules.variant, card, col[col.length - 1])
          : height === 13 || rules.openSpaces;
        if (ok) moves.push(`${card}>${d + 1}`);
      }
    }
  }
  return moves;
}

/**
 * Every legal move ("7S>4", "AH>F"), in the order protocol.Game.legal_moves produces them
 * (tests/web/test_rules_js.py checks the lists are equal). Legality never depends on a
 * face-down card, so a view is enough.
 */
export function legalMoves(view) {
  return generate(view, undefined);
}

/**
 * Where a card may legally go: "1".."7" then "F". The card is a face-up card of a column
 * (it moves with everything on it) or, under option T, a foundation's top; else [].
 */
export function destinations(view, card) {
  return generate(view, parseCard(card).text).map((move) => move.slice(3)).sort();
}

/**
 * Apply a move the server accepted (docs/protocol.md section 4.7, "Applying an accepted"),
 * with `turned`, the card it turned face up, if any. Returns a new view. It does not judge
 * legality (the server did), but refuses a move that does not fit the view.
 * @returns {View}
 */
export function applyAccepted(view, move, turned) {
  const m = typeof move === "string" && /^([A2-9TJQK][SHDC])>([1-7F])$/.exec(move);
  if (!m) throw new Error(`not a canonical move: ${JSON.stringify(move)}`);
  const [, card, dest] = m;
  const turnedCard = turned === null || turned === undefined ? null : parseCard(turned).text;
  const next = {
    rules: view.rules,
    foundations: { ...view.foundations },
    columns: view.columns.map((col) => [...col]),
  };
  const at = findCard(view, card);
  if (at && !at.foundation) {
    const src = next.columns[at.column];
    const block = src.splice(at.index);
    if (dest === "F") {
      if (block.length !== 1) throw new Error(`${move}: only the top card of a column goes up`);
      next.foundations[card[1]] = RANKS.indexOf(card[0]) + 1;
    } else {
      if (Number(dest) - 1 === at.column) throw new Error(`${move}: the card is already in column ${dest}`);
      next.columns[Number(dest) - 1].push(...block);
    }
    const uncovered = src.length > 0 && src[src.length - 1] === HIDDEN;
    if (turnedCard !== null) {
      if (!uncovered) throw new Error(`${move} turned ${turnedCard}, but it uncovers no face-down card`);
      if (findCard(next, turnedCard)) throw new Error(`${move} turned ${turnedCard}, which is already in view`);
      src[src.length - 1] = turnedCard;
    } else if (uncovered) {
      throw new Error(`${move} uncovers a face-down card, but no turned card was given`);
    }
  } else if (at && dest !== "F") {
    if (turnedCard !== null) throw new Error(`${move}: a take-back never turns a card`);
    next.foundations[card[1]] -= 1;
    next.columns[Number(dest) - 1].push(card);
  } else if (at) {
    throw new Error(`${move}: the ${card} is already on its foundation`);
  } else {
    throw new Error(`${move}: the ${card} is neither face up in a column nor on top of its foundation`);
  }
  return next;
}

/** All 52 cards are on the foundations. */
export function isWon(view) {
  return [...SUITS].every((s) => view.foundations[s] === 13);
}

/** Not won and no legal move left: lost unless the runner undoes (rules.md section 8). */
export function isStuck(view) {
  return !isWon(view) && legalMoves(view).length === 0;
}
