import { Parser } from "htmlparser2";
import type { FormInput, Page } from "../../map/system-map.ts";
import { type CsrfMeta, CsrfMetaReader, isCsrfFieldName } from "./csrf.ts";
import { pathOf, sameOriginPath } from "./urls.ts";

// One HTML page read the way a browser would submit it: every link, every form with each control it
// sends (type, constraints, hidden and pre-filled values), the scripts it loads and what it says about its
// anti-forgery token. Reading only: nothing here fetches or submits.

/** A form as the map keeps it, plus its `id` (how scripts that submit it find it; not kept in the map). */
export type PageForm = Page["forms"][number] & { id?: string };

export interface ParsedPage {
  title?: string;
  /** Same-origin `/path?query` of links, frames and refresh targets, in document order, once each. */
  links: string[];
  forms: PageForm[];
  /** Same-origin script paths (`<script src>`, `<link rel=modulepreload>`). */
  scripts: string[];
  /** Inline scripts' text, capped: server-rendered pages often call their API from there. */
  inlineScripts: string[];
  csrf?: CsrfMeta;
}

const INLINE_SCRIPT_CHARS = 256 * 1024;
const SCRIPT_TYPES =
  /^(?:|text\/javascript|application\/javascript|module|text\/babel|application\/ecmascript)$/i;
/** Input types that send nothing of their own: they submit, reset or run a script. */
const BUTTON_TYPES = new Set(["submit", "image", "reset", "button"]);
const INPUT_TYPES = new Set([
  "text",
  "search",
  "email",
  "url",
  "tel",
  "password",
  "number",
  "range",
  "date",
  "month",
  "week",
  "time",
  "datetime-local",
  "color",
  "checkbox",
  "radio",
  "file",
  "hidden",
]);

/** A form being read: where each control goes is only known once the whole page is (`form="id"`). */
interface OpenForm {
  id?: string;
  action: string;
  method: string;
  enctype: string;
  scripted: boolean;
  /** Submit buttons' `formaction`/`formmethod`/`formenctype`: the same fields sent elsewhere. */
  overrides: Array<{ action?: string; method?: string; enctype?: string }>;
  controls: FormInput[];
  /**
   * The form's default button, which a browser's submission (Enter, or that button) names in what it
   * sends: `Submit=Submit`, which many server pages test for before doing anything. Null when it has no name.
   */
  submitter?: FormInput | null;
}

type Owner = OpenForm | { formId: string };

export function parsePage(html: string, pageUrl: URL, origin: string): ParsedPage {
  const links = new Set<string>();
  const scripts = new Set<string>();
  const inlineScripts: string[] = [];
  let inlineChars = 0;
  const csrf = new CsrfMetaReader();
  const forms: OpenForm[] = [];
  const pending: Array<
    | { owner: Owner; control: FormInput }
    | { owner: Owner; override: OpenForm["overrides"][number] }
    | { owner: Owner; submitter: FormInput | null }
  > = [];
  let base = pageUrl;
  let title: string | undefined;
  let inTitle = false;
  let form: OpenForm | undefined;
  let nestedForms = 0;
  let disabledFieldsets = 0;
  let fieldsetDepth = 0;
  const disabledAt: number[] = [];
  let script: { text: string } | undefined;
  let select: { input: FormInput; selected?: string; multiple: boolean } | undefined;
  let option: { value?: string; text: string; selected: boolean } | undefined;
  let textarea: { input: FormInput; text: string } | undefined;

  const resolve = (reference: string): string | undefined => sameOriginPath(reference, base, origin);
  const ownerOf = (attributes: Record<string, string>): Owner | undefined =>
    attributes.form ? { formId: attributes.form } : form;
  const addControl = (attributes: Record<string, string>, control: FormInput): void => {
    const owner = ownerOf(attributes);
    if (owner && disabledFieldsets === 0 && attributes.disabled === undefined)
      pending.push({ owner, control });
  };
  const finishOption = (): void => {
    if (!select || !option) return;
    const value = option.value ?? option.text.replace(/\s+/g, " ").trim();
    select.input.options = [...(select.input.options ?? []), value];
    if (option.selected && select.selected === undefined) select.selected = value;
    option = undefined;
  };

  const parser = new Parser(
    {
      onopentag(name, attributes) {
        switch (name) {
          case "base":
            if (attributes.href) base = safeUrl(attributes.href, pageUrl) ?? base;
            break;
          case "title":
            if (title === undefined) {
              inTitle = true;
              title = "";
            }
            break;
          case "meta":
            if (attributes.name) csrf.read(attributes.name, attributes.content ?? "");
            if (attributes["http-equiv"]?.toLowerCase() === "refresh") {
              const target = attributes.content?.match(/url\s*=\s*['"]?([^'"]+)/i)?.[1];
              const path = target ? resolve(target) : undefined;
              if (path) links.add(path);
            }
            break;
          case "a":
          case "area":
          case "iframe":
          case "frame": {
            const reference = name === "a" || name === "area" ? attributes.href : attributes.src;
            const path = reference === undefined ? undefined : resolve(reference);
            if (path) links.add(path);
            break;
          }
          case "script": {
            if (attributes.src !== undefined) {
              const path = resolve(attributes.src);
              if (path) scripts.add(path);
            } else if (SCRIPT_TYPES.test((attributes.type ?? "").trim())) {
              script = { text: "" };
            }
            break;
          }
          case "link":
            if (/\bmodulepreload\b/i.test(attributes.rel ?? "") && attributes.href) {
              const path = resolve(attributes.href);
              if (path) scripts.add(path);
            }
            break;
          case "form": {
            if (form) {
              // A form inside a form is ignored by browsers; so are its tags.
              nestedForms += 1;
              break;
            }
            const method = (attributes.method ?? "get").trim().toUpperCase();
            form = {
              ...(attributes.id ? { id: attributes.id } : {}),
              action: actionOf(attributes.action, pageUrl, base, origin),
              method: method === "POST" || method === "DIALOG" ? method : "GET",
              enctype: enctypeOf(attributes.enctype),
              scripted: attributes.method === undefined && attributes.action === undefined,
              overrides: [],
              controls: [],
            };
            forms.push(form);
            break;
          }
          case "fieldset":
            fieldsetDepth += 1;
            if (attributes.disabled !== undefined) {
              disabledFieldsets += 1;
              disabledAt.push(fieldsetDepth);
            }
            break;
          case "input": {
            const type = (attributes.type ?? "text").trim().toLowerCase();
            if (type === "submit" || type === "image") {
              noteOverride(attributes, type === "image");
              break;
            }
            if (BUTTON_TYPES.has(type) || !attributes.name) break;
            addControl(attributes, inputControl(attributes, INPUT_TYPES.has(type) ? type : "text"));
            break;
          }
          case "button": {
            const type = (attributes.type ?? "submit").trim().toLowerCase();
            if (type === "submit") noteOverride(attributes, false);
            break;
          }
          case "select":
            if (!attributes.name) break;
            select = {
              input: { name: attributes.name, type: "select", required: attributes.required !== undefined },
              multiple: attributes.multiple !== undefined,
            };
            if (select.multiple) select.input.type = "select-multiple";
            addControl(attributes, select.input);
            break;
          case "option":
            finishOption();
            if (select)
              option = { value: attributes.value, text: "", selected: attributes.selected !== undefined };
            break;
          case "textarea":
            if (!attributes.name) break;
            textarea = { input: textareaControl(attributes), text: "" };
            addControl(attributes, textarea.input);
            break;
        }

        function noteOverride(attrs: Record<string, string>, image: boolean): void {
          const owner = ownerOf(attrs);
          if (!owner || attrs.disabled !== undefined) return;
          // An image button sends the click's coordinates (`name.x`, `name.y`), not its name and value.
          pending.push({
            owner,
            submitter:
              attrs.name && !image
                ? { name: attrs.name, type: "submit", required: false, value: attrs.value ?? "" }
                : null,
          });
          const override: OpenForm["overrides"][number] = {};
          if (attrs.formaction !== undefined)
            override.action = actionOf(attrs.formaction, pageUrl, base, origin);
          if (attrs.formmethod !== undefined) {
            const method = attrs.formmethod.trim().toUpperCase();
            override.method = method === "POST" ? "POST" : "GET";
          }
          if (attrs.formenctype !== undefined) override.enctype = enctypeOf(attrs.formenctype);
          if (Object.keys(override).length > 0) pending.push({ owner, override });
        }
      },
      ontext(text) {
        if (inTitle) title += text;
        if (script && inlineChars < INLINE_SCRIPT_CHARS) script.text += text;
        if (option) option.text += text;
        if (textarea) textarea.text += text;
      },
      onclosetag(name) {
        if (name === "title") inTitle = false;
        if (name === "script" && script) {
          const text = script.text.slice(0, INLINE_SCRIPT_CHARS - inlineChars);
          if (text.trim()) {
            inlineScripts.push(text);
            inlineChars += text.length;
          }
          script = undefined;
        }
        if (name === "option") finishOption();
        if (name === "select" && select) {
          finishOption();
          const first = select.input.options?.[0];
          const value = select.selected ?? (select.multiple ? undefined : first);
          if (value !== undefined) select.input.value = value;
          select = undefined;
        }
        if (name === "textarea" && textarea) {
          const value = textarea.text.replace(/^\r?\n/, "");
          if (value) textarea.input.value = value;
          textarea = undefined;
        }
        if (name === "fieldset") {
          if (disabledAt.at(-1) === fieldsetDepth) {
            disabledAt.pop();
            disabledFieldsets -= 1;
          }
          fieldsetDepth = Math.max(0, fieldsetDepth - 1);
        }
        if (name === "form") {
          if (nestedForms > 0) nestedForms -= 1;
          else form = undefined;
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();

  for (const entry of pending) {
    const owner =
      "formId" in entry.owner
        ? forms.find((candidate) => candidate.id === (entry.owner as { formId: string }).formId)
        : entry.owner;
    if (!owner) continue;
    if ("control" in entry) addTo(owner.controls, entry.control);
    // The first submit button is the default one, named or not (null).
    else if ("submitter" in entry) {
      if (owner.submitter === undefined) owner.submitter = entry.submitter;
    } else owner.overrides.push(entry.override);
  }

  const parsed: ParsedPage = {
    links: [...links],
    forms: forms.filter((entry) => entry.method !== "DIALOG").flatMap(formsOf),
    scripts: [...scripts],
    inlineScripts,
  };
  const cleanTitle = title?.replace(/\s+/g, " ").trim();
  if (cleanTitle) parsed.title = cleanTitle;
  const meta = csrf.result();
  if (meta) parsed.csrf = meta;
  return parsed;
}

/** The form as the map stores it, plus one more per submit button that sends the same fields elsewhere. */
function formsOf(form: OpenForm): PageForm[] {
  const submitter = form.submitter;
  const inputs =
    submitter && !form.controls.some((control) => control.name === submitter.name)
      ? [...form.controls, submitter]
      : form.controls;
  const variants = [
    { action: form.action, method: form.method, enctype: form.enctype, scripted: form.scripted },
  ];
  for (const override of form.overrides) {
    const variant = {
      action: override.action ?? form.action,
      method: override.method ?? form.method,
      enctype: override.enctype ?? form.enctype,
      scripted: false,
    };
    if (
      !variants.some(
        (known) =>
          known.action === variant.action &&
          known.method === variant.method &&
          known.enctype === variant.enctype,
      )
    )
      variants.push(variant);
  }
  return variants.map((variant) => ({
    ...(form.id ? { id: form.id } : {}),
    action: variant.action,
    method: variant.method,
    enctype: variant.enctype,
    ...(variant.scripted ? { scripted: true } : {}),
    fields: inputs.map((input) => input.name),
    inputs: inputs.map((input) => ({ ...input })),
  }));
}

/** Radio buttons and same-named checkboxes are one field whose options are their values. */
function addTo(controls: FormInput[], control: FormInput): void {
  const existing = controls.find((known) => known.name === control.name);
  if (!existing) {
    controls.push(control);
    return;
  }
  if ((control.type === "radio" || control.type === "checkbox") && existing.type === control.type) {
    existing.options = [...new Set([...(existing.options ?? []), ...(control.options ?? [])])];
    existing.required ||= control.required;
    if (control.value !== undefined && existing.value === undefined) existing.value = control.value;
  }
}

function inputControl(attributes: Record<string, string>, type: string): FormInput {
  const input: FormInput = { name: attributes.name ?? "", type, required: attributes.required !== undefined };
  const secret = type === "password" || isCsrfFieldName(input.name);
  if (type === "radio" || type === "checkbox") {
    const value = attributes.value ?? "on";
    input.options = [value];
    if (attributes.checked !== undefined) input.value = value;
  } else if (attributes.value !== undefined && attributes.value !== "" && !secret) {
    // A token is bound to the session that loaded the page: a sender reads a fresh one, never the map's.
    input.value = attributes.value;
  }
  if (attributes.min !== undefined) input.min = attributes.min;
  if (attributes.max !== undefined) input.max = attributes.max;
  const maxlength = Number.parseInt(attributes.maxlength ?? "", 10);
  if (Number.isInteger(maxlength) && maxlength >= 0) input.maxlength = maxlength;
  if (attributes.pattern) input.pattern = attributes.pattern;
  if (attributes.readonly !== undefined) input.readonly = true;
  return input;
}

function textareaControl(attributes: Record<string, string>): FormInput {
  const input: FormInput = {
    name: attributes.name ?? "",
    type: "textarea",
    required: attributes.required !== undefined,
  };
  const maxlength = Number.parseInt(attributes.maxlength ?? "", 10);
  if (Number.isInteger(maxlength) && maxlength >= 0) input.maxlength = maxlength;
  return input;
}

/** Where a form sends: a same-origin `/path?query`, an absolute URL elsewhere, or the page itself. */
function actionOf(action: string | undefined, pageUrl: URL, base: URL, origin: string): string {
  // `action="#"` (or any fragment) submits to the page itself, as an empty action does.
  if (action === undefined || action.trim() === "" || action.trim().startsWith("#")) return pathOf(pageUrl);
  return sameOriginPath(action, base, origin) ?? safeUrl(action, base)?.href ?? action;
}

function enctypeOf(value: string | undefined): string {
  const enctype = (value ?? "").trim().toLowerCase();
  return enctype === "multipart/form-data" || enctype === "text/plain"
    ? enctype
    : "application/x-www-form-urlencoded";
}

function safeUrl(reference: string, base: URL): URL | undefined {
  try {
    return new URL(reference.trim(), base);
  } catch {
    return undefined;
  }
}
