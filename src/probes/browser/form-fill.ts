import type { Page } from "playwright-core";

// Filling a form the way a careful person would: every visible, enabled field gets a valid value chosen from
// its type, its constraints (min/max/step, minlength/maxlength, required) and the words around it (label,
// name, placeholder). Runs in the page, so a script-built form is read as rendered. The form's own
// validity check has the last word: a form our values do not satisfy is not submitted, since a journey
// that fails on values we chose wrongly proves nothing about the application.

export interface FormDescription {
  /** Position among `document.forms`: how the journey finds the form again on a fresh load. */
  index: number;
  /** What a person calls it: its heading, its aria-label or its submit button's text. */
  name: string;
  /** The submit button's text, if it has one. */
  submitLabel: string;
  method: string;
  action: string;
  /** Why the form is left alone (a sign-in, an upload), when it is. */
  skip?: string;
  fields: string[];
}

// A field a person fills: an enabled input, select or textarea that is not a button or hidden. Forms a
// script submits (fetch on "submit", most SPA frameworks' controlled inputs) often give their fields an id,
// a label or nothing but their place, and no name: such a field is as much a field as a named one. Its
// name in the answer is its name, else its id, else its label's words, else its type.
const FIELD_HELPERS = `
  const NOT_FILLED = ["submit", "button", "reset", "image", "hidden"];
  const fillable = (el) => ["INPUT", "SELECT", "TEXTAREA"].includes(el.tagName) && !el.disabled && !NOT_FILLED.includes((el.type || "").toLowerCase());
  const fieldName = (el) => el.name || el.id || [...(el.labels || [])].map((label) => label.textContent || "").join(" ").replace(/\\s+/g, " ").trim() || el.getAttribute("aria-label") || el.type || el.tagName.toLowerCase();
`;

const DESCRIBE_FORMS = `(() => {${FIELD_HELPERS} return [...document.forms].map((form, index) => {
  const visible = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const submit = form.querySelector('button:not([type]), button[type=submit], input[type=submit]');
  const submitLabel = ((submit && (submit.textContent || submit.value)) || "").replace(/\\s+/g, " ").trim();
  let heading = "";
  for (let node = form; node && !heading; node = node.parentElement) {
    const found = node.querySelector && node.querySelector("h1, h2, h3, legend");
    if (found) heading = found.textContent.replace(/\\s+/g, " ").trim();
  }
  const fields = [...form.elements].filter(fillable).map(fieldName);
  let skip;
  if (!visible(form)) skip = "not visible";
  else if (form.querySelector("input[type=password]")) skip = "a sign-in or password form";
  else if (form.querySelector("input[type=file]")) skip = "an upload";
  else if (fields.length === 0) skip = "no field to fill";
  return {
    index,
    name: (form.getAttribute("aria-label") || heading || submitLabel || "form " + (index + 1)).slice(0, 80),
    submitLabel: submitLabel.slice(0, 80),
    method: (form.getAttribute("method") || "get").toUpperCase(),
    action: form.action || location.href,
    skip,
    fields,
  };
}); })()`;

const FILL_FORM = `((args) => {${FIELD_HELPERS}
  const form = document.forms[args.index];
  if (!form) return { ok: false, reason: "the form is gone" };
  const token = args.token;
  const today = new Date().toISOString().slice(0, 10);
  const labelOf = (el) => {
    const parts = [el.name, el.id, el.getAttribute("placeholder") || "", el.getAttribute("aria-label") || ""];
    for (const label of el.labels || []) parts.push(label.textContent || "");
    return parts.join(" ").toLowerCase();
  };
  const clampNumber = (el) => {
    const min = el.min !== "" ? Number(el.min) : undefined;
    const max = el.max !== "" ? Number(el.max) : undefined;
    let value = min !== undefined ? min : 1;
    if (max !== undefined && value > max) value = max;
    return String(value);
  };
  const text = (el, words) => {
    let value = "QA " + token;
    if (/mail/.test(words)) value = "qa." + token + "@example.com";
    else if (/url|website|link|homepage/.test(words)) value = "https://example.com/" + token;
    else if (/phone|tel|mobile/.test(words)) value = "5550100";
    else if (/zip|postal/.test(words)) value = "12345";
    else if (/\\b(key|code|slug|handle|sku)\\b/.test(words)) value = ("QA" + token).toUpperCase().replace(/[^A-Z0-9]/g, "").slice(0, 8);
    else if (el.tagName === "TEXTAREA") value = "Written by an automated check (" + token + ").";
    const min = el.minLength > 0 ? el.minLength : 0;
    while (value.length < min) value += " " + token;
    if (el.maxLength > 0 && value.length > el.maxLength) value = value.slice(0, el.maxLength);
    return value;
  };
  const filled = [];
  const radios = new Set();
  for (const el of form.elements) {
    if (!fillable(el) || el.readOnly) continue;
    const words = labelOf(el);
    const type = (el.type || "").toLowerCase();
    if (el.tagName === "SELECT") {
      if (!el.value) { const option = [...el.options].find((o) => o.value && !o.disabled); if (option) el.value = option.value; }
    } else if (type === "checkbox") {
      if (el.required) el.checked = true;
    } else if (type === "radio") {
      // Radios without a name are each their own group.
      if (el.name && radios.has(el.name)) continue;
      if (el.name) radios.add(el.name);
      if (el.name ? !form.querySelector('input[type=radio][name="' + CSS.escape(el.name) + '"]:checked') : !el.checked) el.checked = true;
    } else if (["submit", "button", "reset", "image", "color", "range"].includes(type)) {
      continue;
    } else if (el.value && !el.required) {
      continue;
    } else if (type === "number") el.value = clampNumber(el);
    else if (type === "date") el.value = el.min && el.min > today ? el.min : today;
    else if (type === "datetime-local") el.value = (el.min && el.min > today ? el.min.slice(0, 10) : today) + "T12:00";
    else if (type === "time") el.value = "12:00";
    else if (type === "month") el.value = today.slice(0, 7);
    else if (type === "email") el.value = "qa." + token + "@example.com";
    else if (type === "url") el.value = "https://example.com/" + token;
    else if (type === "tel") el.value = "5550100";
    else if (el.value === "") el.value = text(el, words);
    else continue;
    el.dispatchEvent(new Event("input", { bubbles: true }));
    el.dispatchEvent(new Event("change", { bubbles: true }));
    filled.push(fieldName(el));
  }
  if (!form.checkValidity()) {
    const invalid = [...form.elements].filter((el) => el.willValidate && !el.checkValidity()).map((el) => fieldName(el) + ": " + el.validationMessage);
    return { ok: false, reason: "the values chosen do not satisfy the form's own rules (" + invalid.join("; ").slice(0, 200) + ")" };
  }
  return { ok: true, filled };
})`;

export async function describeForms(page: Page): Promise<FormDescription[]> {
  return ((await page.evaluate(DESCRIBE_FORMS).catch(() => [])) as FormDescription[]) ?? [];
}

/** Fills form `index` with valid values carrying `token`; answers the fields filled or why it could not. */
export async function fillForm(
  page: Page,
  index: number,
  token: string,
): Promise<{ ok: true; filled: string[] } | { ok: false; reason: string }> {
  return (await page
    .evaluate(`${FILL_FORM}(${JSON.stringify({ index, token })})`)
    .catch((error: unknown) => ({ ok: false, reason: String(error).split("\n")[0] }))) as
    | { ok: true; filled: string[] }
    | { ok: false; reason: string };
}
