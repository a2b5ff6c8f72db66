// A stand-in for the browser's WebSocket (no network), shared by the checks of
// server/pages/web/net.js: each socket made is kept in `sockets`; the test plays the server's
// side (`open`, `deliver`, `drop`) and reads what the page sent (`sent`, decoded).
import { encode, decode } from "../../server/pages/web/vendor/msgpack.mjs";

export const sockets = [];
export class FakeSocket {
  static OPEN = 1;
  constructor(url) {
    this.url = url;
    this.sent = [];
    this.closed = null;
    this.readyState = 0;
    sockets.push(this);
  }
  send(data) {
    this.sent.push(decode(data));
  }
  close(code) {
    this.closed = code ?? 1005;
  }
  // the server's side
  open() {
    this.readyState = 1;
    this.onopen?.();
  }
  deliver(msg) {
    this.onmessage?.({ data: encode(msg).slice().buffer });
  }
  drop(code) {
    this.readyState = 3;
    this.onclose?.({ code });
  }
}
