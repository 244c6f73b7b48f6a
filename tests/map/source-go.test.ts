import { beforeAll, describe, expect, it } from "vitest";
import type { Route } from "../../src/map/system-map.ts";
import { scanSourceRoutes } from "../../src/probes/routes/find-source-routes.ts";
import { routeAt } from "../fixtures/route-apps/route-lookup.ts";
import { signatures, writeTree } from "./write-tree.ts";

const ginMain = `package main

import (
	"log"
	"net/http"

	"github.com/gin-gonic/gin"
)

func main() {
	r := gin.Default()
	r.GET("/health", health)
	api := r.Group("/api")
	{
		v1 := api.Group("/v1")
		v1.GET("/items/:id", getItem)
		v1.POST("/items", createItem)
		// v1.DELETE("/items/:id", deleteItem)
		v1.Any("/files/*filepath", serveFiles)
	}
	log.Printf("r.GET(\\"/fake\\", h) is only a log line")
	resp, _ := http.Get("http://example.com/status")
	_ = resp
	r.Run()
}

func admin(r *gin.Engine) {
	api := r.Group("/admin")
	api.PUT("/users/:uid", updateUser)
}
`;

const stdlibMain = `package main

import "net/http"

func routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /orders/{id}", getOrder)
	mux.HandleFunc("POST /orders/{$}", createOrder)
	mux.Handle("/static/{path...}", http.FileServer(http.Dir("static")))
	http.HandleFunc("/login", login)
	q := r.URL.Query().Get("id")
	_ = q
	return mux
}
`;

const gorillaRouter = `package server

import (
	"net/http"

	"github.com/gorilla/mux"
)

func NewRouter() *mux.Router {
	r := mux.NewRouter()
	r.HandleFunc("/users/{id:[0-9]+}", getUser).Methods("GET")
	r.HandleFunc("/users", createUser).Methods(http.MethodPost, "PUT")
	s := r.PathPrefix("/api").Subrouter()
	s.HandleFunc("/ping", ping).Methods("GET")
	return r
}
`;

const chiRouter = `package web

import "github.com/go-chi/chi/v5"

func Routes() chi.Router {
	r := chi.NewRouter()
	r.Get("/", index)
	r.Route("/articles", func(r chi.Router) {
		r.Post("/", createArticle)
		r.Route("/{articleID}", func(r chi.Router) {
			r.Get("/", getArticle)
			r.Delete("/", deleteArticle)
		})
	})
	return r
}
`;

const echoTest = `package main

import "github.com/labstack/echo/v4"

func TestRoutes(t *testing.T) {
	e := echo.New()
	e.GET("/only-in-tests", nil)
}
`;

describe("Go routers: gin, net/http, gorilla/mux, chi", () => {
  let routes: Route[];
  beforeAll(() => {
    routes = scanSourceRoutes(
      writeTree({
        "cmd/api/main.go": ginMain,
        "cmd/std/main.go": stdlibMain,
        "internal/server/router.go": gorillaRouter,
        "internal/web/routes.go": chiRouter,
        "cmd/api/main_test.go": echoTest,
        "vendor/github.com/x/y/y.go": `package y\nimport "net/http"\nfunc f() { http.HandleFunc("/vendored", nil) }\n`,
      }),
    ).routes;
  });

  it("joins groups, subrouters and chi Route closures; reads methods from .Methods and Go 1.22 patterns", () => {
    expect(signatures(routes)).toEqual([
      "ALL /api/v1/files/{filepath}",
      "ALL /login",
      "ALL /static/{path}",
      "DELETE /articles/{articleID}",
      "GET /",
      "GET /api/ping",
      "GET /api/v1/items/{id}",
      "GET /articles/{articleID}",
      "GET /health",
      "GET /orders/{id}",
      "GET /users/{id}",
      "POST /api/v1/items",
      "POST /articles",
      "POST /orders/",
      "POST /users",
      "PUT /admin/users/{uid}",
      "PUT /users",
    ]);
  });

  it("names the framework and the registration's line", () => {
    expect(routeAt(routes, "GET /api/v1/items/{id}")).toMatchObject({
      file: "cmd/api/main.go",
      line: 16,
      framework: "gin",
    });
    expect(routeAt(routes, "GET /users/{id}").framework).toBe("gorilla");
    expect(routeAt(routes, "GET /orders/{id}").framework).toBe("net/http");
  });
});

const bareHandlers = `package main

import (
	"net/http"
	"strconv"
	"strings"
)

func main() {
	http.HandleFunc("/api/login", login)
	http.HandleFunc("/api/me", srv.me)
	http.HandleFunc("/api/items/", http.HandlerFunc(items))
	http.HandleFunc("/about", about)
}

func login(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", 405)
		return
	}
}

func (s *server) me(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
	case "PATCH":
	}
}

func items(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/api/items/")
	id, _ := strconv.Atoi(rest)
	_ = id
	if r.Method == "GET" {
		return
	}
}

func about(w http.ResponseWriter, r *http.Request) {}
`;

describe("net/http handlers registered without a method", () => {
  it("serve the methods their bodies test r.Method for, and one item per id below a subtree they parse", () => {
    const routes = scanSourceRoutes(writeTree({ "main.go": bareHandlers })).routes;
    expect(signatures(routes)).toEqual([
      "ALL /about",
      "GET /api/items/",
      "GET /api/items/{id}",
      "GET /api/me",
      "PATCH /api/me",
      "POST /api/login",
    ]);
  });
});
