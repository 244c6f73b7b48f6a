// Version ordering for the two ecosystems the advisory snapshot covers: npm (SemVer 2.0, with the loose
// forms lockfiles and advisories use: `1.0`, `v1.2.3`) and PyPI (PEP 440: epochs, pre/post/dev releases).

type Part = number | string;

function parseSemver(version: string): { release: number[]; prerelease: Part[] } {
  const cleaned =
    version
      .trim()
      .replace(/^[=v]+/, "")
      .split("+")[0] ?? "";
  const dash = cleaned.indexOf("-");
  const core = dash >= 0 ? cleaned.slice(0, dash) : cleaned;
  const pre = dash >= 0 ? cleaned.slice(dash + 1) : "";
  const release = core.split(".").map((part) => Number.parseInt(part, 10) || 0);
  while (release.length < 3) release.push(0);
  const prerelease = pre ? pre.split(".").map((part) => (/^\d+$/.test(part) ? Number(part) : part)) : [];
  return { release, prerelease };
}

export function compareSemver(a: string, b: string): number {
  const left = parseSemver(a);
  const right = parseSemver(b);
  for (let index = 0; index < Math.max(left.release.length, right.release.length); index += 1) {
    const difference = (left.release[index] ?? 0) - (right.release[index] ?? 0);
    if (difference !== 0) return Math.sign(difference);
  }
  // A release outranks its own pre-releases.
  if (left.prerelease.length === 0 || right.prerelease.length === 0) {
    return left.prerelease.length === right.prerelease.length ? 0 : left.prerelease.length === 0 ? 1 : -1;
  }
  for (let index = 0; index < Math.max(left.prerelease.length, right.prerelease.length); index += 1) {
    const x = left.prerelease[index];
    const y = right.prerelease[index];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (x === y) continue;
    if (typeof x === "number" && typeof y === "number") return Math.sign(x - y);
    if (typeof x === "number") return -1;
    if (typeof y === "number") return 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

interface Pep440 {
  epoch: number;
  release: number[];
  /** [phase, number]: phase -1 dev-only release, 0 a, 1 b, 2 rc, 3 final. */
  pre: [number, number];
  post: number;
  dev: number;
}

const PRE_PHASE: Record<string, number> = { a: 0, alpha: 0, b: 1, beta: 1, c: 2, rc: 2, pre: 2, preview: 2 };

function parsePep440(version: string): Pep440 {
  const text = version.trim().toLowerCase().replace(/^v/, "").split("+")[0] ?? "";
  const match = text.match(
    /^(?:(\d+)!)?(\d+(?:\.\d+)*)(?:[-_.]?(a|alpha|b|beta|c|rc|pre|preview)[-_.]?(\d*))?(?:(?:-(\d+))|(?:[-_.]?(?:post|rev|r)[-_.]?(\d*)))?(?:[-_.]?dev[-_.]?(\d*))?$/,
  );
  if (!match) {
    const numbers = text.match(/\d+/g)?.map(Number) ?? [0];
    return { epoch: 0, release: numbers, pre: [3, 0], post: -1, dev: Number.POSITIVE_INFINITY };
  }
  const [, epoch, release, prePhase, preNumber, postImplicit, postNumber, devNumber] = match;
  const parts = (release ?? "0").split(".").map(Number);
  while (parts.length > 1 && parts[parts.length - 1] === 0) parts.pop();
  // Unmatched groups are undefined; a present marker without a number matches "".
  const hasPost = postImplicit !== undefined || postNumber !== undefined;
  const hasDev = devNumber !== undefined;
  let pre: [number, number] = [3, 0];
  if (prePhase) pre = [PRE_PHASE[prePhase] ?? 2, Number(preNumber || 0)];
  else if (hasDev && !hasPost) pre = [-1, 0];
  return {
    epoch: Number(epoch ?? 0),
    release: parts,
    pre,
    post: hasPost ? Number(postImplicit ?? postNumber) || 0 : -1,
    dev: hasDev ? Number(devNumber || 0) : Number.POSITIVE_INFINITY,
  };
}

export function comparePep440(a: string, b: string): number {
  const left = parsePep440(a);
  const right = parsePep440(b);
  if (left.epoch !== right.epoch) return Math.sign(left.epoch - right.epoch);
  for (let index = 0; index < Math.max(left.release.length, right.release.length); index += 1) {
    const difference = (left.release[index] ?? 0) - (right.release[index] ?? 0);
    if (difference !== 0) return Math.sign(difference);
  }
  for (const [x, y] of [
    [left.pre[0], right.pre[0]],
    [left.pre[1], right.pre[1]],
    [left.post, right.post],
    [left.dev, right.dev],
  ] as Array<[number, number]>) {
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

export type Ecosystem = "npm" | "PyPI";

export function compareVersions(ecosystem: Ecosystem, a: string, b: string): number {
  return ecosystem === "PyPI" ? comparePep440(a, b) : compareSemver(a, b);
}
