import type { LayoutKnobs } from "../generator/families/ui-layout.ts";
import type { AccessibilityKnobs, LinkKnobs } from "../generator/families/ui-markup.ts";
import type { ConsoleKnobs, JourneyKnobs } from "../generator/families/ui-runtime.ts";
import type { CopyKnobs, DeadEndKnobs, DiscoverKnobs } from "../generator/families/usability.ts";
import { rowMaker } from "../model/row.ts";
import { NP, NS, PK, PP, PS } from "../model/servers.ts";

// Pages as a browser and a person meet them (WCAG 2.x, axe-core rules, MDN, Nielsen's heuristics). Each
// variant is one page; forms on the cookie server and other Flask servers only, where the page carries the
// session's CSRF token. Kept to a few pages per server: a walk of the UI opens every one of them.

const consoleError = rowMaker<ConsoleKnobs>("console-error", "medium");

export const CONSOLE_ERROR = [
  consoleError.v("CON-01", NS, { form: "load-exception" }),
  consoleError.s("CON-01S", NS, { form: "log-noise" }),
  consoleError.v("CON-02", PK, { form: "deferred-exception" }),
  consoleError.s("CON-02S", PK, { form: "handled-rejection" }),
  consoleError.v("CON-03", PP, { form: "unhandled-rejection" }),
  consoleError.s("CON-03S", PP, { form: "expected-404" }),
  consoleError.v("CON-04", NP, { form: "fetch-5xx" }),
  consoleError.s("CON-04S", NP, { form: "fetch-ok" }),
];

const link = rowMaker<LinkKnobs>("broken-link", "low");

export const BROKEN_LINK = [
  link.v("LINK-01", NS, { form: "nav-404" }),
  link.s("LINK-01S", NS, { form: "external-link" }),
  link.v("LINK-02", PS, { form: "wrong-id" }),
  link.s("LINK-02S", PS, { form: "sign-in-link" }),
  link.v("LINK-03", PP, { form: "missing-image" }),
  link.s("LINK-03S", PP, { form: "assets-present" }),
  link.v("LINK-04", NP, { form: "missing-script" }),
  link.s("LINK-04S", NP, { form: "valid-ids" }),
];

const a11y = rowMaker<AccessibilityKnobs>("accessibility", "medium");

export const ACCESSIBILITY = [
  a11y.v("A11Y-01", NS, { form: "unlabeled-input" }),
  a11y.s("A11Y-01S", NS, { form: "aria-label" }),
  a11y.v("A11Y-02", PK, { form: "image-no-alt" }),
  a11y.s("A11Y-02S", PK, { form: "decorative-image" }),
  a11y.v("A11Y-03", PS, { form: "icon-button" }),
  a11y.s("A11Y-03S", PS, { form: "aria-labelledby" }),
  a11y.v("A11Y-04", PP, { form: "low-contrast" }),
  a11y.s("A11Y-04S", PP, { form: "wrapping-label" }),
  a11y.v("A11Y-05", NP, { form: "unlabeled-select" }),
  a11y.s("A11Y-05S", NP, { form: "label-for" }),
];

const journey = rowMaker<JourneyKnobs>("broken-journey", "medium");

export const BROKEN_JOURNEY = [
  journey.v("JRN-01", NS, { form: "inert-button" }),
  journey.s("JRN-01S", NS, { form: "feedback" }),
  journey.v("JRN-02", PK, { form: "throwing-button" }),
  journey.s("JRN-02S", PK, { form: "redirect" }),
  journey.v("JRN-03", PS, { form: "error-page" }),
  journey.s("JRN-03S", PS, { form: "saved-page" }),
  journey.v("JRN-04", PP, { form: "hidden-5xx" }),
  journey.s("JRN-04S", PP, { form: "fetch-saved" }),
];

const layout = rowMaker<LayoutKnobs>("visual-defect", "low");

export const VISUAL_DEFECT = [
  layout.v("VIS-01", NP, { form: "fixed-width" }),
  layout.s("VIS-01S", NP, { form: "fluid" }),
  layout.v("VIS-02", PS, { form: "wide-table" }),
  layout.s("VIS-02S", PS, { form: "scroll-region" }),
  // Controls drawn over other controls; a click at their centre lands on something else.
  layout.v("VIS-03", NS, { form: "absolute-toolbar" }),
  layout.s("VIS-03S", NS, { form: "button-group" }),
  layout.v("VIS-04", PK, { form: "phone-overlap" }),
  layout.s("VIS-04S", PK, { form: "corner-badge" }),
  layout.v("VIS-05", PP, { form: "text-over-link" }),
  layout.s("VIS-05S", PP, { form: "custom-checkbox" }),
  // Text cut off by a box too small for it.
  layout.v("VIS-06", PS, { form: "nowrap-badge" }),
  layout.s("VIS-06S", PS, { form: "ellipsis" }),
  layout.v("VIS-07", NP, { form: "fixed-height" }),
  layout.s("VIS-07S", NP, { form: "visually-hidden" }),
  layout.v("VIS-08", NS, { form: "fixed-cell" }),
  layout.s("VIS-08S", PK, { form: "line-clamp" }),
];

const discover = rowMaker<DiscoverKnobs>("undiscoverable-feature", "medium");

export const UNDISCOVERABLE = [
  discover.v("DISC-01", NS, { reach: "none" }),
  discover.s("DISC-01S", NS, { reach: "footer" }),
  discover.v("DISC-02", PP, { reach: "none" }),
  discover.s("DISC-02S", PP, { reach: "via-list" }),
  discover.v("DISC-03", NP, { reach: "none" }),
  discover.s("DISC-03S", PK, { reach: "via-list" }),
];

const deadEnd = rowMaker<DeadEndKnobs>("dead-end", "low");

export const DEAD_END = [
  deadEnd.v("DEAD-01", PK, { way: "none" }),
  deadEnd.s("DEAD-01S", PK, { way: "back" }),
  deadEnd.v("DEAD-02", NP, { way: "none" }),
  deadEnd.s("DEAD-02S", NP, { way: "breadcrumb" }),
];

const copy = rowMaker<CopyKnobs>("misleading-copy", "medium");

export const MISLEADING_COPY = [
  copy.v("COPY-01", NS, { form: "length-limit", promised: 120 }),
  copy.s("COPY-01S", PP, { form: "length-limit", promised: 80 }),
  copy.v("COPY-02", PK, { form: "false-success" }),
  copy.s("COPY-02S", NP, { form: "false-success", honest: true }),
];

export const UI_AND_USABILITY = [
  ...CONSOLE_ERROR,
  ...BROKEN_LINK,
  ...ACCESSIBILITY,
  ...BROKEN_JOURNEY,
  ...VISUAL_DEFECT,
  ...UNDISCOVERABLE,
  ...DEAD_END,
  ...MISLEADING_COPY,
];
