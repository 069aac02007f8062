import { request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { createClosingServer } from "../../server/connections.js";

/** A GET on a keep-alive agent-less connection; answers the response once its headers are in. */
function get(port: number, path: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    httpRequest({ host: "127.0.0.1", port, path, headers: { connection: "keep-alive" } }, resolve)
      .on("error", reject)
      .end();
  });
}

function text(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = "";
    res.setEncoding("utf8");
    res.on("data", (c: string) => {
      body += c;
    });
    res.on("end", () => resolve(body));
    res.on("error", reject);
  });
}

describe("createClosingServer", () => {
  it("closes with a connection that never sent a request, finishes the answers in flight (connection: close when their headers were not out) and then ends their connections", async () => {
    const held: Record<string, ServerResponse> = {};
    const arrived: string[] = [];
    const server = createClosingServer((req, res) => {
      arrived.push(req.url ?? "");
      held[req.url ?? ""] = res;
      // a stream: its headers out at once, its end later
      if (req.url === "/stream") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write("data: first\n\n");
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;

    const silent = connect(port, "127.0.0.1").on("error", () => undefined);
    const silentClosed = new Promise((resolve) => silent.once("close", resolve));
    await new Promise((resolve) => silent.once("connect", resolve));
    const stream = await get(port, "/stream");
    const streamText = text(stream);
    const streamClosed = new Promise((resolve) => stream.socket.once("close", resolve));
    const slow = get(port, "/slow");
    await new Promise<void>((resolve, reject) => {
      const t = setInterval(() => {
        if (arrived.length === 2) resolve(clearInterval(t));
      }, 5);
      t.unref();
      silent.once("error", reject);
    });

    let closed = false;
    const closing = new Promise<void>((resolve, reject) =>
      server.close((err) => {
        closed = true;
        if (err) reject(err);
        else resolve();
      }),
    );
    // the silent connection goes at once; the answers in flight keep the server open
    await silentClosed;
    expect(closed).toBe(false);

    held["/slow"]!.end("done");
    const slowRes = await slow;
    expect(slowRes.headers.connection).toBe("close");
    expect(await text(slowRes)).toBe("done");
    expect(closed).toBe(false);

    held["/stream"]!.end("data: last\n\n");
    expect(await streamText).toBe("data: first\n\ndata: last\n\n");
    // sent as keep-alive before the close; ended by the server once its answer was done
    expect(stream.headers.connection).toBe("keep-alive");
    await streamClosed;
    await closing;
    expect(closed).toBe(true);
  });
});
