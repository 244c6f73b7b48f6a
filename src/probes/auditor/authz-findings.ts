import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { operationKey } from "../api/operation-index.ts";
import { endpointLocation } from "../api/probe-support.ts";
import { buildFinding } from "../evidence/finding.ts";
import { statusOf } from "../http/http-types.ts";
import { toTemplateForm } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { severityFor } from "../severity.ts";
import type { Leak } from "./authz-support.ts";

/** One finding per operation, action and class; every relation that leaked is listed in it. */
export function group(run: ProbeRun, leaks: Leak[]): EnvelopeDraft[] {
  const groups = new Map<string, Leak[]>();
  for (const leak of leaks) {
    const defectClass =
      leak.principal.relation === "anonymous" ? "missing-authentication" : "missing-authorization";
    const key = `${defectClass}|${operationKey(leak.operation)}`;
    groups.set(key, [...(groups.get(key) ?? []), leak]);
  }
  return [...groups.entries()].map(([key, members]) => {
    const [defectClass] = key.split("|") as ["missing-authentication" | "missing-authorization"];
    const first = members[0]!;
    // One person may leak through two techniques (a direct write and a no-op one): name them once.
    const who = [
      ...new Set(
        members.map((leak) =>
          leak.principal.user ? `${leak.principal.user.name} (${leak.principal.relation})` : "anonymous",
        ),
      ),
    ];
    const endpoint = operationKey(first.operation);
    const verb =
      first.action === "read"
        ? "read"
        : first.action === "update"
          ? "change"
          : first.action === "action"
            ? "act on"
            : "delete";
    const write = first.action !== "read";
    const creation = first.action === "create";
    return buildFinding(run, {
      domain: "security",
      defectClass,
      title: creation
        ? `${endpoint} lets anonymous callers create data`
        : defectClass === "missing-authentication"
          ? `${endpoint} lets anonymous callers ${verb} ${first.owner}'s data`
          : write && members.every((leak) => leak.principal.relation === "lower-role")
            ? `${endpoint} lets ${who.join(", ")} perform an operation meant for ${first.owner}'s role`
            : `${endpoint} lets ${who.join(", ")} ${verb} ${first.owner}'s data`,
      summary: creation
        ? `${endpoint} is documented as requiring authentication, yet an anonymous request with a valid body answered ${statusOf(first.otherExchange)} with a new id and the values sent.`
        : first.technique === "gate"
          ? `${endpoint} is meant for ${first.owner}'s role: an incomplete body was refused to anonymous callers (${statusOf(first.confirmExchange)}), yet ${who.join(", ")} got the very answer ${first.owner} gets (${statusOf(first.otherExchange)}, the handler's own validation): the role check is missing, so a complete body would be applied. Nothing was changed.`
          : first.technique === "disclosure"
            ? `${endpoint} answered anonymous callers (${statusOf(first.otherExchange)}) with a record of ${first.owner}'s that the probe created, the same again on a second request, while that record's own read (GET ${new URL(first.ownerExchange.request.url).pathname}) refuses anonymous callers (${statusOf(first.confirmExchange)}).`
            : `${endpoint}: ${who.join(", ")} ${write ? `could ${verb} a resource of ${first.owner} (the effect confirmed by the owner's own view afterwards)` : `received the same data ${first.owner} receives (compared field by field, confirmed by a second request)`}. Status seen: ${statusOf(first.otherExchange)}.`,
      impact: write
        ? "Other users can change or destroy data they do not own."
        : "Private data of one user is readable by others.",
      location: endpointLocation(first.operation),
      severity: severityFor(defectClass, { write }),
      confidence:
        first.technique === "gate"
          ? 0.8
          : members.some((leak) => leak.principal.relation !== "same-role") || first.action !== "read"
            ? 0.9
            : 0.85,
      discriminator: first.action === "read" ? undefined : first.action,
      exchanges: [
        ...(creation ? [] : [{ label: "owner", exchange: first.ownerExchange }]),
        { label: first.principal.user?.name ?? "anonymous", exchange: first.otherExchange },
        ...(first.confirmExchange ? [{ label: "confirm", exchange: first.confirmExchange }] : []),
        ...members
          .slice(1)
          .map((leak) => ({ label: leak.principal.user?.name ?? "anonymous", exchange: leak.otherExchange })),
      ],
      repro: { title: `${endpoint} refuses ${who[0]}`, steps: first.steps, assertions: [first.assertion] },
      suggestedFixArea: toTemplateForm(first.operation.path),
    });
  });
}
