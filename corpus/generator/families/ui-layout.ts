import type { Row } from "../../model/row.ts";
import { pageOracle, type UiCheck } from "../../oracles/browser.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { assetEndpoint, assetPath, cap, pageDocument, pagePath, pageVariant } from "./ui-page.ts";

// What a page's layout promises: content that reflows into a 320-375 px phone without sideways scrolling
// (WCAG 1.4.10), controls a click at their centre reaches (no other control or text drawn over them; WCAG
// 2.5.8's spacing, and a click that lands on another control), and text its box has room for (no label or
// summary cut off by overflow hidden; WCAG 1.4.4, 1.4.10). The look-alikes are the patterns that resemble
// those faults but are deliberate: a region that scrolls on its own, a native checkbox hidden under its own
// label, a badge that ignores the pointer, an ellipsis, a line clamp, text visually hidden for screen readers.

export interface LayoutKnobs {
  form:
    | "fixed-width"
    | "wide-table"
    | "fluid"
    | "scroll-region"
    // Overlapping controls.
    | "absolute-toolbar"
    | "phone-overlap"
    | "text-over-link"
    | "button-group"
    | "corner-badge"
    | "custom-checkbox"
    // Clipped text.
    | "nowrap-badge"
    | "fixed-height"
    | "fixed-cell"
    | "ellipsis"
    | "visually-hidden"
    | "line-clamp";
}

type Form = LayoutKnobs["form"];

type LayoutCheck = Extract<UiCheck, "overflow" | "overlap" | "clipped">;

interface Layout {
  check: LayoutCheck;
  /** The page's heading and menu label (`Parcels board`). */
  heading: (noun: string) => string;
  css: string;
  body: (noun: string, one: string, path: string) => string;
  /** The vulnerable form's ledger title, or the safe one's reason. */
  says: string;
}

/** The page's buttons answer a click in a status line, so each one visibly does something. */
const SAY_SCRIPT = `for (const button of document.querySelectorAll("button[data-say]")) {
  button.addEventListener("click", () => {
    document.getElementById("status").textContent = button.dataset.say;
  });
}
`;

const STATUS = '<p id="status" role="status"></p>';

const BOARD_CSS = "td, th { border: 1px solid #333; padding: 4px; }\n";

const board = (noun: string) =>
  `<table><caption>${cap(noun)} by week</caption><thead><tr><th scope="col">Week</th><th scope="col">Opened</th><th scope="col">Closed</th></tr></thead><tbody><tr><td>1</td><td>12</td><td>9</td></tr></tbody></table>`;

const toolbar = (noun: string, extra = "") =>
  `<div class="toolbar" role="toolbar" aria-label="${cap(noun)} actions"><button type="button" data-say="Editing the selected ${noun}.">Edit</button><button type="button" data-say="A link to the selected ${noun} was copied.">Share</button><button type="button"${extra} data-say="The selected ${noun} were archived.">Archive</button></div>${STATUS}`;

const TOOLBAR_CSS =
  ".toolbar { position: relative; padding: 0.5em 0; }\n.toolbar button { font: inherit; width: 7em; padding: 0.4em 0; margin: 0; }\n";

const badges = (noun: string, one: string, title: boolean) =>
  `<ul class="states">${["Delivered", "Awaiting approval", "Returned to sender"].map((state, index) => `<li>${cap(one)} ${index + 1} <span class="state"${title ? ` title="${state}"` : ""}>${state}</span></li>`).join("")}</ul><p>The state of each of the ${noun} sent this week.</p>`;

const BADGE_CSS =
  ".states { padding: 0; list-style: none; }\n.states li { margin: 0.4em 0; }\n.state { display: inline-block; width: 5em; padding: 0 0.4em; border: 1px solid #333333; border-radius: 0.3em; white-space: nowrap; overflow: hidden; vertical-align: bottom; }\n";

const NOTES = [
  "Collected on Monday and sorted by noon; the rest waits for the afternoon van to the depot.",
  "Two arrived damaged and were sent back to the supplier with a note asking for a refund.",
  "Counted twice this week because the scanner at the north door lost its connection again.",
];

const cards = (one: string, extra: (index: number) => string = () => "") =>
  `<ul class="cards">${NOTES.map((note, index) => `<li><h2>${cap(one)} ${index + 1}</h2><p class="summary">${note}</p>${extra(index)}</li>`).join("")}</ul>`;

const CARD_CSS =
  ".cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(14em, 1fr)); gap: 1em; padding: 0; list-style: none; }\n.cards li { border: 1px solid #333333; padding: 0.5em; }\n.cards h2 { margin: 0 0 0.25em; font-size: 1.1em; }\n.summary { line-height: 1.5; margin: 0; }\n";

const VISUALLY_HIDDEN =
  ".visually-hidden { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap; border: 0; }\n";

const FORMS: Record<Form, Layout> = {
  "fixed-width": {
    check: "overflow",
    heading: (noun) => `${cap(noun)} board`,
    css: ".board { width: 1100px; border: 1px solid #333; }\n",
    body: (noun) => `<div class="board"><p>This week's ${noun}: twelve opened, nine closed.</p></div>`,
    says: "A fixed 1100 px wide block makes the page scroll sideways on a phone (WCAG 1.4.10)",
  },
  fluid: {
    check: "overflow",
    heading: (noun) => `${cap(noun)} board`,
    css: ".board { max-width: 1100px; width: 100%; box-sizing: border-box; border: 1px solid #333; }\n",
    body: (noun) => `<div class="board"><p>This week's ${noun}: twelve opened, nine closed.</p></div>`,
    says: "the block is at most 100% wide",
  },
  "wide-table": {
    check: "overflow",
    heading: (noun) => `${cap(noun)} board`,
    css: `table { min-width: 900px; border-collapse: collapse; }\n${BOARD_CSS}`,
    body: board,
    says: "A 900 px table makes the whole page scroll sideways on a phone (WCAG 1.4.10)",
  },
  "scroll-region": {
    check: "overflow",
    heading: (noun) => `${cap(noun)} board`,
    css: `.scroll { overflow-x: auto; max-width: 100%; }\ntable { min-width: 900px; border-collapse: collapse; }\n${BOARD_CSS}`,
    // The WAI pattern for a wide table: a focusable, named region that scrolls on its own.
    body: (noun) =>
      `<div class="scroll" role="region" aria-label="${cap(noun)} by week" tabindex="0">${board(noun)}</div>`,
    says: "the wide table scrolls inside its own region; the page does not",
  },
  "absolute-toolbar": {
    check: "overlap",
    heading: (noun) => `${cap(noun)} actions`,
    // Meant for the toolbar's right end, the last button is placed from its left: over the first one.
    css: `${TOOLBAR_CSS}.toolbar .archive { position: absolute; top: 0.5em; left: 2em; }\n`,
    body: (noun) => toolbar(noun, ' class="archive"'),
    says: "A toolbar button positioned over its neighbour: a click on Edit lands on Archive (WCAG 2.5.8)",
  },
  "button-group": {
    check: "overlap",
    heading: (noun) => `${cap(noun)} actions`,
    // The segmented button group: buttons in a flex row, touching, their borders drawn once.
    css: `${TOOLBAR_CSS}.toolbar { display: flex; flex-wrap: wrap; gap: 0; }\n.toolbar button + button { margin-left: -1px; }\n`,
    body: (noun) => toolbar(noun),
    says: "the buttons touch and share a 1 px border, but no button covers another's centre",
  },
  "phone-overlap": {
    check: "overlap",
    heading: (noun) => `Pickup of ${noun}`,
    css: ".card { max-width: 30em; border: 1px solid #333333; padding: 0 1em 1em; }\n.card button { font: inherit; padding: 0.4em 1em; }\n.promo { background: #fff3c4; color: #222222; padding: 0.5em; }\n@media (max-width: 600px) {\n  .promo { position: relative; margin-top: -2.5em; }\n}\n",
    body: (noun) =>
      `<div class="card"><h2>Weekly pickup</h2><p>We collect your ${noun} every Monday.</p><div class="actions"><button type="button" data-say="Your pickup is booked.">Book a pickup</button></div><p class="promo">Free pickups this month.</p></div>${STATUS}`,
    says: "At phone width a banner pulled up by a negative margin covers the Book a pickup button (WCAG 1.4.10, 2.5.8)",
  },
  "corner-badge": {
    check: "overlap",
    heading: (noun) => `Messages about ${noun}`,
    css: `.inbox { position: relative; display: inline-block; }\n.inbox button { font: inherit; padding: 0.4em 1em; }\n.badge { position: absolute; top: -0.6em; right: -0.6em; min-width: 1.2em; padding: 0 0.3em; border-radius: 0.6em; background: #b00020; color: #ffffff; font-size: 0.75em; text-align: center; pointer-events: none; }\n${VISUALLY_HIDDEN}`,
    body: (noun) =>
      `<p>Messages about your ${noun}.</p><span class="inbox"><button type="button" data-say="No new messages about ${noun}.">Messages<span class="visually-hidden"> (3 new)</span></button><span class="badge" aria-hidden="true">3</span></span>${STATUS}`,
    says: "the badge drawn over the button's corner ignores the pointer (pointer-events: none); the button's name carries the count",
  },
  "text-over-link": {
    check: "overlap",
    heading: (noun) => `Prices of ${noun}`,
    // Nudged up to close a gap, the note lands on the link above it.
    css: ".links { padding: 0; list-style: none; }\n.note { position: relative; top: -2.2em; color: #333333; }\n",
    body: (noun) =>
      `<ul class="links"><li><a href="#terms">Delivery terms</a></li></ul><p class="note">Prices include tax and are shown per item.</p><h2 id="terms">Delivery terms</h2><p>We deliver ${noun} within three working days.</p>`,
    says: "A note moved up with a relative offset covers a link: the texts overlap and a click on the link lands on the note (WCAG 2.5.8)",
  },
  "custom-checkbox": {
    check: "overlap",
    heading: (noun) => `Notices about ${noun}`,
    // The custom checkbox: the native input stays in place but transparent, its label draws the box.
    css: '.choice { position: relative; margin: 0.5em 0; }\n.choice input { position: absolute; left: 0; top: 0; width: 1.25em; height: 1.25em; margin: 0; opacity: 0; }\n.choice label { display: inline-block; padding-left: 1.75em; line-height: 1.25em; }\n.choice label::before { content: ""; position: absolute; left: 0; top: 0; width: 1em; height: 1em; border: 2px solid #333333; border-radius: 2px; background: #ffffff; }\n.choice input[type="radio"] + label::before { border-radius: 50%; }\n.choice input:checked + label::before { background: #1a5fb4; box-shadow: inset 0 0 0 3px #ffffff; }\n.choice input:focus-visible + label::before { outline: 2px solid #1a5fb4; outline-offset: 2px; }\n',
    body: (noun, _one, path) => {
      const choice = (type: string, id: string, name: string, text: string) =>
        `<div class="choice"><input type="${type}" id="${id}" name="${name}" value="${id}"><label for="${id}">${text}</label></div>`;
      return `<form method="get" action="${path}"><fieldset><legend>Tell me when ${noun}</legend>${choice("checkbox", "added", "when", "are added")}${choice("checkbox", "late", "when", "are late")}</fieldset><fieldset><legend>Tell me by</legend>${choice("radio", "email", "by", "Email")}${choice("radio", "text", "by", "Text message")}</fieldset><button type="submit">Save</button></form>`;
    },
    says: "the transparent native inputs lie under their own labels: a click on a label is a click on its input",
  },
  "nowrap-badge": {
    check: "clipped",
    heading: (noun) => `State of ${noun}`,
    css: BADGE_CSS,
    body: (noun, one) => badges(noun, one, false),
    says: "Status badges of a fixed width cut their labels off mid-word (nowrap, overflow hidden, no ellipsis; WCAG 1.4.4)",
  },
  ellipsis: {
    check: "clipped",
    heading: (noun) => `State of ${noun}`,
    css: BADGE_CSS.replace("vertical-align: bottom;", "vertical-align: bottom; text-overflow: ellipsis;"),
    body: (noun, one) => badges(noun, one, true),
    says: "the badges shorten long states on purpose with an ellipsis and carry the full state in a title",
  },
  "fixed-height": {
    check: "clipped",
    heading: (noun) => `Notes on ${noun}`,
    css: `${CARD_CSS}.summary { height: 2em; overflow: hidden; }\n`,
    body: (_noun, one) => cards(one),
    says: "Card summaries in a fixed-height box show half of their second line and none of the rest (overflow hidden; WCAG 1.4.4, 1.4.10)",
  },
  "visually-hidden": {
    check: "clipped",
    heading: (noun) => `Notes on ${noun}`,
    css: `${CARD_CSS}${VISUALLY_HIDDEN}`,
    body: (_noun, one) =>
      cards(
        one,
        (index) =>
          `<p><span aria-hidden="true">${"★".repeat(5 - index)}${"☆".repeat(index)}</span><span class="visually-hidden">Rated ${5 - index} out of 5</span></p>`,
      ),
    says: "the only clipped text is visually hidden on purpose: a 1 px box that screen readers read",
  },
  "line-clamp": {
    check: "clipped",
    heading: (noun) => `Notes on ${noun}`,
    css: `${CARD_CSS}.summary { display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 2; line-clamp: 2; overflow: hidden; }\n`,
    body: (_noun, one) => cards(one),
    says: "the summaries are clamped to two lines on purpose (a line clamp ends them with an ellipsis)",
  },
  "fixed-cell": {
    check: "clipped",
    heading: (noun) => `Contacts for ${noun}`,
    css: "table { width: 100%; max-width: 40em; table-layout: fixed; border-collapse: collapse; }\nth, td { border: 1px solid #333333; padding: 0.25em 0.5em; text-align: left; white-space: nowrap; overflow: hidden; }\n.contact { width: 10em; }\n.since { width: 4em; }\n",
    body: (noun) =>
      `<table><caption>Who to call about ${noun}</caption><thead><tr><th scope="col">Depot</th><th scope="col" class="contact">Contact</th><th scope="col" class="since">Since</th></tr></thead><tbody>${[
        ["North", "deliveries.north@corpus.test", "2019"],
        ["Harbour", "harbour.office@corpus.test", "2021"],
      ]
        .map((cells) => `<tr>${cells.map((cell) => `<td>${cell}</td>`).join("")}</tr>`)
        .join("")}</tbody></table>`,
    says: "A fixed-layout table cuts its e-mail addresses off mid-word (nowrap cells with overflow hidden; WCAG 1.4.10)",
  },
};

const SAFE_TITLES: Record<LayoutCheck, (noun: string) => string> = {
  overflow: (noun) => `The ${noun} board holds wide content`,
  overlap: (noun) => `The ${noun} page sets its controls close together`,
  clipped: (noun) => `The ${noun} page shortens or hides some text`,
};

export function buildVisualDefect(row: Row<LayoutKnobs>, ctx: BuildContext): Built {
  const layout = FORMS[row.knobs.form];
  const path = pagePath(ctx);
  const noun = ctx.place.plural;
  const vulnerable = row.label === "vulnerable";
  const sheet = assetPath(ctx, "css");
  const files: Endpoint[] = [assetEndpoint(sheet, "css", layout.css)];
  const body = layout.body(noun, ctx.place.singular, path);
  const scripts: string[] = [];
  if (body.includes("data-say")) {
    scripts.push(assetPath(ctx, "js"));
    files.push(assetEndpoint(scripts[0]!, "js", SAY_SCRIPT));
  }
  const title = layout.heading(noun);
  return pageVariant(row, {
    page: { path, label: title, listed: "menu" },
    document: pageDocument({ title, body, styles: [sheet], scripts }),
    summary: `The ${title.charAt(0).toLowerCase()}${title.slice(1)}`,
    files,
    title: vulnerable ? layout.says : SAFE_TITLES[layout.check](noun),
    why: layout.says,
    oracle: pageOracle(path, layout.check, vulnerable),
  });
}
