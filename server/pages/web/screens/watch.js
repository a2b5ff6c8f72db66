// Watching a race (the terminal's WatchScreen): everyone's progress, nobody's cards.

import { h } from "../dom.js";
import { actions, chrome, keyed, plain, screen, sender } from "./parts.js";
import { raceHead, standingsEl } from "./race.js";

export function watch(c) {
  const ch = chrome(c);
  const head = raceHead(c);
  const stand = standingsEl(c);
  const leave = sender(c, "leave");
  const el = screen(
    ch,
    "watch",
    head.el,
    h("p", "note", "You watch this race: everyone's progress, nobody's cards."),
    stand.el,
    actions(plain("Leave (l)", leave, "leave")),
  );
  return {
    el,
    tick: () => head.tick(),
    update() {
      ch.update();
      head.update();
      stand.update();
    },
    key: keyed({ l: leave }),
  };
}
