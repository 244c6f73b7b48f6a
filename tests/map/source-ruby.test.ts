import { describe, expect, it } from "vitest";
import { scanSourceRoutes } from "../../src/probes/routes/find-source-routes.ts";
import { bodyProperties, parametersOf, routeAt } from "../fixtures/route-apps/route-lookup.ts";
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

// What Sinatra handlers read: `params` (query on a read, form on a write), a JSON body parsed in the block
// or in a helper, the keys read off it, a whitelist picked from `params`, headers and cookies.
const sinatraReads = `require 'sinatra'
require 'json'

helpers do
  def h(text) = Rack::Utils.escape_html(text.to_s)

  def json_body
    @json_body ||= JSON.parse(request.body.read)
  end
end

get '/search' do
  rows = db.execute("SELECT * FROM t WHERE name LIKE '%#{params['q']}%' LIMIT #{params[:limit]}")
  rows.map do |row|
    h(row['name'])
  end.join
end

post '/items/:id/notes' do
  halt 404 unless params['id'] =~ /\\A\\d+\\z/
  note = params.fetch('note')
  label = if note.empty? then 'blank' else 'note' end
  "#{label} #{request.env['HTTP_X_TENANT_ID']} #{request.cookies['theme']}"
end

post '/signup' do
  allowed = %w[email name password role]
  attrs = params.select { |key, _| allowed.include?(key) }
  attrs.to_s
end

post '/api/orders' do
  body = json_body
  total = body['quantity'] * body.fetch('price')
  total.to_s
end

patch '/api/orders/:id' do
  changes = JSON.parse(request.body.read, symbolize_names: true)
  changes[:status].to_s
end

get '/after' do
  params.slice(:from, :to).to_s
end
`;

// A Rails application: an HTML controller taking Rails' form fields, an API controller taking JSON, both
// through strong parameters in a private method, and a search reading the query.
const railsApp = {
  "config/routes.rb": `Rails.application.routes.draw do
  resources :articles, only: [:index, :create, :update] do
    collection do
      get :search
    end
  end
  resource :profile, only: [:update]
  namespace :api do
    resources :orders, only: [:create]
    post "orders/:id/refund", to: "orders#refund"
  end
end
`,
  "app/controllers/articles_controller.rb": `class ArticlesController < ApplicationController
  def index
    @articles = Article.page(params[:page])
  end

  def search
    @articles = Article.where("title LIKE ?", "%#{params[:q]}%")
  end

  def create
    @article = Article.new(article_params)
    if @article.save
      redirect_to @article
    else
      render :new
    end
  end

  def update
    @article = Article.find(params[:id])
    @article.update(article_params)
    redirect_to @article
  end

  private

  def article_params
    params.require(:article).permit(:title, :body, tag_ids: [])
  end
end
`,
  "app/controllers/profiles_controller.rb": `class ProfilesController < ApplicationController
  def update
    current_user.update(params.expect(profile: [:name, :bio]))
  end
end
`,
  "app/controllers/application_controller.rb": "class ApplicationController < ActionController::Base\nend\n",
  "app/controllers/api/base_controller.rb":
    "module Api\n  class BaseController < ActionController::API\n  end\nend\n",
  "app/controllers/api/orders_controller.rb": `module Api
  class OrdersController < Api::BaseController
    def create
      order = Order.create!(order_params)
      render json: order, status: :created
    end

    def refund
      render json: Order.find(params[:id]).refund!(params[:reason])
    end

    private

    def order_params
      params.require(:order).permit(:sku, :quantity)
    end
  end
end
`,
};

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

  it("reads what each Rails action takes: strong parameters as form fields or JSON, params as the query", () => {
    const routes = scanSourceRoutes(writeTree(railsApp)).routes;
    expect(Object.keys(parametersOf(routeAt(routes, "GET /articles")))).toEqual(["query:page"]);
    expect(Object.keys(parametersOf(routeAt(routes, "GET /articles/search")))).toEqual(["query:q"]);
    const create = routeAt(routes, "POST /articles");
    expect(create.request_body?.content_type).toBe("application/x-www-form-urlencoded");
    expect(Object.keys(bodyProperties(create)).sort()).toEqual([
      "article[body]",
      "article[tag_ids]",
      "article[title]",
    ]);
    expect(Object.keys(bodyProperties(routeAt(routes, "PATCH /articles/{id}"))).sort()).toEqual([
      "article[body]",
      "article[tag_ids]",
      "article[title]",
    ]);
    expect(Object.keys(bodyProperties(routeAt(routes, "PATCH /profile"))).sort()).toEqual([
      "profile[bio]",
      "profile[name]",
    ]);
    const order = routeAt(routes, "POST /api/orders");
    expect(order.request_body?.content_type).toBe("application/json");
    expect(bodyProperties(order)).toMatchObject({ order: { properties: { sku: {}, quantity: {} } } });
    const refund = routeAt(routes, "POST /api/orders/{id}/refund");
    expect(Object.keys(bodyProperties(refund))).toEqual(["reason"]);
    expect(refund.request_body?.content_type).toBe("application/json");
  });

  it("reads what each Sinatra handler takes from params, a JSON body, headers and cookies", () => {
    const routes = scanSourceRoutes(writeTree({ "app.rb": sinatraReads })).routes;
    expect(signatures(routes)).toEqual([
      "GET /after",
      "GET /search",
      "PATCH /api/orders/{id}",
      "POST /api/orders",
      "POST /items/{id}/notes",
      "POST /signup",
    ]);
    expect(Object.keys(parametersOf(routeAt(routes, "GET /search")))).toEqual(["query:q", "query:limit"]);
    expect(Object.keys(parametersOf(routeAt(routes, "GET /after")))).toEqual(["query:from", "query:to"]);
    const notes = routeAt(routes, "POST /items/{id}/notes");
    expect(Object.keys(bodyProperties(notes))).toEqual(["note"]);
    expect(notes.request_body?.content_type).toBe("application/x-www-form-urlencoded");
    expect(Object.keys(parametersOf(notes)).sort()).toEqual(["cookie:theme", "header:X-Tenant-Id"]);
    expect(Object.keys(bodyProperties(routeAt(routes, "POST /signup"))).sort()).toEqual([
      "email",
      "name",
      "password",
      "role",
    ]);
    const order = routeAt(routes, "POST /api/orders");
    expect(order.request_body?.content_type).toBe("application/json");
    expect(Object.keys(bodyProperties(order)).sort()).toEqual(["price", "quantity"]);
    const change = routeAt(routes, "PATCH /api/orders/{id}");
    expect(change.request_body?.content_type).toBe("application/json");
    expect(Object.keys(bodyProperties(change))).toEqual(["status"]);
  });
});
