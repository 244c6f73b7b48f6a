// biome-ignore-all lint/style/useTemplate: the fixture builds URLs by concatenation on purpose, as frontends do
// Storefront: a tiny single-page shop over a JSON API, written the ways real frontends call their API
// (fetch, an axios-like client made with create({ baseURL }), an Angular-like HttpClient service,
// XMLHttpRequest, jQuery). A fixture for the frontend-bundle reader and the browser traffic recorder.

const API_BASE = "/api";
const environment = { production: true, apiUrl: "/api" };

// An axios-like client: create({ baseURL }) answers an instance with get/post/put/delete.
const axios = {
  create(config) {
    async function request(method, url, data) {
      const response = await fetch(config.baseURL + url, {
        method,
        headers: { "Content-Type": "application/json" },
        body: data === undefined ? undefined : JSON.stringify(data),
      });
      return { data: await response.json() };
    }
    return {
      get: (url) => request("GET", url),
      post: (url, data) => request("POST", url, data),
      put: (url, data) => request("PUT", url, data),
      delete: (url) => request("DELETE", url),
    };
  },
};

const api = axios.create({ baseURL: environment.apiUrl });

async function loadProducts() {
  const response = await fetch(`${API_BASE}/products?limit=20`);
  return response.json();
}

function loadProduct(productId) {
  return fetch(API_BASE + "/products/" + productId).then((response) => response.json());
}

function login(email, password) {
  return fetch("/rest/user/login", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ email, password, remember: true }),
  });
}

function search(term) {
  return fetch("/api/search?q=" + encodeURIComponent(term));
}

function trackView() {
  return fetch("/api/analytics/view", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ page: location.hash || "/", at: Date.now() }),
  });
}

function loadBasket() {
  return api.get("/basket");
}

function addToBasket(productId, quantity) {
  return api.post("/basket", { productId, quantity });
}

function updateBasketItem(itemId, quantity) {
  return api.put(`/basket/${itemId}`, { quantity });
}

function removeBasketItem(itemId) {
  return api.delete("/basket/" + itemId);
}

class OrderService {
  constructor(http) {
    this.http = http;
    // Where the API lives is configured at run time: the reader drops it as the base.
    this.hostServer = window.appConfig.host;
    this.host = this.hostServer + "/api/orders";
  }

  find(params) {
    return this.http.get(this.host, { params });
  }

  get(orderId) {
    return this.http.get(`${this.host}/${orderId}`);
  }

  cancel(orderId) {
    return this.http.request("PATCH", this.host + "/" + orderId + "/cancel", {
      body: { reason: "customer" },
    });
  }
}

function sendFeedback(comment, rating) {
  const xhr = new XMLHttpRequest();
  xhr.open("POST", API_BASE + "/feedback");
  xhr.setRequestHeader("Content-Type", "application/json");
  xhr.send(JSON.stringify({ comment, rating }));
}

function loadSession(done) {
  const xhr = new XMLHttpRequest();
  xhr.open("GET", "/api/session");
  xhr.onload = () => done(JSON.parse(xhr.responseText));
  xhr.send();
}

function subscribe(email) {
  if (window.jQuery) window.jQuery.post("/api/newsletter", { email, source: "footer" });
}

async function render() {
  const app = document.getElementById("app");
  loadSession(() => {});
  trackView();
  if (location.hash === "#/basket") {
    await loadBasket();
    app.innerHTML = '<a href="#/">Home</a>';
    return;
  }
  await loadProducts();
  app.innerHTML = '<a href="#/basket">Basket</a> <a href="/logout">Sign out</a> <a href="/about">About</a>';
}

window.storefront = {
  loadProduct,
  login,
  search,
  addToBasket,
  updateBasketItem,
  removeBasketItem,
  sendFeedback,
  subscribe,
  OrderService,
};
render();
