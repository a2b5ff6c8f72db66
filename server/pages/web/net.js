// The websocket to the race server as docs/protocol.md asks: msgpack frames (1.3), a hello
// on every connection (4.2), reconnecting with backoff after a drop (6.1), so that a resume
// (4.15) follows by itself; on a cluster, following a `route` to the node that holds the
// room (4.25), a resume like any other, made before break: the old socket serves on until
// the room's node welcomes the new one; and for an invite link, looking the room's node
// up first (`roomNode`), so that the first socket goes there. Nothing of rooms or races:
// messages go to `onMessage`.

import { encode, decode } from "./vendor/msgpack.mjs";

/** Routes followed within a minute at most: nodes that disagree on where a room lives (a
 * takeover under way) must not bounce us between them; past it we stay, relayed. */
const ROUTE_LIMIT = 3;

/** Close codes after which the protocol says not to reconnect on our own (section 6.1). */
const FINAL = new Set([4000, 4001]);

/** How long an invite link's look-up of its room's node may take before the page
 * connects without it (the terminal client waits as long). */
const LOOKUP_MS = 5000;

/** A node id (protocol 4.25): anything else in `node` is not one, and goes in no URL. */
const NODE_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * This browser's device id for this server (protocol 4.31): made once, kept in the
 * origin's storage beside the token; tokens belong to names, this to the browser.
 */
export function deviceId() {
  let id = keep.get("device");
  if (!id || !/^[A-Za-z0-9_-]{16,64}$/.test(id)) {
    const bytes = new Uint8Array(18);
    crypto.getRandomValues(bytes);
    id = btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_");
    keep.set("device", id);
  }
  return id;
}

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

/**
 * The node of a cluster that holds room `code`, from `<base>r/CODE?format=json&for=join`
 * (protocol 1.6), so that the page's first socket goes there (`?node=`) and its join needs no
 * `route` (4.25); null on a server alone, for a closed room, and on any failure to ask (an
 * older server, no answer within `ms`, an answer that is not one). It never throws: the
 * page then connects as before, anywhere.
 */
export async function roomNode(base, code, get = globalThis.fetch, ms = LOOKUP_MS, key = null) {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), ms);
  try {
    // for=join: the open room's node alone, with no question to the database (1.6).
    const k = key ? `&k=${encodeURIComponent(key)}` : "";
    const reply = await get(`${base}r/${encodeURIComponent(code)}?format=json&for=join${k}`, {
      signal: abort.signal,
      cache: "no-store",
      headers: { Accept: "application/json" },
    });
    if (!reply.ok) return null;
    const data = await reply.json();
    const node = data !== null && typeof data === "object" && data.open === true ? data.node : null;
    return typeof node === "string" && NODE_ID.test(node) ? node : null;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
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
    /** A route being followed: the socket to the room's node, until its welcome. */
    this.next = null;
    /** From the hello on `next` to its welcome, what the app sends waits here (4.25). */
    this.held = null;
    /** The look-up of an invite link's room's node (a promise of an id or null, `roomNode`):
     * the first socket waits for it and asks for that node. */
    this.lookup = null;
  }

  /** Connect (again) now, if there is something to say hello with; the first time, once
   * the room's node is looked up (an invite link), to that node. */
  start() {
    this.stopped = false;
    clearTimeout(this.timer);
    if (!keep.get("token") && !this.name) return;
    const lookup = this.lookup;
    if (lookup) {
      this.lookup = null;
      this.onStatus("connecting", "connecting…");
      lookup.then((node) => {
        // Kept as a route's node is: until a socket asking for it fails before its welcome.
        if (node !== null && this.node === null) this.node = node;
        if (!this.stopped && !this.ws) this.open();
      });
      return;
    }
    this.open();
  }

  /** Close for good (until `start`): a name or password must be asked first. */
  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    const ws = this.ws;
    this.ws = null;
    this.online = false;
    this.dropNext();
    if (ws) ws.close(1000);
  }

  /** Give up a route being followed (its socket closed); what was held goes nowhere. */
  dropNext() {
    const next = this.next;
    this.next = null;
    this.held = null;
    if (next) next.close(1000);
  }

  /**
   * Follow a route (4.25) make before break: open a socket to the room's node and say
   * hello there while the current one serves on; on its welcome it is the socket (what
   * was held goes on it, the old one is closed). One that fails first leaves us here,
   * relayed, and the next reconnect asks any node.
   */
  follow(node) {
    const next = new WebSocket(withNode(this.url, node));
    next.binaryType = "arraybuffer";
    this.next = next;
    next.onopen = () => {
      if (next !== this.next) return;
      this.held = [];
      next.send(encode(this.hello()));
    };
    next.onmessage = (event) => {
      if (next !== this.next) return;
      const msg = this.decoded(event);
      if (msg === null) return;
      if (msg.t === "error") {
        // Refused (a token it does not know, a password it wants): stay where we are,
        // never registering or forgetting anything on the way.
        next.onclose();
        next.close(1000);
        return;
      }
      if (msg.t !== "welcome") return;
      const old = this.ws;
      const held = this.held ?? [];
      this.next = null;
      this.held = null;
      this.node = node;
      this.adopt(next, true);
      next.onmessage(event);
      for (const m of held) next.send(encode(m));
      if (old) old.close(1000);
    };
    next.onclose = () => {
      if (next !== this.next) return;
      this.next = null;
      const held = this.held ?? [];
      this.held = null;
      this.node = null; // the room's node may be gone: the next reconnect asks any node
      for (const m of held) this.send(m); // they go where we still are
      if (this.ws && this.ws.readyState !== WebSocket.OPEN) {
        // The old socket closed meanwhile (replaced, 4001): start again, any node.
        this.ws = null;
        this.online = false;
        if (!this.stopped) this.retry();
      }
    };
  }

  /** The hello for a new socket: the kept token (or the name), the password, `follow`. */
  hello() {
    // The hello goes at once: a registration must never be left hanging (protocol 4.2).
    const hello = { t: "hello", v: 1, follow: true };
    const token = keep.get("token");
    if (token) hello.token = token;
    else hello.name = this.name;
    const password = keep.get("password");
    if (password) hello.password = password;
    hello.device = deviceId();
    return hello;
  }

  /** A frame as a message, or null (the server sends only msgpack maps). */
  decoded(event) {
    let msg;
    try {
      msg = decode(new Uint8Array(event.data));
    } catch {
      return null;
    }
    if (msg === null || typeof msg !== "object" || typeof msg.t !== "string") return null;
    return msg;
  }

  open() {
    this.dropNext();
    const ws = new WebSocket(this.node === null ? this.url : withNode(this.url, this.node));
    ws.binaryType = "arraybuffer";
    this.onStatus("connecting", "connecting…");
    ws.onopen = () => ws.send(encode(this.hello()));
    this.adopt(ws, false);
  }

  /** Make `ws` the socket: its messages go to the app, its close is ours. */
  adopt(ws, welcomed) {
    this.ws = ws;
    this.online = false;
    ws.onmessage = (event) => {
      if (ws !== this.ws) return; // an old socket's last frames: its state is gone
      const msg = this.decoded(event);
      if (msg === null) return;
      if (msg.t === "route") {
        // Our room lives on another node: go there at once, and resume (protocol 4.25),
        // unless already going, or routes bounced us three times this minute (nodes that
        // disagree on where the room is, a takeover under way): then stay, relayed.
        const now = Date.now();
        this.routed = this.routed.filter((t) => t > now - 60_000);
        if (typeof msg.node === "string" && !this.next && this.routed.length < ROUTE_LIMIT) {
          this.routed.push(now);
          this.follow(msg.node);
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
      // A follow under way: the room's node may have replaced this socket (4001 from
      // its node) before its welcome reached us. The new socket decides.
      if (this.next && event.code === 4001) return;
      this.ws = null;
      this.online = false;
      this.dropNext();
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
    if (this.held) {
      this.held.push(msg); // a hello is on its way on the room's node's socket
      return true;
    }
    if (!this.ws || !this.online || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(encode(msg));
    return true;
  }
}
