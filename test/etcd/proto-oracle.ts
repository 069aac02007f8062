/**
 * What the etcd fuzz suites (wire-fuzz.test.ts, auth-fuzz.test.ts) share: etcd's rpc.proto as etcd3
 * ships it, loaded into protobufjs (the oracle), and the damaged copies of well-formed messages the
 * decoders must read as protobufjs does or refuse.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import fc from "fast-check";
import protobuf from "protobufjs";

const etcd3Dir = dirname(createRequire(import.meta.url).resolve("etcd3/package.json"));

/** etcd's rpc.proto (etcdserverpb), field names as etcd spells them. */
export const rpcProto = new protobuf.Root().loadSync(join(etcd3Dir, "proto/rpc.proto"), { keepCase: true });

/** A message from `messages`, encoded, then cut short, spliced onto a later part of itself, or with one byte changed. */
export function damagedMessages<T>(
  messages: fc.Arbitrary<T>,
  encode: (m: T) => Buffer,
): fc.Arbitrary<Buffer> {
  return fc
    .tuple(
      messages,
      fc.nat(),
      fc.nat(),
      fc.integer({ min: 0, max: 255 }),
      fc.constantFrom("cut", "flip", "splice"),
    )
    .map(([message, at, at2, byte, how]) => {
      const whole = encode(message);
      if (whole.length === 0) return whole;
      const i = at % whole.length;
      if (how === "cut") return whole.subarray(0, i);
      const copy = Buffer.from(whole);
      if (how === "flip") {
        copy[i] = byte;
        return copy;
      }
      return Buffer.concat([copy.subarray(0, i), copy.subarray(at2 % whole.length)]);
    });
}
