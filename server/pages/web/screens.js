// The screens and dialogs, one module a screen under screens/ (named as the terminal
// client's client/screens/): each is built once when it comes up, then `update`d in place from
// the session after every message; `key` takes the terminal client's keys for it. This module
// gathers them for app.js (`screens[kind]`) and replay.js.

export { name, password } from "./screens/name.js";
export { lobby } from "./screens/lobby.js";
export { nameLink } from "./screens/name_link.js";
export { room } from "./screens/room.js";
export { race } from "./screens/race.js";
export { watch } from "./screens/watch.js";
export { postmortemText, results } from "./screens/results.js";
export { boards } from "./screens/leaderboard.js";
export { history } from "./screens/history.js";
export { confirm } from "./screens/confirm.js";
export { help } from "./screens/help.js";
export { chrome, keyLabel, setLabel, plain, keyed, form } from "./screens/parts.js";
// The player's page (docs/protocol.md 4.27): a screen of its own module.
export { player } from "./player.js";
