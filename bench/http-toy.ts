/**
 * The reference server of bench/http.ts (issue 3): a bare fastify + classic-level at KVSPACE on
 * BYTESEEK_PORT that stores a PUT's body under its path and answers it to a GET, nothing more.
 */
import { ClassicLevel } from "classic-level";
import Fastify from "fastify";

const db = new ClassicLevel<string, string>(process.env.KVSPACE ?? "", {
  keyEncoding: "utf8",
  valueEncoding: "utf8",
});
await db.open();
const app = Fastify();
app.get("/healthz", async () => ({ ok: true }));
app.get("/v1/tree/*", async (req, reply) => {
  const value = await db.get(req.url.slice("/v1/tree".length));
  if (value === undefined) return reply.code(404).send({ error: "not found" });
  return reply.type("application/json").send(value);
});
app.put("/v1/tree/*", async (req) => {
  await db.put(req.url.slice("/v1/tree".length), JSON.stringify(req.body));
  return { ok: true };
});
await app.listen({ host: "127.0.0.1", port: Number(process.env.BYTESEEK_PORT) });
process.once("SIGTERM", () => {
  void app.close().then(() => db.close());
});
