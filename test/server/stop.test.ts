// `byteseek serve` (the built server, in a child process) stops on SIGTERM with MCP clients of both
// eras connected or just gone: their notification streams end properly and the process exits.
import { connect as tcpConnect } from "node:net";
import { join } from "node:path";
import { StreamableHTTPClientTransport as HttpTransportV2 } from "@modelcontextprotocol/client";
import { StreamableHTTPClientTransport as HttpTransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientV1, clientV2 } from "../mcp/helpers.js";
import { startServerChild } from "../tools/server-child.js";
import { eventually, tempDir } from "./helpers.js";

/** A request an MCP client sent, and how its answer ended. */
interface Exchange {
  client: string;
  method: string;
  /**
   * open: no answer yet, or an event stream still being read; plain: a whole answer; end: the
   * stream's end read; dropped: the client stopped reading it (aborted or cancelled); error: cut.
   */
  end: "open" | "plain" | "end" | "dropped" | "error";
  /** The event stream's text, as read. */
  text: string;
}

/**
 * fetch for an MCP client, noting each request in `exchanges` (when sent, before its answer) and
 * how its answer ended.
 */
function watchingFetch(client: string, exchanges: Exchange[]): typeof fetch {
  return async function watched(input, init) {
    const exchange: Exchange = { client, method: init?.method ?? "GET", end: "open", text: "" };
    exchanges.push(exchange);
    let res: Response;
    try {
      res = await fetch(input, init);
    } catch (err) {
      exchange.end = init?.signal?.aborted ? "dropped" : "error";
      throw err;
    }
    if (res.body === null || !(res.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
      exchange.end = "plain";
      return res;
    }
    const reader = res.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            exchange.end = "end";
            controller.close();
          } else {
            exchange.text += new TextDecoder().decode(value);
            controller.enqueue(value);
          }
        } catch (err) {
          exchange.end = init?.signal?.aborted ? "dropped" : "error";
          controller.error(err);
        }
      },
      cancel(reason) {
        if (exchange.end === "open") exchange.end = "dropped";
        return reader.cancel(reason);
      },
    });
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

describe("byteseek serve stopping with MCP clients over HTTP", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  beforeAll(async () => {
    dir = await tempDir("byteseek-stop-");
  });
  afterAll(async () => {
    await dir?.remove();
  });

  it("ends the open notification streams (2025 GET, 2026-07-28 listen) and exits 0 on SIGTERM, also after clients left without DELETE and with a connection that never sent a request", async () => {
    const { child, url } = await startServerChild(
      {
        KVSPACE: join(dir.path, "store"),
        BYTESEEK_WORKSPACE: dir.path,
        BYTESEEK_SYNC: "never",
        BYTESEEK_TOKEN: "",
      },
      ["--no-auth"],
    );
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const endpoint = new URL(`${url}/mcp`);
    const exchanges: Exchange[] = [];
    // the SDK clients retry a stream the server ended; keep their retries away from the test's end
    const reconnectionOptions = {
      initialReconnectionDelay: 60_000,
      maxReconnectionDelay: 60_000,
      reconnectionDelayGrowFactor: 1,
      maxRetries: 0,
    };
    const over = (name: string) => ({ fetch: watchingFetch(name, exchanges), reconnectionOptions });
    const staying1 = { client: clientV1(), transport: new HttpTransportV1(endpoint, over("staying 2025")) };
    const leaving1 = { client: clientV1(), transport: new HttpTransportV1(endpoint, over("leaving 2025")) };
    const staying2 = { client: clientV2(), transport: new HttpTransportV2(endpoint, over("staying 2026")) };
    const leaving2 = { client: clientV2(), transport: new HttpTransportV2(endpoint, over("leaving 2026")) };
    // a client that connected and has not sent its request (undici opens one after an aborted stream)
    const silent = tcpConnect(Number(endpoint.port), "127.0.0.1").on("error", () => undefined);
    const silentConnected = new Promise((resolve) => silent.once("connect", resolve));
    try {
      for (const { client, transport } of [staying1, leaving1, staying2, leaving2]) {
        await client.connect(transport as never);
        await client.listTools();
      }
      await staying2.client.listen({ toolsListChanged: true });
      await leaving2.client.listen({ toolsListChanged: true });
      const open = (client: string) => () =>
        exchanges.some(
          (s) =>
            s.client === client &&
            s.method === (client.includes("2025") ? "GET" : "POST") &&
            s.end === "open",
        );
      for (const client of ["staying 2025", "leaving 2025", "staying 2026", "leaving 2026"])
        await eventually(open(client), `${client}'s notification stream`, 8000);
      // gone without DELETE: its own streams aborted, the server still holding its session
      await leaving1.client.close();
      await leaving2.client.close();
      await silentConnected;
      const openAtStop = exchanges.filter((s) => s.end === "open");
      expect(openAtStop.map((s) => s.client)).toEqual(["staying 2025", "staying 2026"]);

      child.kill("SIGTERM");
      // far below the 72 s a kept-alive connection could hold the server, far above a prompt stop
      const deadline = new Promise<"still running">((resolve) =>
        setTimeout(resolve, 30_000, "still running").unref(),
      );
      expect(await Promise.race([exited, deadline])).toBe(0);
      // ended by the server, not cut: the 2025 GET stream's end read; the listen request answered
      // with its result (where the 2026 client stops reading)
      const [get, listen] = openAtStop;
      const completed = /"id":"listen:\d+","result":\{"resultType":"complete"/;
      await eventually(
        () => get!.end !== "open" && (listen!.end !== "open" || completed.test(listen!.text)),
        "the streams' ends read",
      );
      expect(get).toMatchObject({ client: "staying 2025", method: "GET", end: "end" });
      expect(listen).toMatchObject({ client: "staying 2026", method: "POST" });
      expect(listen!.end).not.toBe("error");
      expect(listen!.text).toMatch(completed);
    } finally {
      silent.destroy();
      child.kill("SIGKILL");
      await Promise.allSettled([staying1.client.close(), staying2.client.close()]);
    }
  });
});
