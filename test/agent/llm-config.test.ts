import { inspect } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { clientLlmSettings, resolveLlmConfig } from "../../agent/llm-config.js";
import { bool, int64, openTree, str, type Tree } from "../../tree/index.js";
import { agentFailure } from "./helpers.js";

const KEY = "sk-config-secret-42";
const FULL_ENV = {
  BYTESEEK_LLM_API: "openai",
  BYTESEEK_LLM_URL: "http://127.0.0.1:8080/v1/",
  BYTESEEK_LLM_MODEL: "qwen",
  BYTESEEK_LLM_KEY: KEY,
  BYTESEEK_LLM_MAX_TOKENS: "2048",
};

let tree: Tree;
beforeEach(async () => {
  tree = await openTree({ backend: "memory" });
});
afterEach(async () => {
  await tree.close();
});

describe("resolveLlmConfig", () => {
  it("reads the environment, with defaults for the rest", async () => {
    const config = await resolveLlmConfig({ env: FULL_ENV, tree });
    expect({ ...config }).toEqual({
      api: "openai",
      url: "http://127.0.0.1:8080/v1",
      model: "qwen",
      maxTokens: 2048,
      timeoutMs: 120_000,
      maxRetries: 4,
    });
    expect(config.key).toBe(KEY);
  });

  it("falls back to the tree's /byteseek/llm/* entries, int64 or text", async () => {
    await tree.set("/byteseek/llm/api", str("anthropic"));
    await tree.set("/byteseek/llm/url", str("https://api.anthropic.com/v1"));
    await tree.set("/byteseek/llm/model", str("claude-test"));
    await tree.set("/byteseek/llm/key", str(KEY));
    await tree.set("/byteseek/llm/maxTokens", int64(512));
    await tree.set("/byteseek/llm/timeoutMs", str("9000"));

    const config = await resolveLlmConfig({ env: {}, tree });

    expect(config).toMatchObject({
      api: "anthropic",
      url: "https://api.anthropic.com",
      model: "claude-test",
      maxTokens: 512,
      timeoutMs: 9000,
    });
    expect(config.key).toBe(KEY);
  });

  it("lets the environment win over the tree, setting by setting", async () => {
    await tree.set("/byteseek/llm/api", str("anthropic"));
    await tree.set("/byteseek/llm/url", str("http://tree.example"));
    await tree.set("/byteseek/llm/model", str("from-tree"));
    const config = await resolveLlmConfig({ env: { BYTESEEK_LLM_MODEL: "from-env" }, tree });
    expect(config).toMatchObject({ api: "anthropic", url: "http://tree.example", model: "from-env" });
    expect(config.key).toBeUndefined();
  });

  it("treats an empty variable as unset", async () => {
    await tree.set("/byteseek/llm/model", str("from-tree"));
    const config = await resolveLlmConfig({ env: { ...FULL_ENV, BYTESEEK_LLM_MODEL: "" }, tree });
    expect(config.model).toBe("from-tree");
  });

  it("works without a tree", async () => {
    const config = await resolveLlmConfig({ env: FULL_ENV });
    expect(config.model).toBe("qwen");
  });

  it("names every missing variable when nothing is configured", async () => {
    const err = await agentFailure(resolveLlmConfig({ env: {}, tree }));
    expect(err.code).toBe("LLM_NOT_CONFIGURED");
    expect(err.message).toContain("BYTESEEK_LLM_API, BYTESEEK_LLM_URL and BYTESEEK_LLM_MODEL");
    expect(err.message).toContain("/byteseek/llm/url");
    expect(err.details.missing).toEqual(["BYTESEEK_LLM_API", "BYTESEEK_LLM_URL", "BYTESEEK_LLM_MODEL"]);
  });

  it("names only what is missing", async () => {
    const err = await agentFailure(
      resolveLlmConfig({ env: { BYTESEEK_LLM_API: "openai", BYTESEEK_LLM_URL: "http://x" }, tree }),
    );
    expect(err.code).toBe("LLM_NOT_CONFIGURED");
    expect(err.message).toContain("set BYTESEEK_LLM_MODEL");
    expect(err.message).not.toContain("BYTESEEK_LLM_URL (");
  });

  it("refuses an unknown api, naming the variable", async () => {
    const err = await agentFailure(resolveLlmConfig({ env: { ...FULL_ENV, BYTESEEK_LLM_API: "gemini" } }));
    expect(err.code).toBe("LLM_BAD_CONFIG");
    expect(err.message).toContain("BYTESEEK_LLM_API");
    expect(err.message).toContain('"openai" or "anthropic"');
  });

  it("refuses a URL that is not http(s)", async () => {
    const err = await agentFailure(
      resolveLlmConfig({ env: { ...FULL_ENV, BYTESEEK_LLM_URL: "ftp://host" } }),
    );
    expect(err.code).toBe("LLM_BAD_CONFIG");
    expect(err.message).toContain("BYTESEEK_LLM_URL");
  });

  it("refuses a token limit that is not a positive integer", async () => {
    for (const bad of ["lots", "0", "-5", "1.5"]) {
      const err = await agentFailure(
        resolveLlmConfig({ env: { ...FULL_ENV, BYTESEEK_LLM_MAX_TOKENS: bad } }),
      );
      expect(err.code).toBe("LLM_BAD_CONFIG");
      expect(err.message).toContain("BYTESEEK_LLM_MAX_TOKENS");
    }
  });

  it("refuses a tree entry of the wrong kind, naming the key and the variable", async () => {
    await tree.set("/byteseek/llm/maxTokens", str("many"));
    const err = await agentFailure(
      resolveLlmConfig({ env: { ...FULL_ENV, BYTESEEK_LLM_MAX_TOKENS: "" }, tree }),
    );
    expect(err.message).toContain("/byteseek/llm/maxTokens");
    expect(err.message).toContain("BYTESEEK_LLM_MAX_TOKENS");

    await tree.set("/byteseek/llm/model", bool(true));
    const kind = await agentFailure(resolveLlmConfig({ env: { ...FULL_ENV, BYTESEEK_LLM_MODEL: "" }, tree }));
    expect(kind.code).toBe("LLM_BAD_CONFIG");
    expect(kind.message).toContain("/byteseek/llm/model must be a char/utf8 value");
  });

  it("keeps the key out of serialised, inspected and spread copies", async () => {
    const config = await resolveLlmConfig({ env: FULL_ENV, tree });
    expect(JSON.stringify(config)).not.toContain(KEY);
    expect(inspect(config, { showHidden: false })).not.toContain(KEY);
    expect(Object.keys(config)).not.toContain("key");
    expect({ ...config }).not.toHaveProperty("key");
  });

  it("keeps the key out of its errors", async () => {
    const err = await agentFailure(resolveLlmConfig({ env: { ...FULL_ENV, BYTESEEK_LLM_MODEL: "" } }));
    expect(`${err.message} ${JSON.stringify(err)} ${inspect(err)}`).not.toContain(KEY);
  });
});

describe("where the server's key goes", () => {
  const NO_URL = { BYTESEEK_LLM_API: "openai", BYTESEEK_LLM_MODEL: "m" };

  it("refuses the environment's key with a URL from the tree, naming what to set", async () => {
    await tree.set("/byteseek/llm/url", str("http://attacker.example/v1"));
    const err = await agentFailure(resolveLlmConfig({ env: { ...NO_URL, BYTESEEK_LLM_KEY: KEY }, tree }));
    expect(err.code).toBe("LLM_BAD_CONFIG");
    expect(err.message).toContain("BYTESEEK_LLM_KEY is sent only to the URL set beside it");
    expect(err.message).toContain("/byteseek/llm/url");
    expect(err.message).not.toContain(KEY);
    // the same through a client that names that URL
    const named = await agentFailure(
      resolveLlmConfig({
        env: { ...NO_URL, BYTESEEK_LLM_KEY: KEY },
        tree,
        client: { url: "http://attacker.example/v1" },
      }),
    );
    expect(named.code).toBe("LLM_BAD_CONFIG");
  });

  it("sends the tree's key to the tree's URL or the environment's", async () => {
    await tree.set("/byteseek/llm/url", str("http://tree.example/v1"));
    await tree.set("/byteseek/llm/key", str(KEY));
    expect((await resolveLlmConfig({ env: NO_URL, tree })).key).toBe(KEY);
    const envUrl = await resolveLlmConfig({
      env: { ...NO_URL, BYTESEEK_LLM_URL: "http://env.example" },
      tree,
    });
    expect(envUrl.url).toBe("http://env.example");
    expect(envUrl.key).toBe(KEY);
  });
});

describe("settings a client sends with a turn", () => {
  it("win over the server's environment and tree, field by field", async () => {
    await tree.set("/byteseek/llm/model", str("tree-model"));
    const config = await resolveLlmConfig({
      env: FULL_ENV,
      tree,
      client: { model: "client-model", maxTokens: "99" },
    });
    expect(config).toMatchObject({ api: "openai", url: "http://127.0.0.1:8080/v1", model: "client-model" });
    expect(config.maxTokens).toBe(99);
    expect(config.key).toBe(KEY); // the server's own URL: its key goes with it
  });

  it("never pair the server's key with a URL the client chose", async () => {
    const allowing = {
      ...FULL_ENV,
      BYTESEEK_LLM_CLIENT_URLS: "http://attacker.example, http://elsewhere.example",
    };
    const elsewhere = await resolveLlmConfig({
      env: allowing,
      tree,
      client: { url: "http://attacker.example/v1" },
    });
    expect(elsewhere.url).toBe("http://attacker.example/v1");
    expect(elsewhere.key).toBeUndefined();

    // the tree's key too, and when the server has no URL of its own
    await tree.set("/byteseek/llm/key", str(KEY));
    const noUrl = await resolveLlmConfig({
      env: { BYTESEEK_LLM_API: "openai", BYTESEEK_LLM_MODEL: "m", BYTESEEK_LLM_CLIENT_URLS: "*" },
      tree,
      client: { url: "http://attacker.example/v1" },
    });
    expect(noUrl.key).toBeUndefined();

    const ownKey = await resolveLlmConfig({
      env: allowing,
      tree,
      client: { url: "http://elsewhere.example/v1", key: "client-key" },
    });
    expect(ownKey.key).toBe("client-key");

    const sameUrl = await resolveLlmConfig({
      env: FULL_ENV,
      tree,
      client: { url: "http://127.0.0.1:8080/v1" },
    });
    expect(sameUrl.key).toBe(KEY);
  });

  it("refuse a URL the server does not list in BYTESEEK_LLM_CLIENT_URLS, saying what to set", async () => {
    const refused = await agentFailure(
      resolveLlmConfig({ env: FULL_ENV, tree, client: { url: "http://169.254.169.254/latest" } }),
    );
    expect(refused.code).toBe("LLM_CLIENT_REFUSED");
    expect(refused.message).toContain("BYTESEEK_LLM_CLIENT_URLS=http://169.254.169.254");
    expect(refused.message).toContain("unset BYTESEEK_LLM_URL");
    // an origin is the whole rule: another port or scheme is another origin
    const otherPort = { ...FULL_ENV, BYTESEEK_LLM_CLIENT_URLS: "http://model.example:8080" };
    const wrongPort = await agentFailure(
      resolveLlmConfig({ env: otherPort, tree, client: { url: "http://model.example:9090/v1" } }),
    );
    expect(wrongPort.code).toBe("LLM_CLIENT_REFUSED");
    const listed = await resolveLlmConfig({
      env: otherPort,
      tree,
      client: { url: "http://MODEL.example:8080/v1" },
    });
    expect(listed.url).toBe("http://MODEL.example:8080/v1");
    const bad = await agentFailure(
      resolveLlmConfig({
        env: { ...FULL_ENV, BYTESEEK_LLM_CLIENT_URLS: "http://model.example/v1" },
        tree,
        client: { url: "http://other.example/v1" },
      }),
    );
    expect(bad.code).toBe("LLM_BAD_CONFIG");
    expect(bad.message).toContain("BYTESEEK_LLM_CLIENT_URLS lists origins");
  });

  it("say where they looked when nothing names a model, and how to set it on either side", async () => {
    const err = await agentFailure(resolveLlmConfig({ env: {}, tree, client: {} }));
    expect(err.code).toBe("LLM_NOT_CONFIGURED");
    expect(err.message).toContain("in the settings the client sent, in the server's environment");
    expect(err.message).toContain(
      "/byteseek/llm/api, /byteseek/llm/url and /byteseek/llm/model in the server's tree",
    );
    expect(err.message).toContain("kvspace set /byteseek/llm/api string:");
  });

  it("name a bad client value by its variable", async () => {
    const err = await agentFailure(resolveLlmConfig({ env: FULL_ENV, tree, client: { url: "ftp://x" } }));
    expect(err.code).toBe("LLM_BAD_CONFIG");
    expect(err.message).toContain("BYTESEEK_LLM_URL sent by the client must be an http:// or https:// URL");
  });

  it("are read from the client's environment without the key unless asked", () => {
    const env = { ...FULL_ENV, BYTESEEK_LLM_TIMEOUT_MS: " ", OTHER: "x" };
    expect(clientLlmSettings(env)).toEqual({
      api: "openai",
      url: "http://127.0.0.1:8080/v1/",
      model: "qwen",
      maxTokens: "2048",
    });
    expect(clientLlmSettings(env, { withKey: true }).key).toBe(KEY);
  });
});
