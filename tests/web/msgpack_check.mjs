// Runs the vendored msgpack codec (server/pages/web/vendor/msgpack.mjs) for
// tests/web/test_vendor.py. Input on stdin, one JSON document:
//   {"decode": [hex...]}  msgpack bytes that Python encoded
// Output on stdout, one JSON document:
//   {"decoded": [value...], "reencoded": [hex...], "encoded": hex}
// A decoded value is written as JSON, bin as {"$bin": hex}. "encoded" is the sample
// message below, built in JavaScript, for Python to decode.
import { decode, encode } from "../../server/pages/web/vendor/msgpack.mjs";

const hex = (bytes) => Buffer.from(bytes).toString("hex");
const fromHex = (text) => new Uint8Array(Buffer.from(text, "hex"));
const plain = (value) => {
  if (value instanceof Uint8Array) return { $bin: hex(value) };
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  }
  return value;
};

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const input = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const decoded = input.decode.map((h) => decode(fromHex(h)));
process.stdout.write(JSON.stringify({
  decoded: decoded.map(plain),
  reencoded: decoded.map((value) => hex(encode(value))),
  encoded: hex(encode({
    t: "hello", v: 1, name: "Zoë 🦌", token: null, password: null,
    seed: new Uint8Array([0, 1, 2, 254, 255]), seq: 2 ** 31 - 1, elapsed_ms: 2 ** 40,
    delta: -129, ready: true, list: [0, 127, 128, 255, 256, 65535, 65536, -1, -32, -33],
  })),
}));
