import { describe, expect, it } from "vitest";
import { scanSourceRoutes } from "../../src/probes/routes/find-source-routes.ts";
import { parametersOf, routeAt } from "../fixtures/route-apps/route-lookup.ts";
import { signatures, writeTree } from "./write-tree.ts";

const controller = `using Microsoft.AspNetCore.Mvc;

namespace Shop.Controllers;

[ApiController]
[Route("api/[controller]")]
public class ProductsController : ControllerBase
{
    private readonly ILogger _log;

    [HttpGet]
    public IActionResult List([FromQuery] string? category, [FromQuery(Name = "page_size")] int pageSize = 20)
    {
        _log.LogInformation("[HttpGet(\\"/not-a-route\\")] is text");
        return Ok();
    }

    [HttpGet("{id:int}")]
    public async Task<ActionResult<Product>> Get(int id, [FromHeader(Name = "X-Tenant")] string tenant) => Ok();

    [HttpPost]
    public IActionResult Create([FromBody] ProductDto dto) => Ok();

    // [HttpDelete("{id}")]
    // public IActionResult Delete(int id) => Ok();

    [Route("{id}/archive")]
    [HttpPut]
    public IActionResult Archive(int id) => Ok();

    [HttpGet("/health")]
    public IActionResult Health() => Ok();

    public IActionResult Helper() => Ok();
}
`;

const program = `var builder = WebApplication.CreateBuilder(args);
var app = builder.Build();

app.MapGet("/", () => "hello");
var orders = app.MapGroup("/api/orders");
orders.MapGet("/{id}", (int id) => Results.Ok());
orders.MapPost("/", (Order order) => Results.Created());
app.MapMethods("/ping", new[] { "GET", "HEAD" }, () => "pong");
// app.MapDelete("/danger", () => "no");
app.Run();
`;

describe("ASP.NET Core routes", () => {
  it("reads attribute-routed controllers and minimal APIs with their groups", () => {
    const routes = scanSourceRoutes(
      writeTree({
        "src/Shop/Controllers/ProductsController.cs": controller,
        "src/Shop/Program.cs": program,
        "tests/Shop.Tests/FakeController.cs":
          '[ApiController]\n[Route("x")]\npublic class FakeController : ControllerBase { [HttpGet] public IActionResult A() => Ok(); }\n',
        "src/Shop.Tests/OtherController.cs":
          '[ApiController]\n[Route("y")]\npublic class OtherController : ControllerBase { [HttpGet] public IActionResult A() => Ok(); }\n',
      }),
    ).routes;
    expect(signatures(routes)).toEqual([
      "GET /",
      "GET /api/Products",
      "GET /api/Products/{id}",
      "GET /api/orders/{id}",
      "GET /health",
      "GET /ping",
      "HEAD /ping",
      "POST /api/Products",
      "POST /api/orders",
      "PUT /api/Products/{id}/archive",
    ]);
    expect(parametersOf(routeAt(routes, "GET /api/Products"))).toEqual({
      "query:category": { type: "string" },
      "query:page_size": { type: "integer" },
    });
    expect(parametersOf(routeAt(routes, "GET /api/Products/{id}"))).toEqual({
      "header:X-Tenant!": { type: "string" },
    });
    expect(routeAt(routes, "POST /api/Products").request_body?.content_type).toBe("application/json");
    expect(routeAt(routes, "GET /api/Products/{id}")).toMatchObject({
      file: "src/Shop/Controllers/ProductsController.cs",
      line: 19,
      framework: "aspnet",
    });
  });
});
