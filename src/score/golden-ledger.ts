import fs from "node:fs";
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument, type YAMLMap } from "yaml";
import {
  DOMAIN_CLASSES,
  DOMAINS,
  type Domain,
  LOCATION_KINDS,
  type LocationKind,
  SEVERITIES,
  type Severity,
} from "../envelope/taxonomy.ts";
import { QaasError } from "../errors.ts";

// The answer key `qaas score` compares a run with (spec/golden-ledger.md). It is read by walking the YAML
// tree rather than through a schema so that every problem can name its line, and every problem is listed
// at once: a person fixing a ledger should not have to run the command once per typo.

export const GOLDEN_LEDGER_VERSION = 1;

export interface LedgerLocation {
  kind: LocationKind;
  value: string;
}

export interface GoldenDefect {
  id: string;
  title: string;
  domain: Domain;
  class: string;
  severity: Severity;
  locations: LedgerLocation[];
  /** A git ref once repaired; a fixed defect is not scored. */
  fixed_in: string | null;
  line: number;
}

export interface GoldenNotDefect {
  id: string;
  title: string;
  domain: Domain;
  /** Optional: the class the place looks like it has. */
  class?: string;
  locations: LedgerLocation[];
  why: string;
  line: number;
}

export interface GoldenLedger {
  file: string;
  ledger_version: 1;
  target: string;
  defects: GoldenDefect[];
  not_defects: GoldenNotDefect[];
}

export interface LedgerProblem {
  line?: number;
  /** `defects[2] "BILL-03"`, or undefined for the top level. */
  entry?: string;
  field: string;
  message: string;
}

const HTTP_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "CONNECT"];
const TOP_LEVEL_KEYS = ["ledger_version", "target", "defects", "not_defects"];
const DEFECT_KEYS = ["id", "title", "domain", "class", "severity", "locations", "fixed_in"];
const NOT_DEFECT_KEYS = ["id", "title", "domain", "class", "locations", "why"];

const LOCATION_FORMS: Record<LocationKind, { test: (value: string) => boolean; form: string }> = {
  endpoint: {
    test: (value) => {
      const match = value.match(/^([A-Za-z]+)\s+(\/\S*)$/);
      return match !== null && HTTP_METHODS.includes(match[1]!.toUpperCase());
    },
    form: `"METHOD /path" with METHOD one of ${HTTP_METHODS.join(", ")}, e.g. "PATCH /api/users/{id}"`,
  },
  page: { test: (value) => /^\/\S*$/.test(value), form: 'a UI route path starting with "/"' },
  channel: { test: (value) => /^\/\S*$/.test(value), form: 'a WebSocket path starting with "/"' },
  table: { test: (value) => /^[^.\s]+(\.[^.\s]+)?$/.test(value), form: '"table" or "table.column"' },
  file: {
    test: (value) => !/\s$|^\s/.test(value) && !value.startsWith("/") && !/^[A-Za-z]:[\\/]/.test(value),
    form: "a source path relative to the target root",
  },
  dependency: { test: (value) => /^@?[^@\s]+@[^@\s]+$/.test(value), form: '"name@version"' },
};

export function loadGoldenLedger(file: string): GoldenLedger {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === "ENOENT" ? "does not exist" : String(error);
    throw new QaasError("LEDGER_NOT_FOUND", `golden ledger ${file} ${reason}; pass --ledger <path>`);
  }
  return parseGoldenLedger(text, file);
}

export function parseGoldenLedger(text: string, file: string): GoldenLedger {
  const result = checkGoldenLedger(text, file);
  if (result.problems.length > 0 || result.ledger === undefined) {
    throw new QaasError("LEDGER_INVALID", describeProblems(file, result.problems));
  }
  return result.ledger;
}

export function describeProblems(file: string, problems: readonly LedgerProblem[]): string {
  const count = problems.length === 1 ? "1 problem" : `${problems.length} problems`;
  const lines = problems.map((problem) => {
    const where = [
      problem.line !== undefined ? `line ${problem.line}` : undefined,
      problem.entry,
      `field ${problem.field}`,
    ].filter((part) => part !== undefined);
    return `  ${file}: ${where.join(", ")}: ${problem.message}`;
  });
  return `golden ledger ${file} breaks the format of spec/golden-ledger.md (${count}); fix it and run again:\n${lines.join("\n")}`;
}

/** Every problem in a ledger text, and the ledger itself when there are none. */
export function checkGoldenLedger(
  text: string,
  file: string,
): { ledger?: GoldenLedger; problems: LedgerProblem[] } {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter });
  if (document.errors.length > 0) {
    return {
      problems: document.errors.map((error) => ({
        line: error.linePos?.[0].line,
        field: "(yaml)",
        // The first line of yaml's message, without its own position: the line is reported separately.
        message: (error.message.split("\n")[0] ?? error.message).replace(/ at line \d+, column \d+:?$/, ""),
      })),
    };
  }
  const walker = new LedgerWalker(lineCounter);
  const ledger = walker.ledger(document.contents, file);
  return { ledger: walker.problems.length === 0 ? ledger : undefined, problems: walker.problems };
}

class LedgerWalker {
  readonly problems: LedgerProblem[] = [];
  private readonly seenIds = new Map<string, string>();

  constructor(private readonly lineCounter: LineCounter) {}

  ledger(root: unknown, file: string): GoldenLedger | undefined {
    if (!isMap(root)) {
      this.report(root, undefined, "(root)", "must be a mapping with ledger_version, target and defects");
      return undefined;
    }
    this.unknownKeys(root, TOP_LEVEL_KEYS, undefined);
    const version = root.get("ledger_version", true);
    if (!isScalar(version) || version.value !== GOLDEN_LEDGER_VERSION) {
      this.report(version ?? root, undefined, "ledger_version", `must be ${GOLDEN_LEDGER_VERSION}`);
    }
    const target = this.text(root, "target", undefined) ?? "";
    const defectNodes = this.list(root, "defects", true);
    const notDefectNodes = this.list(root, "not_defects", false);
    const defects = defectNodes.map((node, index) => this.defect(node, index));
    const notDefects = notDefectNodes.map((node, index) => this.notDefect(node, index));
    return {
      file,
      ledger_version: 1,
      target,
      defects: defects.filter((defect): defect is GoldenDefect => defect !== undefined),
      not_defects: notDefects.filter((entry): entry is GoldenNotDefect => entry !== undefined),
    };
  }

  private defect(node: unknown, index: number): GoldenDefect | undefined {
    const position = `defects[${index}]`;
    if (!isMap(node)) {
      this.report(
        node,
        position,
        "(entry)",
        "must be a mapping with id, title, domain, class, severity, locations",
      );
      return undefined;
    }
    const { id, entry } = this.identity(node, position);
    this.unknownKeys(node, DEFECT_KEYS, entry);
    const title = this.text(node, "title", entry);
    const domain = this.domain(node, entry);
    const defectClass = this.defectClass(node, domain, entry, true);
    const severity = this.severity(node, entry);
    const locations = this.locations(node, entry);
    const fixedIn = this.fixedIn(node, entry);
    if (
      id === undefined ||
      title === undefined ||
      domain === undefined ||
      defectClass === undefined ||
      severity === undefined ||
      locations === undefined ||
      fixedIn === undefined
    ) {
      return undefined;
    }
    return {
      id,
      title,
      domain,
      class: defectClass,
      severity,
      locations,
      fixed_in: fixedIn.value,
      line: this.lineOf(node) ?? 0,
    };
  }

  private notDefect(node: unknown, index: number): GoldenNotDefect | undefined {
    const position = `not_defects[${index}]`;
    if (!isMap(node)) {
      this.report(node, position, "(entry)", "must be a mapping with id, title, domain, locations, why");
      return undefined;
    }
    const { id, entry } = this.identity(node, position);
    this.unknownKeys(node, NOT_DEFECT_KEYS, entry);
    const title = this.text(node, "title", entry);
    const domain = this.domain(node, entry);
    const defectClass = this.defectClass(node, domain, entry, false);
    const locations = this.locations(node, entry);
    const why = this.text(node, "why", entry, "a not_defect must say why the place is correct");
    if (id === undefined || title === undefined || domain === undefined) return undefined;
    if (locations === undefined || why === undefined) return undefined;
    return {
      id,
      title,
      domain,
      ...(defectClass !== undefined ? { class: defectClass } : {}),
      locations,
      why,
      line: this.lineOf(node) ?? 0,
    };
  }

  private identity(node: YAMLMap, position: string): { id?: string; entry: string } {
    const id = this.text(node, "id", position);
    if (id === undefined) return { entry: position };
    const entry = `${position} "${id}"`;
    const first = this.seenIds.get(id);
    if (first !== undefined) {
      this.report(
        node.get("id", true),
        entry,
        "id",
        `duplicate id, already used by ${first}; ids are unique`,
      );
      return { entry };
    }
    this.seenIds.set(id, entry);
    return { id, entry };
  }

  private domain(node: YAMLMap, entry: string): Domain | undefined {
    const value = this.text(node, "domain", entry);
    if (value === undefined) return undefined;
    if (!(DOMAINS as string[]).includes(value)) {
      this.report(
        node.get("domain", true),
        entry,
        "domain",
        `unknown domain "${value}" (valid: ${DOMAINS.join(", ")})`,
      );
      return undefined;
    }
    return value as Domain;
  }

  private defectClass(node: YAMLMap, domain: Domain | undefined, entry: string, required: boolean) {
    if (!required && !node.has("class")) return undefined;
    const value = this.text(node, "class", entry);
    if (value === undefined || domain === undefined) return undefined;
    const classes = DOMAIN_CLASSES[domain] as readonly string[];
    if (!classes.includes(value)) {
      const message = `"${value}" is not a class of domain "${domain}" (valid: ${classes.join(", ")})`;
      this.report(node.get("class", true), entry, "class", message);
      return undefined;
    }
    return value;
  }

  private severity(node: YAMLMap, entry: string): Severity | undefined {
    const value = this.text(node, "severity", entry);
    if (value === undefined) return undefined;
    if (!(SEVERITIES as readonly string[]).includes(value)) {
      this.report(
        node.get("severity", true),
        entry,
        "severity",
        `"${value}" must be ${SEVERITIES.join(" | ")}`,
      );
      return undefined;
    }
    return value as Severity;
  }

  private fixedIn(node: YAMLMap, entry: string): { value: string | null } | undefined {
    const value = node.get("fixed_in", true);
    if (value === undefined || (isScalar(value) && value.value === null)) return { value: null };
    // A numeric-looking commit (all digits) parses as a number; its source text is the ref.
    if (isScalar(value) && (typeof value.value === "string" || typeof value.value === "number")) {
      const ref = (value.source ?? String(value.value)).trim();
      if (ref.length > 0) return { value: ref };
    }
    this.report(value, entry, "fixed_in", "must be null or a git ref (the commit or tag that repaired it)");
    return undefined;
  }

  private locations(node: YAMLMap, entry: string): LedgerLocation[] | undefined {
    const list = node.get("locations", true);
    if (!isSeq(list) || list.items.length === 0) {
      const message =
        "must list one or more locations, each with exactly one key (endpoint, page, table, ...)";
      this.report(list ?? node, entry, "locations", message);
      return undefined;
    }
    const locations: LedgerLocation[] = [];
    let valid = true;
    list.items.forEach((item, index) => {
      const location = this.location(item, entry, `locations[${index}]`);
      if (location === undefined) valid = false;
      else locations.push(location);
    });
    return valid ? locations : undefined;
  }

  private location(item: unknown, entry: string, field: string): LedgerLocation | undefined {
    const kinds = LOCATION_KINDS.join(", ");
    if (!isMap(item) || item.items.length !== 1) {
      const count = isMap(item) ? `${item.items.length} keys` : "not a mapping";
      this.report(item, entry, field, `a location has exactly one key (one of ${kinds}), got ${count}`);
      return undefined;
    }
    const pair = item.items[0]!;
    const kind = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    if (!(LOCATION_KINDS as readonly string[]).includes(kind)) {
      this.report(pair.key ?? item, entry, field, `unknown location key "${kind}" (valid: ${kinds})`);
      return undefined;
    }
    const form = LOCATION_FORMS[kind as LocationKind];
    const valueNode = pair.value;
    const value =
      isScalar(valueNode) && typeof valueNode.value === "string" ? valueNode.value.trim() : undefined;
    if (value === undefined || value.length === 0 || !form.test(value)) {
      const shown = isScalar(valueNode) ? JSON.stringify(valueNode.value) : "nothing";
      this.report(valueNode ?? item, entry, `${field}.${kind}`, `${shown} is not ${form.form}`);
      return undefined;
    }
    return { kind: kind as LocationKind, value };
  }

  private list(root: YAMLMap, key: string, required: boolean): unknown[] {
    const value = root.get(key, true);
    if (value === undefined || (isScalar(value) && value.value === null)) {
      if (required) this.report(root, undefined, key, "is missing; list the seeded defects (it may be [])");
      return [];
    }
    if (!isSeq(value)) {
      this.report(value, undefined, key, "must be a list");
      return [];
    }
    return value.items;
  }

  private text(node: YAMLMap, key: string, entry: string | undefined, hint?: string): string | undefined {
    const value = node.get(key, true);
    if (value === undefined || (isScalar(value) && (value.value === null || value.value === ""))) {
      this.report(value ?? node, entry, key, hint ? `is missing: ${hint}` : "is missing");
      return undefined;
    }
    if (!isScalar(value) || typeof value.value !== "string" || value.value.trim() === "") {
      this.report(value, entry, key, "must be a non-empty string");
      return undefined;
    }
    return value.value.trim();
  }

  private unknownKeys(node: YAMLMap, allowed: readonly string[], entry: string | undefined) {
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      if (!allowed.includes(key)) {
        this.report(pair.key, entry, key, `unknown field (valid: ${allowed.join(", ")})`);
      }
    }
  }

  private report(node: unknown, entry: string | undefined, field: string, message: string) {
    this.problems.push({ line: this.lineOf(node), entry, field, message });
  }

  private lineOf(node: unknown): number | undefined {
    const range = (node as Node | null | undefined)?.range;
    if (!range) return undefined;
    const { line } = this.lineCounter.linePos(range[0]);
    return line > 0 ? line : undefined;
  }
}
