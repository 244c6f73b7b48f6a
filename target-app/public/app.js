// Progressive enhancement for forms and buttons that talk to the JSON API.
(() => {
  function fieldValue(element) {
    if (element.type === "checkbox") return element.checked;
    const value = element.value;
    if (value === "") return "nullable" in element.dataset ? null : undefined;
    if (element.type === "number" || element.dataset.type === "number") return Number(value);
    return value;
  }

  async function callApi(spec, body) {
    const [method, url] = spec.split(" ");
    const response = await fetch(url, {
      method,
      credentials: "same-origin",
      headers: body === undefined ? {} : { "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    const data = text ? JSON.parse(text) : null;
    if (!response.ok) throw new Error(data?.message || `Request failed (${response.status})`);
    return data;
  }

  function redirect(template, data) {
    if (!template) return window.location.reload();
    window.location.href = template.replace("{id}", data && data.id !== undefined ? data.id : "");
  }

  document.addEventListener("submit", async (event) => {
    const form = event.target.closest("form[data-api]");
    if (!form) return;
    event.preventDefault();
    const errorBox = form.querySelector("[data-form-error]");
    const body = {};
    let spec = form.dataset.api;
    for (const element of form.elements) {
      if (!element.name || element.disabled) continue;
      const value = fieldValue(element);
      if (spec.includes(`{${element.name}}`)) {
        spec = spec.replace(`{${element.name}}`, encodeURIComponent(element.value));
        continue;
      }
      if (value !== undefined) body[element.name] = value;
    }
    try {
      const data = await callApi(spec, body);
      redirect(form.dataset.redirect, data);
    } catch (error) {
      if (errorBox) {
        errorBox.textContent = error.message;
        errorBox.hidden = false;
      }
    }
  });

  document.addEventListener("click", async (event) => {
    const action = event.target.closest("[data-action]");
    if (action) {
      if (action.dataset.confirm && !window.confirm(action.dataset.confirm)) return;
      try {
        await callApi(action.dataset.action);
        redirect(action.dataset.redirect, null);
      } catch (error) {
        window.alert(error.message);
      }
      return;
    }
    const download = event.target.closest("[data-download]");
    if (download) window.location.href = download.dataset.download;
  });
})();
