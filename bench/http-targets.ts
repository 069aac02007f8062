/**
 * The servers bench/http.ts loads, as it speaks to them: byteseek's tree API, etcd's v2 keys API and
 * its v3 JSON gateway, each with the path and body of a GET and a PUT of key number i.
 */
import { Pool } from "undici";

/** How many keys are written before the load, and drawn from at random during it. */
export const KEYS = 10_000;
export const VALUE = "v".repeat(200);

/** How one server is spoken to: the path and body of a GET and a PUT of key number i. */
export interface Target {
  name: string;
  url: string;
  /** The server's process, whose CPU time per request is measured. */
  pid: number | undefined;
  get(i: number): { method: "GET" | "POST"; path: string; body?: string; headers?: Record<string, string> };
  put(i: number): { method: "PUT" | "POST"; path: string; body: string; headers: Record<string, string> };
  /** Servers loaded together as one (their connections split evenly, their figures summed). */
  parts?: Target[];
  /** Runs before the target is filled or loaded (a server that must not run meanwhile starts here)… */
  up?(): Promise<void>;
  /** …and after: what `up` started stops. */
  down?(): Promise<void>;
}

/** Several servers of one store loaded as one: what a load balancer in front of them would see. */
export function together(name: string, parts: Target[]): Target {
  return { ...parts[0]!, name, parts };
}

const JSON_HEADERS = { "content-type": "application/json" };
const b64 = (s: string) => Buffer.from(s).toString("base64");

export function byteseekTarget(name: string, url: string, pid: number | undefined): Target {
  const body = JSON.stringify(VALUE);
  return {
    name,
    url,
    pid,
    get: (i) => ({ method: "GET", path: `/v1/tree/bench/k${i}` }),
    put: (i) => ({ method: "PUT", path: `/v1/tree/bench/k${i}`, body, headers: JSON_HEADERS }),
  };
}

export function etcdV2Target(url: string, pid: number | undefined): Target {
  const body = `value=${VALUE}`;
  const headers = { "content-type": "application/x-www-form-urlencoded" };
  return {
    name: "etcd v2 keys",
    url,
    pid,
    get: (i) => ({ method: "GET", path: `/v2/keys/bench/k${i}` }),
    put: (i) => ({ method: "PUT", path: `/v2/keys/bench/k${i}`, body, headers }),
  };
}

export function etcdV3Target(url: string, pid: number | undefined): Target {
  const value = b64(VALUE);
  return {
    name: "etcd v3 gateway",
    url,
    pid,
    get: (i) => ({
      method: "POST",
      path: "/v3/kv/range",
      body: JSON.stringify({ key: b64(`raw/k${i}`) }),
      headers: JSON_HEADERS,
    }),
    put: (i) => ({
      method: "POST",
      path: "/v3/kv/put",
      body: JSON.stringify({ key: b64(`raw/k${i}`), value }),
      headers: JSON_HEADERS,
    }),
  };
}

/**
 * Writes the KEYS keys once, 32 at a time, checking every answer; then reads each once, so every
 * server has seen every key before it is measured (byteseek on etcd answers GETs from the nodes
 * it has read).
 */
export async function prefill(target: Target): Promise<void> {
  await eachKey(target, "put");
  await eachKey(target, "get");
}

export async function eachKey(target: Target, op: "get" | "put"): Promise<void> {
  const pool = new Pool(target.url, { connections: 32 });
  try {
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        for (let i = next++; i < KEYS; i = next++) {
          const r = target[op](i);
          const res = await pool.request({
            method: r.method,
            path: r.path,
            ...(r.body === undefined ? {} : { body: r.body }),
            headers: { ...r.headers },
          });
          const text = await res.body.text();
          if (res.statusCode >= 300)
            throw new Error(`${target.name}: prefill ${op} ${r.path} answered ${res.statusCode}: ${text}`);
        }
      }),
    );
  } finally {
    await pool.close();
  }
}
