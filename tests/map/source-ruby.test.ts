import { describe, expect, it } from "vitest";
import { scanSourceRoutes } from "../../src/probes/routes/find-source-routes.ts";
import { routeAt } from "../fixtures/route-apps/route-lookup.ts";
import { signatures, writeTree } from "./write-tree.ts";

const railsRoutes = `Rails.application.routes.draw do
  root "home#index"
  get "/about", to: "pages#about"
  # get "/retired", to: "pages#retired"
  match "search" => "search#run", via: [:get, :post]
  resources :articles, only: [:index, :show] do
    resources :comments, except: %i[new edit]
    member do
      post :publish
    end
    collection do
      get :drafts
    end
  end
  resource :profile, only: [:show, :update]
  namespace :api do
    scope "/v1" do
      resources :tokens, only: :create
      delete "sessions/:id", to: "sessions#destroy"
    end
  end
  Rails.logger.info("get '/logged' is no route")
end
`;

const sinatraApp = `require "sinatra"

get "/" do
  "hello"
end

post "/notes/:id" do
  params[:id]
end
`;

describe("Ruby routes", () => {
  it("reads Rails resources, nesting, member and collection routes, namespaces and scopes", () => {
    const routes = scanSourceRoutes(
      writeTree({
        "config/routes.rb": railsRoutes,
        "app/controllers/pages_controller.rb":
          "class PagesController < ApplicationController\n  def about; end\nend\n",
        "spec/routing/extra_routes.rb": 'get "/only-in-specs", to: "x#y"\n',
      }),
    ).routes;
    expect(signatures(routes)).toEqual([
      "DELETE /api/v1/sessions/{id}",
      "DELETE /articles/{article_id}/comments/{id}",
      "GET /",
      "GET /about",
      "GET /articles",
      "GET /articles/drafts",
      "GET /articles/{article_id}/comments",
      "GET /articles/{article_id}/comments/{id}",
      "GET /articles/{id}",
      "GET /profile",
      "GET /search",
      "PATCH /articles/{article_id}/comments/{id}",
      "PATCH /profile",
      "POST /api/v1/tokens",
      "POST /articles/{article_id}/comments",
      "POST /articles/{id}/publish",
      "POST /search",
      "PUT /articles/{article_id}/comments/{id}",
      "PUT /profile",
    ]);
    expect(routeAt(routes, "GET /about")).toMatchObject({
      file: "config/routes.rb",
      line: 3,
      framework: "rails",
    });
  });

  it("reads a Sinatra app's verb blocks", () => {
    const routes = scanSourceRoutes(writeTree({ "app.rb": sinatraApp })).routes;
    expect(signatures(routes)).toEqual(["GET /", "POST /notes/{id}"]);
  });
});
