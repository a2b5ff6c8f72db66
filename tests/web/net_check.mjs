// Drives server/pages/web/net.js's Link with a stand-in WebSocket (the browser's API, no
// network): what it sends, where it connects, what reaches the app. Reads nothing; prints
// one JSON object of what it saw, for tests/web/test_net_js.py.
import { FakeSocket, sockets } from "./fake_socket.mjs";

globalThis.WebSocket = FakeSocket;
const store = new Map();
globalThis.localStorage = {
  getItem: (k) => (store.has(k) ? store.get(k) : null),
  setItem: (k, v) => store.set(k, v),
  removeItem: (k) => store.delete(k),
};
globalThis.setTimeout = (fn) => {
  fn();
  return 0;
};

const { Link, withNode } = await import("../../server/pages/web/net.js");
const seen = { messages: [], statuses: [] };
const link = new Link({
  url: "ws://lb.example:8765/",
  onMessage: (m) => seen.messages.push(m.t),
  onStatus: (kind, text) => seen.statuses.push(kind + ": " + text),
});
link.name = "ann";
link.start();
const first = sockets[0];
first.open();
first.deliver({ t: "welcome", v: 1, name: "ann", token: "TOK", resume_s: 60, room: null });
first.deliver({ t: "room", room: "K7WQM" });
first.deliver({ t: "route", node: "node-2", room: "K7WQM" });
// Make before break: the old socket serves on while the new one opens.
first.deliver({ t: "error", code: "relayed" });
const whileOpening = link.send({ t: "ready", ready: true }); // on the old socket
const second = sockets[1];
const oldOpen = { closed: first.closed, online: link.online };
second.open();
const heldSent = link.send({ t: "ready", ready: false }); // held: a hello is on its way
const heldBeforeWelcome = second.sent.length;
second.deliver({ t: "welcome", v: 1, name: "ann", token: "TOK", resume_s: 60, room: "K7WQM" });
const afterMove = { node: link.node, online: link.online };
// A drop mid-race: the next socket asks for the node again.
second.drop(1006);
const third = sockets[2];
// That one fails before any welcome (the node is gone): the one after asks any node.
third.drop(1006);
const fourth = sockets[3];

// A route whose node refuses the hello (bad_token): the page stays where it is, and what
// it held goes on the old socket.
const refused = new Link({
  url: "ws://lb.example:8765/",
  onMessage: () => {},
  onStatus: () => {},
});
refused.start();
const r1 = sockets[sockets.length - 1];
r1.open();
r1.deliver({ t: "welcome", v: 1, name: "ann", token: "TOK", resume_s: 60, room: "K7WQM" });
r1.deliver({ t: "route", node: "node-3", room: "K7WQM" });
const r2 = sockets[sockets.length - 1];
r2.open();
refused.send({ t: "ready", ready: true }); // held: the hello is on its way
r2.deliver({ t: "error", code: "bad_token" });
const refusal = {
  oldSent: r1.sent.map((m) => m.t),
  newSent: r2.sent.map((m) => m.t),
  newClosed: r2.closed,
  node: refused.node,
  online: refused.online,
  token: localStorage.getItem("yukon.token"),
};

console.log(
  JSON.stringify({
    refusal,
    hellos: [first.sent[0], second.sent[0]],
    device: localStorage.getItem("yukon.device"),
    urls: sockets.map((s) => s.url),
    firstClosed: first.closed,
    oldOpen,
    whileOpening,
    heldSent,
    heldBeforeWelcome,
    firstSent: first.sent.map((m) => [m.t, m.ready ?? null]),
    secondSent: second.sent.map((m) => [m.t, m.ready ?? null]),
    messages: seen.messages,
    afterMove,
    lastNode: link.node,
    moving: seen.statuses.filter((s) => s.includes("moving")).length,
    withNode: [
      withNode("ws://h:8765/", "n2"),
      withNode("wss://h/yukon/?a=1&node=n1", "n3"),
      withNode("ws://h/?node=n1", null),
    ],
    fourth: fourth ? fourth.url : null,
  }),
);
