import type { Page } from "playwright-core";
import { boundedCall, EVALUATE_MS } from "./bounded-call.ts";

// What a page's layout does wrong, measured in the page in one pass at the viewport it was opened with:
//
// - sideways overflow (asked for at phone width): the document scrolls sideways. The tolerance absorbs
//   sub-pixel rounding; a root that hides sideways overflow is not counted. The offending element named is
//   the widest one sticking out past the viewport without an ancestor that clips or scrolls it.
// - an overlapped control: the topmost element at a visible control's centre is another element (not the
//   control, its content, its container or a label of it), so a click there reaches the other element.
//   Scrolled to the middle of the window first. Not counted: what covers the page on purpose (a dialog, a
//   fixed or sticky banner the control is not part of), controls a scrolling or clipping box hides.
// - clipped text: a box that hides its overflow cuts text off (part of its text inside, part past its
//   edge), without the deliberate forms: an ellipsis, a line clamp, visually hidden text (a 1 px box or a
//   clip). Boxes taller than a few lines are left alone: a collapsed panel or a carousel hides on purpose.
//
// Elements are named for people (`button.save`) and by a path a test can select (`#form > div:nth-of-type(2)
// > button`). A fault in the page's frame (outside `main`, in a page-level header, navigation, footer or
// aside) carries that frame's place: a frame every page shares is one defect however many pages show it.

export interface Overflow {
  scrollWidth: number;
  viewportWidth: number;
  /** The widest element sticking out, as a CSS selector with its width. */
  culprit?: Culprit;
}

export interface Culprit {
  selector: string;
  width: number;
  right: number;
  /** When the element is part of the page's frame: its place from `body` (`body > header.topbar > nav`). */
  chrome?: string;
}

export interface LayoutFault {
  kind: "overlap" | "clipped";
  /** The covered control, or the box that clips its text, for people. */
  selector: string;
  /** A selector of the first such element for a test to find it again. */
  path: string;
  /** The control's name, or the start of the clipped text. */
  text: string;
  /** What lies on top of the control (overlap only). */
  covering?: string;
  /** Measures a person can check: where the click lands, or how far the text runs past the box. */
  detail: string;
  /** How many elements on the page show the same fault (same selectors). */
  count: number;
  chrome?: string;
}

export interface Layout {
  overflow?: Overflow;
  faults: LayoutFault[];
}

export const OVERFLOW_TOLERANCE_PX = 2;
const MAX_CONTROLS = 150;
const MAX_BOXES = 4000;
const MAX_FAULTS = 20;

/** Measures the page as it stands; `sideways` adds the overflow measure (meant for phone width). */
export async function measureLayout(page: Page, options: { sideways: boolean }): Promise<Layout> {
  const measuring = page.evaluate(
    ({ sideways, tolerance, maxControls, maxBoxes, maxFaults }) => {
      const describe = (element: Element): string => {
        const tag = element.tagName.toLowerCase();
        if (element.id) return `${tag}#${element.id}`;
        const classes = [...element.classList].slice(0, 2);
        return classes.length > 0 ? `${tag}.${classes.join(".")}` : tag;
      };
      const pathOf = (element: Element): string => {
        const parts: string[] = [];
        for (let node: Element | null = element; node && node !== document.body; node = node.parentElement) {
          if (node.id && /^[A-Za-z][\w-]*$/.test(node.id)) return [`#${node.id}`, ...parts].join(" > ");
          const tag = node.tagName.toLowerCase();
          const siblings = [...(node.parentElement?.children ?? [])].filter(
            (sibling) => sibling.tagName === node?.tagName,
          );
          parts.unshift(siblings.length > 1 ? `${tag}:nth-of-type(${siblings.indexOf(node) + 1})` : tag);
        }
        return ["body", ...parts].join(" > ");
      };
      const chromeOf = (element: Element): string | undefined => {
        if (element.closest("main, [role='main']")) return undefined;
        const frame = element.closest(
          "header, nav, footer, aside, [role='banner'], [role='navigation'], [role='contentinfo']",
        );
        if (!frame) return undefined;
        const parts: string[] = [];
        for (let node: Element | null = element; node && node !== document.body; node = node.parentElement)
          parts.unshift(describe(node));
        return ["body", ...parts].join(" > ");
      };
      const words = (text: string | null | undefined): string => (text ?? "").replace(/\s+/g, " ").trim();
      // biome-ignore lint/performance/useDomNodeTextContent: the text as shown, without hidden parts.
      const rendered = (element: Element): string => words((element as HTMLElement).innerText);
      const shown = (element: Element): boolean =>
        (element.checkVisibility?.({ opacityProperty: true, visibilityProperty: true }) ?? true) &&
        !element.closest("[aria-hidden='true'], [inert]");

      const measureOverflow = (): Overflow | undefined => {
        // The layout viewport (the device width under a width=device-width meta tag): a phone browser zooms
        // out to fit wide content, so window.innerWidth grows with the very overflow being measured.
        const viewportWidth = document.documentElement.clientWidth;
        const scrollWidth = Math.max(document.documentElement.scrollWidth, document.body?.scrollWidth ?? 0);
        if (scrollWidth <= viewportWidth + tolerance) return undefined;
        const hides = (element: Element | null): boolean =>
          !!element && ["hidden", "clip"].includes(getComputedStyle(element).overflowX);
        if (hides(document.documentElement) || hides(document.body)) return undefined;
        const clipped = (element: Element): boolean => {
          for (let node = element.parentElement; node && node !== document.body; node = node.parentElement)
            if (getComputedStyle(node).overflowX !== "visible") return true;
          return false;
        };
        let culprit: Culprit | undefined;
        for (const element of document.body ? document.body.querySelectorAll("*") : []) {
          const box = element.getBoundingClientRect();
          if (box.right <= viewportWidth + tolerance || box.width === 0 || clipped(element)) continue;
          if (!culprit || box.width > culprit.width) {
            const chrome = chromeOf(element);
            culprit = {
              selector: describe(element),
              width: Math.round(box.width),
              right: Math.round(box.right),
              ...(chrome ? { chrome } : {}),
            };
          }
        }
        return { scrollWidth, viewportWidth, ...(culprit ? { culprit } : {}) };
      };

      const faults = new Map<string, LayoutFault>();
      const note = (fault: Omit<LayoutFault, "count">, element: Element) => {
        // faultKey's identity (a page function cannot call it).
        const key = `${fault.kind}\u0000${fault.selector}\u0000${fault.covering ?? ""}`;
        const same = faults.get(key);
        if (same) same.count += 1;
        else if (faults.size < maxFaults) {
          const chrome = chromeOf(element);
          faults.set(key, { ...fault, count: 1, ...(chrome ? { chrome } : {}) });
        }
      };

      const clippedText = () => {
        const boxes = document.body ? [...document.body.querySelectorAll("*")].slice(0, maxBoxes) : [];
        for (const box of boxes) {
          if (box.closest("svg, input, select, textarea, iframe, video, canvas, img")) continue;
          const hidesX = box.scrollWidth > box.clientWidth + 1;
          const hidesY = box.scrollHeight > box.clientHeight + 1;
          if (!hidesX && !hidesY) continue;
          const style = getComputedStyle(box);
          const cutsX =
            hidesX && ["hidden", "clip"].includes(style.overflowX) && style.textOverflow !== "ellipsis";
          const cutsY =
            hidesY &&
            ["hidden", "clip"].includes(style.overflowY) &&
            (style.webkitLineClamp === "none" || style.webkitLineClamp === "");
          if (!cutsX && !cutsY) continue;
          // A visually hidden box (the screen-reader-only pattern) hides all of its text on purpose.
          if (
            box.clientWidth <= 2 ||
            box.clientHeight <= 2 ||
            style.clip !== "auto" ||
            style.clipPath !== "none"
          )
            continue;
          const fontSize = Number.parseFloat(style.fontSize) || 16;
          const lineHeight = Number.parseFloat(style.lineHeight) || fontSize * 1.2;
          if (box.clientHeight > lineHeight * 3.5 || !shown(box)) continue;
          const outer = box.getBoundingClientRect();
          const left = outer.left + box.clientLeft;
          const top = outer.top + box.clientTop;
          const right = left + box.clientWidth;
          const bottom = top + box.clientHeight;
          const slackX = Math.max(3, fontSize * 0.3);
          const slackY = Math.max(4, fontSize * 0.3);
          let inside = false;
          let past = 0;
          let axis = "";
          const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
          for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            if (!words(node.textContent)) continue;
            const parent = node.parentElement;
            if (!parent || !shown(parent)) continue;
            // An icon font's ligature ("check_circle") shows as its name while the font is not loaded yet
            // or not reachable from here: not the page's text.
            if (/icon|symbol|awesome/i.test(getComputedStyle(parent).fontFamily)) continue;
            let hiddenOnPurpose = false;
            for (let up: Element | null = parent; up && up !== box; up = up.parentElement) {
              const upStyle = getComputedStyle(up);
              const upBox = up.getBoundingClientRect();
              if (
                upBox.width <= 2 ||
                upBox.height <= 2 ||
                upStyle.clip !== "auto" ||
                upStyle.clipPath !== "none"
              )
                hiddenOnPurpose = true;
            }
            if (hiddenOnPurpose) continue;
            const range = document.createRange();
            range.selectNodeContents(node);
            for (const rect of range.getClientRects()) {
              if (rect.width === 0) continue;
              if (rect.left < right && rect.right > left && rect.top < bottom && rect.bottom > top)
                inside = true;
              if (cutsX) {
                const beyond = Math.max(rect.right - right, left - rect.left);
                if (beyond > slackX && beyond > past) [past, axis] = [beyond, "wide"];
              }
              if (cutsY) {
                const beyond = rect.bottom - bottom;
                if (beyond > slackY && beyond > past) [past, axis] = [beyond, "tall"];
              }
            }
          }
          if (!inside || past === 0) continue;
          const size = `${Math.round(box.clientWidth)}×${Math.round(box.clientHeight)}px`;
          note(
            {
              kind: "clipped",
              selector: describe(box),
              path: pathOf(box),
              text: (rendered(box) || words(box.textContent)).slice(0, 80),
              detail:
                axis === "wide"
                  ? `its text runs ${Math.round(past)}px past the right edge of its ${size} box, which hides what overflows`
                  : `its text runs ${Math.round(past)}px below its ${size} box, which hides what overflows`,
            },
            box,
          );
        }
      };

      const overlappedControls = () => {
        const controls = [
          ...document.querySelectorAll(
            "button, a[href], input:not([type='hidden']), select, textarea, summary, [role='button'], [role='link'], [role='tab'], [role='checkbox'], [role='menuitem']",
          ),
        ].slice(0, maxControls);
        const nameOf = (element: Element): string =>
          words(
            element.getAttribute("aria-label") ||
              rendered(element) ||
              (element as HTMLInputElement).value ||
              element.getAttribute("placeholder") ||
              element.getAttribute("title"),
          ).slice(0, 60);
        const pinned = (element: Element): Element | undefined => {
          for (let node: Element | null = element; node; node = node.parentElement)
            if (["fixed", "sticky"].includes(getComputedStyle(node).position)) return node;
          return undefined;
        };
        const [startX, startY] = [window.scrollX, window.scrollY];
        try {
          for (const control of controls) {
            const look = getComputedStyle(control);
            // A near-transparent native input under a styled stand-in is the stand-in's business.
            if (!shown(control) || look.pointerEvents === "none" || Number(look.opacity) < 0.1) continue;
            // A link that wraps onto two lines has a box per line; their union's centre may be on neither.
            const largest = (): DOMRect | undefined =>
              [...control.getClientRects()].sort((a, b) => b.width * b.height - a.width * a.height)[0];
            const shape = largest();
            if (!shape || shape.width < 4 || shape.height < 4) continue;
            let box = shape;
            const centreX = () => box.left + box.width / 2;
            const centreY = () => box.top + box.height / 2;
            if (
              centreY() < 0 ||
              centreY() >= window.innerHeight ||
              centreX() < 0 ||
              centreX() >= window.innerWidth
            ) {
              window.scrollTo({
                left: window.scrollX + centreX() - window.innerWidth / 2,
                top: window.scrollY + centreY() - window.innerHeight / 2,
                behavior: "instant",
              });
              box = largest() ?? box;
            }
            const [x, y] = [centreX(), centreY()];
            if (y < 0 || y >= window.innerHeight || x < 0 || x >= window.innerWidth) continue;
            // The centre must be on show: a box that clips or scrolls may hide the control itself.
            let hidden = false;
            for (
              let node = control.parentElement;
              node && node !== document.body;
              node = node.parentElement
            ) {
              const style = getComputedStyle(node);
              if (style.overflowX === "visible" && style.overflowY === "visible") continue;
              const clip = node.getBoundingClientRect();
              if (x < clip.left || x > clip.right || y < clip.top || y > clip.bottom) hidden = true;
            }
            if (hidden) continue;
            const hit = document.elementFromPoint(x, y);
            if (!hit || control.contains(hit) || hit.contains(control)) continue;
            const labels = [...((control as HTMLInputElement).labels ?? [])];
            if (labels.some((label) => label.contains(hit))) continue;
            if (hit.closest("dialog, [role='dialog'], [role='alertdialog'], [aria-modal='true']")) continue;
            const banner = pinned(hit);
            if (banner && !banner.contains(control)) continue;
            const onTop = hit.closest(
              "button, a[href], input, select, textarea, label, [role='button'], [role='link']",
            );
            const covering = onTop && !onTop.contains(control) ? onTop : hit;
            const coveringName = rendered(covering).slice(0, 40);
            note(
              {
                kind: "overlap",
                selector: describe(control),
                path: pathOf(control),
                text: nameOf(control),
                covering: describe(covering),
                detail: `a click at its centre (${Math.round(x)}, ${Math.round(y)}) lands on ${describe(covering)}${coveringName ? ` "${coveringName}"` : ""}`,
              },
              control,
            );
          }
        } finally {
          window.scrollTo({ left: startX, top: startY, behavior: "instant" });
        }
      };

      const overflow = sideways ? measureOverflow() : undefined;
      // A page that breaks one measure (an odd element, a script's getter) still gets the others.
      for (const measure of [clippedText, overlappedControls])
        try {
          measure();
        } catch {}
      return { ...(overflow ? { overflow } : {}), faults: [...faults.values()] };
    },
    {
      sideways: options.sideways,
      tolerance: OVERFLOW_TOLERANCE_PX,
      maxControls: MAX_CONTROLS,
      maxBoxes: MAX_BOXES,
      maxFaults: MAX_FAULTS,
    },
  );
  return (await boundedCall(measuring, EVALUATE_MS, undefined)) ?? { faults: [] };
}

/** A fault's identity across two loads of a page. */
export function faultKey(fault: LayoutFault): string {
  return `${fault.kind}\u0000${fault.selector}\u0000${fault.covering ?? ""}`;
}
