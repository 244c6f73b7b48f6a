import { describe, expect, it } from "vitest";
import { QaasError } from "../../src/errors.ts";
import { createOrchestratorSeat, createWorkerSeat } from "../../src/seats/create-seat.ts";
import { OpenAICompatibleSeat } from "../../src/seats/openai-compatible-seat.ts";
import {
  checkApiKeyName,
  checkBaseUrl,
  checkResolvedHost,
  classifyHost,
} from "../../src/seats/seat-safety.ts";
import { startOpenAIFakeServer } from "./fakes/openai-fake-server.ts";
import { recordingSeatRequest } from "./fakes/seat-request.ts";

describe("api_key_env names", () => {
  it.each([
    "AWS_SECRET_ACCESS_KEY",
    "AWS_ACCESS_KEY_ID",
    "GITHUB_TOKEN",
    "HF_TOKEN",
    "ANTHROPIC_AUTH_TOKEN",
    "DB_PASSWORD",
    "PGPASSWORD",
    "MYSQL_PWD_PASSWD",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "SSH_AUTH_SOCK",
    "JWT_SIGNING_KEY",
    "SESSION_KEY",
    "COOKIE_KEY",
    "DATABASE_URL",
    "PRIVATE_KEY",
    "STRIPE_API_KEY",
    "SENTRY_DSN",
    "app_secret",
  ])("refuses %s as a non-model secret", (name) => {
    const verdict = checkApiKeyName(name);
    expect(verdict.refusal).toMatch(/looks like a secret that is not a model key/);
    expect(verdict.notice).toBeUndefined();
  });

  it.each([
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "OPENROUTER_API_KEY",
    "GROQ_API_KEY",
    "MISTRAL_API_KEY",
    "TOGETHER_API_KEY",
    "DEEPSEEK_API_KEY",
    "QAAS_LLM_KEY",
    "TEAM_LLM_API_KEY",
  ])("allows the model-key name %s silently", (name) => {
    expect(checkApiKeyName(name)).toEqual({});
  });

  it("allows an unknown name with a loud notice", () => {
    const verdict = checkApiKeyName("MY_PROVIDER_KEY");
    expect(verdict.refusal).toBeUndefined();
    expect(verdict.notice).toMatch(
      /"MY_PROVIDER_KEY" is not a known model-key variable: its value WILL be sent/,
    );
  });

  it("refuses a key pasted where the variable's name belongs, without echoing it", () => {
    const verdict = checkApiKeyName("sk-proj-abc123-secretvalue");
    expect(verdict.refusal).toMatch(/must be the NAME of an environment variable/);
    expect(verdict.refusal).not.toContain("abc123");
  });

  it("returns the notice as a seat warning from createWorkerSeat", () => {
    const { warnings } = createWorkerSeat({
      backend: "openai-compatible",
      model: "m",
      api_key_env: "MY_PROVIDER_KEY",
    });
    expect(warnings).toEqual([
      { type: "notice", feature: "api_key_env", message: expect.stringContaining("MY_PROVIDER_KEY") },
    ]);
  });
});

describe("base URLs", () => {
  it.each([
    ["http://10.0.0.5:8000/v1", "private"],
    ["http://172.16.3.4/v1", "private"],
    ["http://172.31.255.255/v1", "private"],
    ["http://192.168.1.20:11434/v1", "private"],
    ["http://100.64.0.1/v1", "private"],
    ["http://[fd12:3456::1]/v1", "private"],
    ["http://[fc00::1]/v1", "private"],
    ["http://169.254.10.10/", "link-local"],
    ["http://[fe80::1]/", "link-local"],
    ["http://169.254.169.254/latest/meta-data", "metadata"],
    ["http://169.254.170.2/v2/credentials", "metadata"],
    ["http://[fd00:ec2::254]/", "metadata"],
    ["http://metadata.google.internal/computeMetadata/v1", "metadata"],
    ["http://metadata.google.internal./", "metadata"],
    // IPv4-mapped IPv6, dotted and hex
    ["http://[::ffff:10.0.0.1]/", "private"],
    ["http://[::ffff:a00:1]/", "private"],
    ["http://[::ffff:169.254.169.254]/", "metadata"],
    ["http://[0:0:0:0:0:ffff:c0a8:0101]/", "private"],
    // decimal, hex and octal IPv4 forms (the URL parser normalises them)
    ["http://2852039166/", "metadata"],
    ["http://0xa9fea9fe/", "metadata"],
    ["http://0251.0376.0251.0376/", "metadata"],
    ["http://0x0a000001/", "private"],
    ["http://167772161/", "private"],
    // loopback, refused unless the seat is marked is_local
    ["http://127.0.0.1:11434/v1", "loopback"],
    ["http://127.1/", "loopback"],
    ["http://localhost:8080/v1", "loopback"],
    ["http://[::1]:8080/v1", "loopback"],
    ["http://[::ffff:127.0.0.1]/", "loopback"],
    ["http://2130706433/", "loopback"],
    // unspecified and IPv4-embedding forms that dodge the IPv4 rules
    ["http://0.0.0.0:8000/", "reserved"],
    ["http://0/", "reserved"],
    ["http://[::]/", "reserved"],
    ["http://[::a9fe:a9fe]/", "reserved"],
    ["http://[64:ff9b::a00:1]/", "reserved"],
  ])("refuses %s (%s) on a seat that is not local", (url, addressClass) => {
    expect(classifyHost(new URL(url).hostname)).toBe(addressClass);
    const refusal = checkBaseUrl(url, false);
    expect(refusal).toContain(`a ${addressClass} address`);
  });

  it.each([
    "https://api.openai.com/v1",
    "https://openrouter.ai/api/v1",
    "https://api.anthropic.com",
    "http://8.8.8.8/v1",
    "http://[2001:4860:4860::8888]/v1",
    "http://[::ffff:8.8.8.8]/v1",
  ])("allows the public endpoint %s", (url) => {
    expect(checkBaseUrl(url, false)).toBeUndefined();
  });

  it.each([
    "http://127.0.0.1:11434/v1",
    "http://127.0.0.2:8000",
    "http://localhost:8080/v1",
    "http://api.localhost/v1",
    "http://[::1]:8000/v1",
    "http://[::ffff:7f00:1]/",
  ])("is_local allows the loopback URL %s", (url) => {
    expect(checkBaseUrl(url, true)).toBeUndefined();
  });

  it.each([
    ["http://192.168.1.20:11434/v1", "a private address"],
    ["http://169.254.169.254/", "a metadata address"],
    ["http://[::ffff:10.0.0.1]/", "a private address"],
    ["https://api.openai.com/v1", "not loopback"],
    ["http://0.0.0.0:11434/", "a reserved address"],
  ])("is_local refuses the non-loopback URL %s", (url, what) => {
    const refusal = checkBaseUrl(url, true);
    expect(refusal).toContain("is_local: true requires a loopback base URL");
    expect(refusal).toContain(what);
  });

  it.each([
    ["file:///etc/passwd", /scheme "file:" is not allowed/],
    ["ftp://example.com/", /scheme "ftp:" is not allowed/],
    ["gopher://127.0.0.1:6379/", /scheme "gopher:" is not allowed/],
    ["not a url", /is not a valid URL/],
    ["https://user:pass@api.example.com/v1", /must not embed credentials/],
  ])("refuses %s", (url, message) => {
    expect(checkBaseUrl(url, false)).toMatch(message);
  });
});

describe("seat creation", () => {
  it("refuses an unsafe seat before anything runs, naming where it came from", () => {
    const build = () =>
      createWorkerSeat(
        {
          backend: "openai-compatible",
          model: "m",
          base_url: "http://169.254.169.254/v1",
          api_key_env: "AWS_SECRET_ACCESS_KEY",
        },
        { source: "config/system.yaml seats.worker" },
      );
    expect(build).toThrow(QaasError);
    expect(build).toThrow(
      /config\/system\.yaml seats\.worker: openai-compatible seat refused: .*AWS_SECRET_ACCESS_KEY.*metadata/,
    );
  });

  it("requires is_local seats to name a base URL", () => {
    expect(() => createWorkerSeat({ backend: "anthropic", model: "m", is_local: true })).toThrow(
      /is_local: true requires a loopback base_url, and none is set/,
    );
  });

  it("applies the same checks to a model orchestrator seat", () => {
    expect(() =>
      createOrchestratorSeat({
        backend: "openai-compatible",
        model: "m",
        base_url: "http://[::ffff:a9fe:a9fe]/v1",
      }),
    ).toThrow(/seats\.orchestrator: openai-compatible seat refused: .*metadata/);
  });

  it("builds a seat without a key in the environment and without the network", () => {
    const saved = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    try {
      const { seat, warnings } = createWorkerSeat({ backend: "openai-compatible", model: "gpt-test" });
      expect(seat.backend).toBe("openai-compatible");
      expect(warnings).toEqual([]);
    } finally {
      if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
    }
  });
});

describe("call-time resolution", () => {
  const resolvesTo =
    (...addresses: string[]) =>
    async () =>
      addresses.map((address) => ({ address }));

  it.each([
    ["https://models.example.com/v1", false, ["93.184.216.34"], undefined],
    [
      "https://rebind.example.com/v1",
      false,
      ["93.184.216.34", "169.254.169.254"],
      /resolves to 169\.254\.169\.254, a metadata address/,
    ],
    ["https://lan.example.com/v1", false, ["192.168.0.9"], /a private address/],
    ["http://my-box.localdomain:8000/v1", true, ["127.0.1.1"], undefined],
    ["http://my-box.example:8000/v1", true, ["10.1.2.3"], /is_local seats may only reach loopback/],
  ] as const)("%s (is_local %s) resolving to %o", async (url, isLocal, addresses, refusal) => {
    const verdict = await checkResolvedHost(url, isLocal, resolvesTo(...addresses));
    if (refusal === undefined) expect(verdict).toBeUndefined();
    else expect(verdict).toMatch(refusal);
  });

  it("skips literal addresses and leaves resolution failures to the request", async () => {
    const failing = async () => Promise.reject(new Error("ENOTFOUND"));
    await expect(checkResolvedHost("http://8.8.8.8/v1", false, failing)).resolves.toBeUndefined();
    await expect(checkResolvedHost("https://nowhere.example/v1", false, failing)).resolves.toBeUndefined();
  });

  it("refuses the call before any byte is sent when the host resolves somewhere forbidden", async () => {
    const server = await startOpenAIFakeServer([{ text: "must not be reached" }]);
    try {
      const port = new URL(server.url).port;
      const seat = new OpenAICompatibleSeat(
        { backend: "openai-compatible", model: "m", base_url: `http://models.example.com:${port}/v1` },
        resolvesTo("10.0.0.7"),
      );
      await expect(seat.run(recordingSeatRequest())).rejects.toMatchObject({
        code: "SEAT_REFUSED",
        message: expect.stringContaining("resolves to 10.0.0.7"),
      });
      expect(server.requests).toHaveLength(0);
    } finally {
      await server.close();
    }
  });
});
