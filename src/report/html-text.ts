// Every piece of text that reaches the HTML report goes through here. Findings carry what the target sent
// back — attack payloads included — so text is escaped for element content and attribute values alike.

export function escapeHtml(value: string): string {
  return value
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

/** Only data: URIs of the image types the report embeds pass; anything else becomes an empty string. */
export function safeImageSource(value: string): string {
  return /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]+$/.test(value) ? value : "";
}
