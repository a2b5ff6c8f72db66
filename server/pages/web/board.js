// The race board: the foundations and columns of my view, and the pointer on it (mouse, pen
// and touch alike, through pointer events): drag, click then click the place, double-click.
// What the pointer means the session decides (session.js); this only reports it to `act`.
// A face-down card is a back with no name: the view holds only "??" for it, so nothing
// about it can reach the page (docs/architecture.md, "Fairness").

import { h } from "./dom.js";
import { cardLabel, SUITS, SUIT_WORDS } from "./rules.js";
import { label, DOUBLE_TAP_MS } from "./session.js";
import { suitMark } from "./dailydeck.js";
/** A press that moves this far (px) is a drag, not a click. */
const DRAG_PX = 6;

/** How many, in words, as a screen reader says them ("three cards face down"). */
const COUNT = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
  "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
  "nineteen", "twenty"];
const count = (n, what) => `${COUNT[n] ?? n} ${what}${n === 1 ? "" : "s"}`;

/**
 * The names a screen reader reads on the board (issue 42): a column's face-down cards are
 * one item, "three cards face down" (one back named alone would say nothing more, six of
 * them six times over); a face-up card says where it lies, "seven of hearts, column 2,
 * face up"; a pile says what is in it, "hearts foundation, up to five".
 */
export const names = {
  backs: (n) => count(n, "card") + " face down",
  card: (card, where, marks = []) => [cardLabel(card), where, ...marks].join(", "),
  foundation: (suit, top) =>
    `${SUIT_WORDS[suit]} foundation, ${top ? `up to ${cardLabel(top).split(" of ")[0]}` : "empty"}`,
  column(n, cards) {
    const down = cards.filter((c) => c === "??").length;
    const up = cards.length - down;
    if (!cards.length) return `column ${n}: empty`;
    const parts = [down && names.backs(down), up && `${count(up, "card")} face up`].filter(Boolean);
    return `column ${n}: ${parts.join(", ")}`;
  },
};

/**
 * A card; `name` what a screen reader calls it (a back: its column's backs, or null for a
 * back the first one speaks for); `more`: classes beyond "pc up" and its colour.
 */
function cardEl(card, extra = {}, more = "", name = null) {
  if (card === "??") {
    return name
      ? h("div", { class: "pc down", role: "listitem", "aria-label": name })
      : h("div", { class: "pc down", "aria-hidden": "true" });
  }
  const red = card[1] === "H" || card[1] === "D";
  const shown = label(card);
  return h(
    "div",
    {
      // s-X: the suit, which the four-colour deck colours (client.css, dailydeck.js).
      class: `pc up${red ? " red" : ""} s-${card[1]}${more}`,
      role: "listitem",
      "aria-label": name ?? cardLabel(card),
      "data-card": card,
      ...extra,
    },
    h("span", { class: "ix", "aria-hidden": "true" }, shown.slice(0, -1), h("b", {}, shown.slice(-1))),
    h("span", { class: "pip", "aria-hidden": "true" }, shown.slice(-1)),
  );
}

/** Sizes in px, through element.style: the CSP allows no style attribute. */
function setPx(el, sizes) {
  for (const [name, px] of Object.entries(sizes)) el.style.setProperty(name, `${px}px`);
}

export class BoardView {
  /**
   * @param {(what: string, ...args: any[]) => void} act "click" (source, card), "double"
   *   (source, card), "dest" (dest), "drop" (source, card, dest)
   */
  constructor(act) {
    this.act = act;
    this.el = h("div", { class: "board", role: "region", "aria-label": "Your board", tabindex: "0" });
    this.found = h("div", "founds");
    this.cols = h("div", "cols");
    this.el.append(this.found, this.cols);
    this.press = null;
    this.drag = null;
    this.lastClick = null;
    this.dirty = null;
    for (const k of ["down", "move", "up"]) this.el.addEventListener(`pointer${k}`, (e) => this[k](e));
    this.el.addEventListener("pointercancel", () => this.end());
    this.el.addEventListener("contextmenu", (e) => {
      if (this.press) e.preventDefault();
    });
  }

  /** Draw `race` (a RaceBoard); the held card's destinations and a hinted move light up. */
  render(race) {
    if (this.drag) {
      this.dirty = race; // drawn after the drop: a drag is never cut short
      return;
    }
    this.race = race;
    // The last seq drawn: what the page shows is the answer to every move up to it.
    this.el.dataset.seq = String(race.lastSeq);
    const pick = race.pick;
    const lifted = new Set(race.lifted());
    const dests = new Set(pick ? race.destinations(pick.card) : []);
    const [hintCard, hintDest] = race.hint ? race.hint.split(">") : [null, null];
    const tops = race.tops();
    // Held (with what lies on it) and the hint's card: said after the card's name.
    const marks = (c) => [lifted.has(c) && "held", c === hintCard && "the hint's card"].filter(Boolean);
    this.found.replaceChildren(
      ...SUITS.split("").map((s, i) => {
        const top = tops[i];
        return h(
          "div",
          {
            class: `slot found${dests.has("F") && pick && pick.card[1] === s ? " dest" : ""}${hintDest === "F" && hintCard?.[1] === s ? " hinted" : ""}`,
            // A pile, as a column is: a list (of its top card), which a name may label.
            role: "list",
            "data-dest": "F",
            "data-suit": s,
            "aria-label": names.foundation(s, top),
          },
          top
            ? cardEl(
                top,
                { "data-source": "0" },
                ` found-top${lifted.has(top) ? " held" : ""}`,
                names.card(top, `on the ${SUIT_WORDS[s]} foundation`, marks(top)),
              )
            : h("span", { class: `ghost-suit s-${s}`, "aria-hidden": "true" }, suitMark(s)),
        );
      }),
    );
    this.cols.replaceChildren(
      ...[1, 2, 3, 4, 5, 6, 7].map((n) => {
        const cards = race.column(n);
        const down = cards.filter((c) => c === "??").length;
        const name = names.column(n, cards);
        const col = h(
          "div",
          {
            class: `col${dests.has(String(n)) ? " dest" : ""}${hintDest === String(n) ? " hinted" : ""}`,
            role: "list",
            "data-dest": String(n),
            "aria-label": name,
          },
          h("span", { class: "col-n", "aria-hidden": "true" }, n),
        );
        const more = (c) => `${lifted.has(c) ? " held" : ""}${c === hintCard ? " hinted" : ""}`;
        col.append(
          ...cards.map((c, i) =>
            c === "??"
              ? cardEl(c, {}, "", i === 0 ? names.backs(down) : null)
              : cardEl(c, { "data-source": n }, more(c), names.card(c, `column ${n}`, ["face up", ...marks(c)])),
          ),
        );
        return col;
      }),
    );
    this.layout();
  }

  /**
   * Sizes from the space there is: seven columns across the board's width, and each
   * column's cards spread to fit the height left in the window (a phone held upright shows
   * all seven, 18 cards deep).
   */
  layout() {
    const width = this.el.clientWidth || 700;
    const gap = width < 500 ? 3 : 8;
    const cw = Math.max(30, Math.min(96, Math.floor((width - 6 * gap) / 7)));
    const ch = Math.round(cw * 1.4);
    setPx(this.el, { "--cw": cw, "--ch": ch, "--gap": gap });
    const top = this.cols.getBoundingClientRect().top;
    const reserve = window.innerWidth < 700 ? 64 : 96; // the buttons and the status line below
    const room = Math.max(ch * 3, window.innerHeight - top - reserve);
    let tallest = ch;
    for (const col of this.cols.children) {
      const cards = [...col.querySelectorAll(".pc")];
      const down = cards.filter((c) => c.classList.contains("down")).length;
      let u = ch * 0.27;
      let d = ch * 0.12;
      const spread = down * d + Math.max(0, cards.length - down - 1) * u;
      if (spread + ch > room && spread > 0) {
        const k = (room - ch) / spread;
        u *= k;
        d *= k;
      }
      let y = 0;
      cards.forEach((c, i) => {
        c.style.top = `${Math.round(y)}px`;
        y += i < down ? d : u;
      });
      tallest = Math.max(tallest, (cards.length ? y - (cards.length - 1 < down ? d : u) : 0) + ch);
    }
    this.cols.style.minHeight = `${Math.ceil(tallest)}px`;
  }

  // -- the pointer -------------------------------------------------------------------------

  down(e) {
    if (e.button !== 0 || this.press) return;
    const cardEl = e.target.closest(".pc.up[data-source]");
    const destEl = e.target.closest("[data-dest]");
    if (!cardEl && !destEl) return;
    this.press = {
      id: e.pointerId,
      x: e.clientX,
      y: e.clientY,
      card: cardEl?.dataset.card ?? null,
      source: cardEl ? Number(cardEl.dataset.source) : null,
      dest: destEl?.dataset.dest ?? null,
      el: cardEl,
    };
    if (cardEl) {
      e.preventDefault(); // no text selection, no scrolling: this press may become a drag
      this.el.setPointerCapture?.(e.pointerId);
    }
  }

  move(e) {
    const p = this.press;
    if (!p || p.id !== e.pointerId || !p.card) return;
    if (!this.drag) {
      if (Math.hypot(e.clientX - p.x, e.clientY - p.y) < DRAG_PX) return;
      this.startDrag(p);
    }
    const g = this.drag.ghost;
    g.style.transform = `translate(${e.clientX - this.drag.dx}px, ${e.clientY - this.drag.dy}px)`;
    const over = this.target(e.clientX, e.clientY);
    for (const el of this.el.querySelectorAll(".over")) if (el !== over) el.classList.remove("over");
    over?.classList.add("over");
  }

  startDrag(p) {
    const race = this.race;
    const col = p.source ? race.faceUp(p.source) : [p.card];
    const block = col.slice(Math.max(0, col.indexOf(p.card)));
    const rect = p.el.getBoundingClientRect();
    const ghost = h("div", { class: "drag-ghost", "aria-hidden": "true" });
    block.forEach((c, i) => {
      const el = cardEl(c);
      el.removeAttribute("role");
      el.style.top = `${i * Math.round(rect.height * 0.27)}px`;
      ghost.append(el);
    });
    setPx(ghost, { width: rect.width, "--cw": rect.width, "--ch": rect.height, left: 0, top: 0 });
    document.body.append(ghost);
    this.drag = { ghost, dx: p.x - rect.left, dy: p.y - rect.top };
    ghost.style.transform = `translate(${rect.left}px, ${rect.top}px)`;
    // The block leaves its place; where it may go lights up.
    const lifted = new Set(block);
    for (const el of this.el.querySelectorAll(".pc.up")) if (lifted.has(el.dataset.card)) el.classList.add("lifting");
    const dests = new Set(race.destinations(p.card));
    for (const el of this.el.querySelectorAll("[data-dest]")) {
      const d = el.dataset.dest;
      if (dests.has(d) && (d !== "F" || el.dataset.suit === p.card[1])) el.classList.add("dest");
    }
  }

  target(x, y) {
    const el = document.elementFromPoint(x, y)?.closest("[data-dest]");
    return el && this.el.contains(el) ? el : null;
  }

  up(e) {
    const p = this.press;
    if (!p || p.id !== e.pointerId) return;
    if (this.drag) {
      const over = this.target(e.clientX, e.clientY);
      const dest = over?.dataset.dest;
      this.end();
      if (dest && dest !== String(p.source)) this.act("drop", p.source, p.card, dest);
      else this.act("redraw");
      return;
    }
    this.end();
    if (p.card) {
      const now = performance.now();
      const last = this.lastClick;
      const double = last && last.card === p.card && now - last.at <= DOUBLE_TAP_MS;
      this.lastClick = double ? null : { card: p.card, at: now };
      if (double && p.source) this.act("double", p.source, p.card);
      else this.act("click", p.source, p.card);
    } else if (p.dest) {
      this.lastClick = null;
      this.act("dest", p.dest);
    }
  }

  end() {
    this.press = null;
    if (this.drag) {
      this.drag.ghost.remove();
      this.drag = null;
      for (const el of this.el.querySelectorAll(".over")) el.classList.remove("over");
    }
    if (this.dirty) {
      const race = this.dirty;
      this.dirty = null;
      this.render(race);
    }
  }
}
