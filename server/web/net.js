// The websocket to the race server as docs/protocol.md asks: msgpack frames (1.3), a hello
// on every connection (4.2), reconnecting with backoff after a drop (6.1), so that a resume
// (4.15) follows by itself; on a cluster, following a `route` to the node that holds the
// room (4.25), a resume like any other. Nothing of rooms or races: messages go to
// `onMessage`.

import { encode, decode } from "./vendor/msgpack.mjs";

/** Routes followed within a minute at most: nodes that disagree on where a room lives (a
 * takeover under way) must not bounce us between them; past it we stay, relayed. */
const ROUTE_LIMIT = 3;

/** Close codes after which the protocol says not to reconnect on our own (section 6.1). */
const FINAL = new Set([4000, 4001]);

/**
 * The player's token and the server's password: per server, as the terminal client keeps
 * them, since the page comes from the server it plays on (the origin's storage is its).
 */
export const keep = {
  get: (key) => {
    try {
      return localStorage.getItem(`yukon.${key}`);
    } catch {
      return null;
    }
  },
  set: (key, value) => {
    try {
      if (value === null) localStorage.removeItem(`yukon.${key}`);
      else localStorage.setItem(`yukon.${key}`, value);
    } catch {
      /* private mode: kept for this page only */
    }
  },
};

/**
 * Where the game lives on its server: "/", or "/yukon/" behind a proxy that serves it
 * under a path prefix. The page is there, or at <base>r/ROOMCODE (an invite link).
 */
export function appBase(path = window.location.pathname) {
  const invite = /^(.*\/)(r\/[A-Za-z0-9]{5}|replay\/[^/]+\/[^/]+)$/.exec(path);
  return invite ? invite[1] : path.slice(0, path.lastIndexOf("/") + 1);
}

/** `url` with its query parameter `node` set to `node` (or removed: null). */
export function withNode(url, node) {
  const u = new URL(url);
  if (node === null) u.searchParams.delete("node");
  else u.searchParams.set("node", node);
  return u.toString();
}

/** The websocket URL of the server that served this page (ws: or wss: like the page). */
export function serverUrl(loc = window.location) {
  return `${loc.protocol === "https:" ? "wss:" : "ws:"}//${loc.host}${appBase(loc.pathname)}`;
}

export class Link {
  constructor({ url, onMessage, onStatus }) {
    this.url = url;
    this.onMessage = onMessage;
    this.onStatus = onStatus;
    this.ws = null;
    /** A `welcome` came on the current socket: messages other than hello may go. */
    this.online = false;
    /** The name to register with, until a token is kept (the first visit). */
    this.name = null;
    this.wait = 0;
    this.timer = 0;
    this.stopped = true;
    /** The node that holds our room, once a `route` named it: later sockets ask for it. */
    this.node = null;
    this.routed = [];
  }

  /** Connect (again) now, if there is something to say hello with. */
  start() {
    this.stopped = false;
    clearTimeout(this.timer);
    if (!keep.get("token") && !this.name) return;
    this.open();
  }

  /** Close for good (until `start`): a name or password must be asked first. */
  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    const ws = this.ws;
    this.ws = null;
    this.online = false;
    if (ws) ws.close(1000);
  }

  open(moving = false) {
    const ws = new WebSocket(this.node === null ? this.url : withNode(this.url, this.node));
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    this.online = false;
    let welcomed = false;
    this.onStatus("connecting", moving ? "moving to your room's server…" : "connecting…");
    ws.onopen = () => {
      // The hello goes at once: a registration must never be left hanging (protocol 4.2).
      const hello = { t: "hello", v: 1, follow: true };
      const token = keep.get("token");
      if (token) hello.token = token;
      else hello.name = this.name;
      const password = keep.get("password");
      if (password) hello.password = password;
      ws.send(encode(hello));
    };
    ws.onmessage = (event) => {
      if (ws !== this.ws) return; // an old socket's last frames: its state is gone
      let msg;
      try {
        msg = decode(new Uint8Array(event.data));
      } catch {
        return; // the server sends only msgpack maps; anything else is ignored
      }
      if (msg === null || typeof msg !== "object" || typeof msg.t !== "string") return;
      if (msg.t === "route") {
        // Our room lives on another node: go there at once, and resume (protocol 4.25),
        // unless routes bounced us three times this minute (nodes that disagree on where
        // the room is, a takeover under way): then stay, the relay serves us here.
        const now = Date.now();
        this.routed = this.routed.filter((t) => t > now - 60_000);
        if (typeof msg.node === "string" && this.routed.length < ROUTE_LIMIT) {
          this.routed.push(now);
          this.node = msg.node;
          this.ws = null; // what still comes on this socket is not ours any more
          this.online = false;
          ws.close(1000);
          this.open(true);
        }
        return;
      }
      if (msg.t === "welcome") {
        welcomed = true;
        keep.set("token", msg.token);
        this.name = null;
        this.online = true;
        this.wait = 0;
        this.onStatus("online", `connected as ${msg.name}`);
      }
      this.onMessage(msg);
    };
    ws.onclose = (event) => {
      if (ws !== this.ws) return;
      this.ws = null;
      this.online = false;
      // The room's node may be gone: the next socket asks any node (4.25).
      if (!welcomed) this.node = null;
      if (this.stopped) return;
      if (FINAL.has(event.code)) {
        this.stopped = true;
        const why =
          event.code === 4001
            ? "this player is playing in another tab or window"
            : "the server speaks another protocol version";
        this.onStatus("stopped", why, event.code);
        return;
      }
      this.retry(event.code);
    };
  }

  /**
   * Try again later: 0.5 s, doubling to 15 s, each with a jitter of ±25 % (protocol 6.1),
   * and at least a few seconds after 1013 (the server is full, not gone).
   */
  retry(code = 0) {
    clearTimeout(this.timer);
    this.wait = this.wait ? Math.min(this.wait * 2, 15) : 0.5;
    let wait = this.wait * (0.75 + Math.random() * 0.5);
    if (code === 1013) wait = Math.max(wait, 3);
    this.onStatus("away", `connection lost; trying again in ${wait.toFixed(1)} s`, code);
    this.timer = setTimeout(() => {
      if (!this.stopped) this.open();
    }, wait * 1000);
  }

  /** Send one message; false when there is no connection with a welcome to send it on. */
  send(msg) {
    if (!this.ws || !this.online || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(encode(msg));
    return true;
  }
}
