import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { DOMAIN_CLASSES, LOCATION_KINDS, SEVERITIES } from "../../src/envelope/taxonomy.ts";
import { TargetProfileSchema } from "../../src/targets/profile-schema.ts";
import { APP_ROOT, readSource } from "./helpers.ts";
import { openapi } from "./openapi.ts";

interface Entry {
  id: string;
  title: string;
  domain: keyof typeof DOMAIN_CLASSES;
  class?: string;
  severity?: string;
  locations: Record<string, string>[];
  fixed_in?: string | null;
  why?: string;
}

const ledger = parse(readSource("defects.yaml")) as {
  ledger_version: number;
  target: string;
  defects: Entry[];
  not_defects: Entry[];
};

const MINIMUMS: Record<string, number> = {
  api: 6,
  security: 6,
  data: 3,
  performance: 3,
  realtime: 3,
  architecture: 3,
  ui: 2,
  usability: 2,
};

describe("the golden ledger", () => {
  it("has the fixed format", () => {
    expect(ledger.ledger_version).toBe(1);
    expect(ledger.target).toBe("demo");
    const ids = [...ledger.defects, ...ledger.not_defects].map((entry) => entry.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const defect of ledger.defects) {
      expect(Object.keys(DOMAIN_CLASSES), defect.id).toContain(defect.domain);
      expect(DOMAIN_CLASSES[defect.domain] as readonly string[], defect.id).toContain(defect.class);
      expect(SEVERITIES as readonly string[], defect.id).toContain(defect.severity);
      expect(defect.fixed_in, defect.id).toBeNull();
      expect(defect.title.length, defect.id).toBeGreaterThan(10);
    }
    for (const entry of ledger.not_defects) {
      expect(Object.keys(DOMAIN_CLASSES), entry.id).toContain(entry.domain);
      expect(entry.why?.length ?? 0, entry.id).toBeGreaterThan(20);
    }
  });

  it("covers every domain with enough defects and lists enough not-defects", () => {
    expect(ledger.defects.length).toBeGreaterThanOrEqual(28);
    expect(ledger.not_defects.length).toBeGreaterThanOrEqual(8);
    for (const [domain, minimum] of Object.entries(MINIMUMS)) {
      expect(
        ledger.defects.filter((defect) => defect.domain === domain).length,
        domain,
      ).toBeGreaterThanOrEqual(minimum);
    }
    expect(new Set(ledger.defects.map((defect) => defect.severity)).size).toBe(4);
  });

  it("uses locations that exist in the app", () => {
    const lock = JSON.parse(readSource("package-lock.json"));
    const pageRoutes = [...readSource("src/routes/pages.ts").matchAll(/app\.get\(\s*"([^"]+)"/g)].map(
      (m) => m[1],
    );
    const registered = readdirSync(path.join(APP_ROOT, "src/routes")).flatMap((file) =>
      [...readSource(`src/routes/${file}`).matchAll(/\.(get|post|put|patch|delete)\(\s*"([^"]+)"/g)].map(
        (m) => `${m[1]!.toUpperCase()} ${m[2]!.replace(/:(\w+)/g, "{$1}")}`,
      ),
    );
    for (const entry of [...ledger.defects, ...ledger.not_defects]) {
      expect(entry.locations.length, entry.id).toBeGreaterThan(0);
      for (const location of entry.locations) {
        const keys = Object.keys(location);
        expect(keys, entry.id).toHaveLength(1);
        const kind = keys[0]!;
        const value = location[kind]!;
        expect(LOCATION_KINDS as readonly string[], entry.id).toContain(kind);
        if (kind === "endpoint") {
          const [method, route] = value.split(" ");
          const documented = openapi.paths[route!]?.[method!.toLowerCase()] !== undefined;
          expect(documented || registered.includes(value), `${entry.id} ${value}`).toBe(true);
          if (!documented) {
            const explained = [
              ...(ledger.defects.find((d) => d.class === "undocumented-endpoint")?.locations ?? []),
              ...(ledger.not_defects.find((n) => n.id === "DEMO-N18")?.locations ?? []),
            ];
            expect(explained, `${entry.id} ${value}`).toContainEqual(location);
          }
        } else if (kind === "file") {
          expect(existsSync(path.join(APP_ROOT, value)), `${entry.id} ${value}`).toBe(true);
        } else if (kind === "dependency") {
          const [name, version] = value.split("@");
          expect(lock.packages[`node_modules/${name}`]?.version, entry.id).toBe(version);
        } else if (kind === "page") {
          const template = value.replace(/\{[^}]+\}/g, ":id");
          expect(pageRoutes.includes(template) || value === "/reports", `${entry.id} ${value}`).toBe(true);
        } else if (kind === "channel") {
          expect(["/ws", "/ws/presence"], entry.id).toContain(value);
        }
      }
    }
  });

  it("has a test named after every defect and not-defect", () => {
    const testFiles = readdirSync(path.join(APP_ROOT, "tests")).filter(
      (file) => file.endsWith(".test.ts") && file !== "ledger.test.ts",
    );
    const sources = testFiles
      .map((file) => readFileSync(path.join(APP_ROOT, "tests", file), "utf8"))
      .join("\n");
    const missing = [...ledger.defects, ...ledger.not_defects]
      .map((entry) => entry.id)
      .filter((id) => !sources.includes(`it("${id} `));
    expect(missing).toEqual([]);
  });
});

describe("the demo target profile", () => {
  const profileDir = path.resolve(APP_ROOT, "../config/targets");
  const profile = TargetProfileSchema.parse(parse(readFileSync(path.join(profileDir, "demo.yaml"), "utf8")));

  it("validates and points at this app, its document, its ledger and its seed users", () => {
    expect(path.resolve(profileDir, profile.source.path!)).toBe(path.resolve(APP_ROOT));
    expect(profile.environment.mode).toBe("managed");
    expect(existsSync(path.join(APP_ROOT, profile.api!.openapi!))).toBe(true);
    expect(profile.golden_ledger).toBe("defects.yaml");
    expect(profile.websocket?.paths).toEqual(["/ws", "/ws/presence"]);
    const secrets = readFileSync(path.join(profileDir, profile.environment.secrets_file!), "utf8");
    for (const user of profile.users) {
      const name = user.password!.replace("secret_ref:", "");
      expect(secrets, user.name).toMatch(new RegExp(`^${name}=.+$`, "m"));
    }
    const roles = profile.users.map((user) => `${user.role}@${user.tenant}`);
    expect(roles.filter((role) => role === "member@acme")).toHaveLength(2);
    expect(roles).toContain("member@globex");
    expect(roles).toContain("admin@acme");
    expect(roles.some((role) => role.startsWith("platform_admin@"))).toBe(true);
  });
});
