import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { operationKey } from "../api/operation-index.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import type { InputPoint } from "../auditor/input-points.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isRedirect } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { type PointFinding, pointFinding, where } from "./injection-finding.ts";
import { uniqueToken } from "./markers.ts";
import type { OpenPoint, Sent } from "./point-sender.ts";
import { sendAt } from "./point-sender.ts";
import type { PointProbeOptions } from "./probe-frame.ts";
import { probePoints } from "./probe-frame.ts";
import { pointWords } from "./probe-points.ts";
import type { SignInFields } from "./sign-in-fields.ts";
import { signInFields } from "./sign-in-fields.ts";
import { trustedHosts } from "./trusted-hosts.ts";

// Open redirect. A redirect-naming input (next, return_to, redirect_uri…), or any input whose baseline
// answer is already a redirect, is set to an address on a random host under the reserved `.example` TLD,
// in the forms that slip past the usual checks: absolute, protocol-relative (`//host`), backslash
// (`/\host`, `https:/\host`, a slash to every browser), scheme-only (`https:host`) and a userinfo prefix
// carrying the target's own origin (`http://own-host@host`, which passes a starts-with check); then each
// host the application trusts (trusted-hosts.ts) placed where a contains-check sees it but a browser
// ignores it. Judged only by where a browser would go: the Location header resolved against the request
// URL must name the random host (or a name under it, a zone the attacker holds).
// Confirmed by a second random host in the same form. Redirects are never followed, so the host is never
// contacted (and `.example` never resolves).

const REDIRECT_NAME =
  /^(next|url|redirect|redirect_?ur[il]|redirect_?to|redirect_?url|return|return_?to|return_?url|returnto|continue|dest|destination|goto|go|to|target|forward|forward_?url|back|back_?url|callback|callback_?url|success_?url|cancel_?url|failure_?url|login_?url|logout_?url|r|u|out|exit|view|ref|referer|referrer|origin|location|redir|jump)$/i;

function named(point: InputPoint): boolean {
  const name = pointWords(point).name.replace(/([a-z])([A-Z])/g, "$1_$2");
  return REDIRECT_NAME.test(name) || /(redirect|return|next|callback|continue)/i.test(name);
}

interface Form {
  name: string;
  value(host: string, origin: URL): string;
}

const FORMS: readonly Form[] = [
  { name: "absolute URL", value: (host) => `https://${host}/` },
  { name: "protocol-relative //host", value: (host) => `//${host}/` },
  { name: "backslash /\\host", value: (host) => `/\\${host}/` },
  { name: "scheme and backslash https:/\\host", value: (host) => `https:/\\${host}/` },
  { name: "scheme without slashes https:host", value: (host) => `https:${host}` },
  { name: "own origin as userinfo", value: (host, origin) => `${origin.protocol}//${origin.host}@${host}/` },
];

/**
 * A trusted host placed where it does not decide where the browser goes, for checks that only ask whether
 * it appears in the address (contains, starts-with on the whole string): userinfo, a label of the other
 * host's name, its query, its fragment.
 */
function trustedForms(trusted: string): Form[] {
  return [
    { name: `trusted ${trusted} as userinfo`, value: (host) => `https://${trusted}@${host}/` },
    { name: `trusted ${trusted} as a subdomain label`, value: (host) => `https://${trusted}.${host}/` },
    { name: `trusted ${trusted} in the query`, value: (host) => `https://${host}/?${trusted}` },
    { name: `trusted ${trusted} in the fragment`, value: (host) => `https://${host}/#${trusted}` },
  ];
}

/** The operation's document (or inventory) says it answers with a redirect. */
function documentsRedirect(point: InputPoint): boolean {
  return Object.keys(point.operation.responses ?? {}).some((status) => /^3(\d\d|XX)$/i.test(status));
}

function redirectsSomewhere(exchange: HttpExchange | undefined): boolean {
  return isRedirect(exchange) && Boolean(exchange?.response?.headers.location);
}

/**
 * The host a browser would go to from this answer, or undefined when it does not redirect. A Location is
 * resolved as a browser resolves it from the page's URL over http and over https: the application runs
 * over https in production even when tested over http, and `https:host` is a path on an https page (same
 * scheme, no slashes) but another host on an http one. Only a host both agree on counts.
 */
export function redirectHost(exchange: HttpExchange | undefined): string | undefined {
  if (!exchange || !redirectsSomewhere(exchange)) return undefined;
  const location = exchange.response!.headers.location!;
  try {
    const page = new URL(exchange.request.url);
    const hosts = ["http:", "https:"].map((scheme) => {
      const base = new URL(page.href);
      base.protocol = scheme;
      return new URL(location, base).hostname.toLowerCase();
    });
    return hosts[0] === hosts[1] ? hosts[0] : page.hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** The browser lands on the random host or on a name under it (the attacker holds the whole zone). */
function underHost(landed: string | undefined, host: string): boolean {
  return landed !== undefined && (landed === host || landed.endsWith(`.${host}`));
}

interface Hit {
  open: OpenPoint;
  form: string;
  evidence: Array<{ label: string; sent: Sent }>;
  hosts: [string, string];
  /** The profile user whose credentials went in beside the value (a sign-in form's redirect). */
  signedIn?: string;
}

export async function probeOpenRedirect(
  run: ProbeRun,
  options: PointProbeOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const { hits, stats } = await probePoints(run, options, {
    // Only inputs a redirect plausibly reads: a baseline per input of the whole map would spend the
    // agent's shared request budget on answers that cannot redirect.
    select: (point) => !point.numeric && point.in !== "path" && (named(point) || documentsRedirect(point)),
    test: (open) => testPoint(run, open),
    // Judged by the Location alone: a handler that crashes on the baseline's plain word (Django's
    // redirect() resolves a value with no slash or dot as a view name) still redirects to an address.
    acceptServerError: true,
  });
  const candidates = hits.map((hit) => pointFinding(run, findingOf(hit)));
  return { candidates, stats: { ...stats, confirmed: candidates.length } };
}

async function attempt(
  run: ProbeRun,
  open: OpenPoint,
  form: Form,
  signIn: SignInFields | undefined,
): Promise<{ sent: Sent; host: string } | undefined> {
  const host = `${uniqueToken()}.example`;
  const value = form.value(host, new URL(open.exchange.request.url));
  // A sign-in form redirects to its "next" address only once the credentials are right: those go in
  // beside the value, from a fresh anonymous session (see sign-in-fields.ts).
  const sent = signIn
    ? await sendAt(run, { ...open, user: undefined }, value, {
        followRedirects: false,
        edit: (prepared) => withFields(prepared, signIn.fields),
      })
    : await sendAt(run, open, value, { followRedirects: false });
  if (!sent || !underHost(redirectHost(sent.exchange), host)) return undefined;
  return { sent, host };
}

async function testPoint(run: ProbeRun, open: OpenPoint): Promise<Hit | undefined> {
  const signIn = signInFields(run, open.point.operation);
  const credentialPoint = signIn && open.point.in === "body" && open.point.name in signIn.fields;
  const trusted = trustedHosts(run, open.point.operation, open.exchange.request.url);
  for (const form of [...FORMS, ...trusted.flatMap(trustedForms)]) {
    const first = await attempt(run, open, form, undefined);
    const hit = first ?? (signIn && !credentialPoint ? await attempt(run, open, form, signIn) : undefined);
    if (!hit) continue;
    const second = await attempt(run, open, form, first ? undefined : signIn);
    if (!second) continue;
    return {
      open,
      form: form.name,
      evidence: [
        { label: "redirect", sent: hit.sent },
        { label: "redirect-again", sent: second.sent },
      ],
      hosts: [hit.host, second.host],
      signedIn: first ? undefined : signIn?.user,
    };
  }
  return undefined;
}

function findingOf(hit: Hit): PointFinding {
  const key = operationKey(hit.open.point.operation);
  const location = hit.evidence[0]!.sent.exchange.response?.headers.location ?? "";
  return {
    open: hit.open,
    defectClass: "open-redirect",
    family: "open-redirect",
    title: `Open redirect through ${where(hit.open)} of ${key} (${hit.form})`,
    summary: `${key}: ${where(hit.open)} set to an address on a host the client chose (${hit.form})${hit.signedIn ? `, submitted with the sign-in credentials of the profile's user ${hit.signedIn},` : ""} answered ${hit.evidence[0]!.sent.exchange.response?.status} with Location ${location}, sending the browser to ${hit.hosts[0]}; a second host, ${hit.hosts[1]}, was followed the same way: the redirect target is not checked against the application's own origin.`,
    impact:
      "An attacker sends a link on the application's trusted domain that lands the victim on a page of the attacker's choosing: phishing, and stolen tokens where the redirect carries them.",
    evidence: hit.evidence,
    confidence: 0.95,
    assertions: [
      {
        kind: "header_not",
        step: "redirect",
        header: "location",
        value: location,
        message: "a redirect must stay on the application's own origin (or an allowlisted one)",
      },
    ],
  };
}

/** The request with `fields` set in its (object) body, beside whatever the probe put there. */
function withFields(prepared: PreparedRequest, fields: Record<string, string>): PreparedRequest {
  const body = prepared.body;
  if (body !== undefined && (body === null || typeof body !== "object" || Array.isArray(body)))
    return prepared;
  return { ...prepared, body: { ...((body ?? {}) as Record<string, unknown>), ...fields } };
}
