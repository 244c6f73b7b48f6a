import { Parser } from "htmlparser2";

// The forms of an HTML page as a browser would submit them: every successful control with its current
// value (hidden inputs, CSRF tokens, pre-filled text, checked boxes, a select's selected option), plus the
// CSRF token some frameworks put in a <meta> tag for scripts.

export interface HtmlControl {
  name: string;
  /** `text`, `password`, `email`, `hidden`, `checkbox`, `radio`, `select`, `textarea`, `file`, `submit`… */
  type: string;
  value: string;
  /** For checkboxes and radios: whether the browser would send it. */
  checked: boolean;
  required: boolean;
}

export interface HtmlForm {
  /** Absolute URL the form posts to (the page itself when it names no action). */
  action: string;
  method: string;
  enctype: string;
  controls: HtmlControl[];
  /** Visible text inside the form (labels, an error shown next to the fields). */
  text: string;
}

export interface ParsedPage {
  forms: HtmlForm[];
  /** `<meta name="csrf-token" content>` and its kin: name → content. */
  meta: Record<string, string>;
  /** Text of elements that usually carry a message: .error, .alert, .flash, [role=alert]. */
  messages: string[];
}

const MESSAGE_CLASS = /\b(error|errors|alert|flash|invalid|danger|warning|notice|message)\b/i;

export function parseHtmlPage(html: string, pageUrl: string): ParsedPage {
  const page: ParsedPage = { forms: [], meta: {}, messages: [] };
  let base = pageUrl;
  let form: HtmlForm | undefined;
  let select: HtmlControl | undefined;
  let selectHasSelected = false;
  let selectHasFirst = false;
  let option: { value: string | undefined; text: string; selected: boolean } | undefined;
  let textarea: HtmlControl | undefined;
  const messageStack: Array<{ tag: string; text: string }> = [];

  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name === "base" && attributes.href) base = resolve(attributes.href, pageUrl) ?? base;
        else if (name === "meta" && attributes.name && attributes.content !== undefined) {
          page.meta[attributes.name.toLowerCase()] = attributes.content;
        } else if (name === "form") {
          form = {
            action: resolve(attributes.action || "", base) ?? pageUrl,
            method: (attributes.method || "GET").toUpperCase(),
            enctype: (attributes.enctype || "application/x-www-form-urlencoded").toLowerCase(),
            controls: [],
            text: "",
          };
          page.forms.push(form);
        } else if (form && name === "input" && attributes.name) {
          const type = (attributes.type || "text").toLowerCase();
          const checkable = type === "checkbox" || type === "radio";
          form.controls.push({
            name: attributes.name,
            type,
            value: attributes.value ?? (checkable ? "on" : ""),
            checked: checkable ? attributes.checked !== undefined : true,
            required: attributes.required !== undefined,
          });
        } else if (form && name === "button" && attributes.name) {
          const type = (attributes.type || "submit").toLowerCase();
          if (type === "submit") {
            form.controls.push({
              name: attributes.name,
              type: "submit",
              value: attributes.value ?? "",
              checked: true,
              required: false,
            });
          }
        } else if (form && name === "select" && attributes.name) {
          select = {
            name: attributes.name,
            type: "select",
            value: "",
            checked: true,
            required: attributes.required !== undefined,
          };
          selectHasSelected = false;
          selectHasFirst = false;
          form.controls.push(select);
        } else if (select && name === "option") {
          option = { value: attributes.value, text: "", selected: attributes.selected !== undefined };
        } else if (form && name === "textarea" && attributes.name) {
          textarea = {
            name: attributes.name,
            type: "textarea",
            value: "",
            checked: true,
            required: attributes.required !== undefined,
          };
          form.controls.push(textarea);
        }
        if (MESSAGE_CLASS.test(attributes.class ?? "") || attributes.role === "alert") {
          messageStack.push({ tag: name, text: "" });
        }
      },
      ontext(text) {
        if (option) option.text += text;
        if (textarea) textarea.value += text;
        if (form) form.text += text;
        for (const message of messageStack) message.text += text;
      },
      onclosetag(name) {
        if (name === "option" && option && select) {
          const value = option.value ?? option.text.trim();
          // The first option is sent unless another is marked selected.
          if (option.selected && !selectHasSelected) {
            select.value = value;
            selectHasSelected = true;
          } else if (!selectHasSelected && !selectHasFirst) {
            select.value = value;
          }
          selectHasFirst = true;
          option = undefined;
        } else if (name === "select") select = undefined;
        else if (name === "textarea") textarea = undefined;
        else if (name === "form") form = undefined;
        const top = messageStack.at(-1);
        if (top && top.tag === name) {
          messageStack.pop();
          const text = top.text.replace(/\s+/g, " ").trim();
          if (text) page.messages.push(text);
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  for (const each of page.forms) each.text = each.text.replace(/\s+/g, " ").trim();
  return page;
}

/** The name → value pairs a browser submits for `form` (without pressing a named button). */
export function formDefaults(form: HtmlForm): Array<[string, string]> {
  return form.controls
    .filter((control) => control.checked && control.type !== "submit" && control.type !== "file")
    .filter((control) => !["button", "reset", "image"].includes(control.type))
    .map((control) => [control.name, control.value]);
}

/** The first named submit button, which a browser includes when a person clicks it. */
export function submitButton(form: HtmlForm): HtmlControl | undefined {
  return form.controls.find((control) => control.type === "submit");
}

export function hasPasswordField(form: HtmlForm): boolean {
  return form.controls.some((control) => control.type === "password");
}

/** The path of an absolute URL (or undefined when it is not one). */
export function pathOfAction(action: string): string | undefined {
  try {
    return new URL(action).pathname;
  } catch {
    return undefined;
  }
}

/** Whether the answer is HTML worth parsing (by content type, or by its first bytes). */
export function isHtml(contentType: string, body: string): boolean {
  if (/html|xhtml/i.test(contentType)) return true;
  if (contentType && !/text\/plain|octet-stream/i.test(contentType)) return false;
  return /^\s*(<!doctype html|<html|<form|<head|<body)/i.test(body);
}

function resolve(href: string, base: string): string | undefined {
  try {
    return new URL(href, base).toString();
  } catch {
    return undefined;
  }
}
