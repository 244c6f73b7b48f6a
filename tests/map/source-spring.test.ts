import { beforeAll, describe, expect, it } from "vitest";
import type { Route } from "../../src/map/system-map.ts";
import { scanSourceRoutes } from "../../src/probes/routes/find-source-routes.ts";
import { bodyProperties, parametersOf, routeAt } from "../fixtures/route-apps/route-lookup.ts";
import { signatures, writeTree } from "./write-tree.ts";

const javaController = `package shop.web;

import org.springframework.web.bind.annotation.*;

@RestController
@RequestMapping(ApiPaths.BASE + "/orders")
public class OrderController {
    private static final Logger log = LoggerFactory.getLogger(OrderController.class);

    @GetMapping
    public List<Order> list(@RequestParam(name = "status", required = false) String status,
                            @RequestParam int page) {
        log.info("@GetMapping(\\"/not-a-route\\") served");
        return service.list(status, page);
    }

    @GetMapping("/{id:\\\\d+}")
    public Order get(@PathVariable Long id, @RequestHeader("X-Tenant") String tenant) { return null; }

    // Spring joins "/orders" and "/" into "/orders/": that is the path it serves.
    @PostMapping(value = "/", consumes = "application/json")
    public Order create(@RequestBody CreateOrder body) { return null; }

    // @DeleteMapping("/{id}")
    // public void remove(@PathVariable Long id) {}

    /* @PutMapping("/{id}/legacy") */
    @RequestMapping(value = {"/{id}/cancel", "/{id}/void"}, method = {RequestMethod.POST, RequestMethod.PUT})
    public void cancel(@PathVariable("id") long orderId, @CookieValue(value = "sid", defaultValue = "") String sid) {}
}
`;

const paths = `package shop.web;
public final class ApiPaths {
    public static final String BASE = "/api/v1";
}
`;

const dto = `package shop.web;
public record CreateOrder(@NotNull String sku, int quantity, List<String> tags) {}
`;

const kotlinController = `package shop.web

@Controller
@RequestMapping("/admin")
class AdminController(private val users: UserService) {
    @GetMapping("/users/{userId}")
    fun show(@PathVariable userId: String, @RequestParam(required = false) tab: String?): String = "user"

    @RequestMapping("/health")
    fun health(): String = "ok"

    @PatchMapping(path = ["/users/{userId}"])
    fun patch(@PathVariable userId: String, @RequestBody change: UserChange): String = "ok"
}

data class UserChange(val email: String, val admin: Boolean)
`;

const feignClient = `package shop.clients;

@FeignClient(name = "billing")
@RequestMapping("/billing")
public interface BillingClient {
    @GetMapping("/invoices/{id}")
    Invoice invoice(@PathVariable String id);
}
`;

const plainService = `package shop.service;

@Service
public class Mapper {
    @GetMapping("/looks-like-a-route")
    public void notAController() {}
}
`;

const testController = `package shop.web;
@RestController
class TestOnlyController {
    @GetMapping("/test-only")
    String t() { return ""; }
}
`;

describe("Spring controllers in Java and Kotlin", () => {
  let routes: Route[];
  beforeAll(() => {
    routes = scanSourceRoutes(
      writeTree({
        "src/main/java/shop/web/OrderController.java": javaController,
        "src/main/java/shop/web/ApiPaths.java": paths,
        "src/main/java/shop/web/CreateOrder.java": dto,
        "src/main/kotlin/shop/web/AdminController.kt": kotlinController,
        "src/main/java/shop/clients/BillingClient.java": feignClient,
        "src/main/java/shop/service/Mapper.java": plainService,
        "src/test/java/shop/web/TestOnlyController.java": testController,
      }),
    ).routes;
  });

  it("joins the class prefix (a constant too) with each method mapping and skips comments, logs, clients", () => {
    expect(signatures(routes)).toEqual([
      "ALL /admin/health",
      "GET /admin/users/{userId}",
      "GET /api/v1/orders",
      "GET /api/v1/orders/{id}",
      "PATCH /admin/users/{userId}",
      "POST /api/v1/orders/",
      "POST /api/v1/orders/{id}/cancel",
      "POST /api/v1/orders/{id}/void",
      "PUT /api/v1/orders/{id}/cancel",
      "PUT /api/v1/orders/{id}/void",
    ]);
    expect(routeAt(routes, "GET /api/v1/orders")).toMatchObject({
      file: "src/main/java/shop/web/OrderController.java",
      line: 10,
      framework: "spring",
    });
  });

  it("reads @RequestParam, @RequestHeader and @CookieValue names, types and whether they are required", () => {
    expect(parametersOf(routeAt(routes, "GET /api/v1/orders"))).toEqual({
      "query:status": { type: "string" },
      "query:page!": { type: "integer" },
    });
    expect(parametersOf(routeAt(routes, "GET /api/v1/orders/{id}"))).toEqual({
      "header:X-Tenant!": { type: "string" },
    });
    expect(parametersOf(routeAt(routes, "POST /api/v1/orders/{id}/cancel"))).toEqual({
      "cookie:sid": { type: "string" },
    });
    expect(parametersOf(routeAt(routes, "GET /admin/users/{userId}"))).toEqual({
      "query:tab": { type: "string" },
    });
  });

  it("describes a @RequestBody from the record or data class the tree declares", () => {
    const create = routeAt(routes, "POST /api/v1/orders/");
    expect(create.request_body?.content_type).toBe("application/json");
    expect(bodyProperties(create)).toEqual({
      sku: { type: "string" },
      quantity: { type: "integer" },
      tags: { type: "array", items: { type: "string" } },
    });
    expect(bodyProperties(routeAt(routes, "PATCH /admin/users/{userId}"))).toEqual({
      email: { type: "string" },
      admin: { type: "boolean" },
    });
  });
});
