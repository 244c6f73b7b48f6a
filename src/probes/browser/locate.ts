import type { Locator, Page } from "playwright-core";

// How an agent names an element, in the order a person would: by its role and accessible name (what a
// screen reader announces), then by the test id the developers put on it, then by its visible text. CSS
// selectors are not offered: they break with every redesign and say nothing about what a user sees.

export interface LocatorSpec {
  /** ARIA role: button, link, textbox, checkbox, combobox, heading, … */
  role?: string;
  /** Accessible name (label, aria-label, text of a button or link). */
  name?: string;
  test_id?: string;
  text?: string;
  /** Match name or text exactly (default: case-insensitive substring). */
  exact?: boolean;
}

/** The locator a spec names; throws when it names nothing to look for. */
export function locatorFor(page: Page, spec: LocatorSpec): Locator {
  const exact = spec.exact ?? false;
  if (spec.role)
    // biome-ignore lint/suspicious/noExplicitAny: the role list is Playwright's union of ARIA roles.
    return page.getByRole(spec.role as any, spec.name ? { name: spec.name, exact } : {});
  if (spec.name) return page.getByLabel(spec.name, { exact });
  if (spec.test_id) return page.getByTestId(spec.test_id);
  if (spec.text) return page.getByText(spec.text, { exact });
  throw new Error("name an element by role (and name), name (label), test_id or text");
}

/** `button "Save draft"`, `test id "save"`, `text "Welcome"`: how a spec reads in answers and refusals. */
export function describeSpec(spec: LocatorSpec): string {
  if (spec.role) return spec.name ? `${spec.role} "${spec.name}"` : spec.role;
  if (spec.name) return `field labelled "${spec.name}"`;
  if (spec.test_id) return `test id "${spec.test_id}"`;
  return `text "${spec.text ?? ""}"`;
}

export interface LocatedElement {
  role: string | null;
  name: string;
  tag: string;
  visible: boolean;
  enabled: boolean;
}

/** Up to `limit` elements the locator matches, as a person would describe them. */
export async function describeMatches(locator: Locator, limit = 10): Promise<LocatedElement[]> {
  const count = Math.min(await locator.count(), limit);
  const found: LocatedElement[] = [];
  for (let index = 0; index < count; index += 1) {
    const element = locator.nth(index);
    const facts = await element.evaluate((node) => {
      const html = node as HTMLElement;
      const label =
        html.getAttribute("aria-label") ??
        (html instanceof HTMLInputElement ? (html.labels?.[0]?.textContent ?? html.placeholder) : null) ??
        html.textContent ??
        "";
      return {
        role: html.getAttribute("role"),
        name: label.replace(/\s+/g, " ").trim().slice(0, 120),
        tag: html.tagName.toLowerCase(),
      };
    });
    found.push({ ...facts, visible: await element.isVisible(), enabled: await element.isEnabled() });
  }
  return found;
}
