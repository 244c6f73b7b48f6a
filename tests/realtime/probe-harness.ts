import fs from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import { wsTools } from "../../src/tools/servers/ws-server.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";
import { callTool, fakeRunContext, testAgent } from "../support/fake-run-context.ts";
import type { FixtureApp } from "./fixture-app.ts";
import { fixtureMap, fixtureTarget } from "./fixture-app.ts";

export interface ProbeAnswer {
  candidates: EnvelopeDraft[];
  stats: {
    channels: Array<Record<string, unknown>>;
    notes: string[];
    sockets_left_open: number;
    events_caused: number;
    [key: string]: unknown;
  };
}

export function socketContext(
  app: FixtureApp,
  options: Parameters<typeof fixtureTarget>[1] = {},
): FakeRunContext {
  return fakeRunContext({
    target: fixtureTarget(app.baseUrl, options),
    systemMap: fixtureMap(app.baseUrl),
    agent: testAgent({ name: "SOCKET" }),
  });
}

/** Runs one ws tool on one channel (short waits: the fixture answers on loopback) and checks its drafts. */
export async function probe(
  app: Pick<FixtureApp, "baseUrl">,
  tool: string,
  input: Record<string, unknown>,
  context: FakeRunContext = socketContext(app as FixtureApp),
): Promise<ProbeAnswer> {
  const definition = wsTools.find((candidate) => candidate.name === tool)!;
  const result = await callTool(definition, { wait_ms: 300, ...input }, context);
  if (!result.ok) throw new Error(`${tool} failed: ${result.error}`);
  const answer = result.data as ProbeAnswer;
  expect(answer.stats.sockets_left_open).toBe(0);
  for (const draft of answer.candidates) {
    expect(EnvelopeDraftSchema.safeParse(draft).success).toBe(true);
    const transcript = draft.evidence[0]!;
    expect(transcript.kind).toBe("artifact");
    const file = path.join(context.artifactsDir, transcript.uri!.replace(/^artifact:\/\/[^/]+\//, ""));
    const text = fs.readFileSync(file, "utf8");
    // Tokens the run signed in with never reach evidence.
    expect(text).not.toMatch(/tok-\d-[a-z0-9]{6,}/);
    expect(draft.reproduction.steps.length).toBeGreaterThan(0);
  }
  return answer;
}

/** `class channel` of each fileable candidate (and its related places), and of the held ones apart. */
export function summary(answer: ProbeAnswer): { filed: string[]; held: string[] } {
  const line = (draft: EnvelopeDraft) =>
    [
      draft.defect_class,
      draft.location.value,
      ...(draft.location.related ?? []).map((place) => place.value),
    ].join(" ");
  return {
    filed: answer.candidates.filter((draft) => draft.confidence >= 0.7).map(line),
    held: answer.candidates.filter((draft) => draft.confidence < 0.7).map(line),
  };
}
