import { describe, expect, it } from "vitest";
import { scanSourceRoutes } from "../../src/probes/routes/find-source-routes.ts";
import { bodyProperties, parametersOf, routeAt } from "../fixtures/route-apps/route-lookup.ts";
import { signatures, writeTree } from "./write-tree.ts";

const webRoutes = `<?php

use Illuminate\\Support\\Facades\\Route;

Route::get('/', [HomeController::class, 'index']);
Route::get('/posts/{post}/comments/{comment?}', [CommentController::class, 'show'])->name('comments.show');
// Route::get('/old-page', fn () => view('old'));
Route::prefix('admin')->middleware('auth')->group(function () {
    Route::post('/users/{id}/ban', [AdminController::class, 'ban']);
    Route::group(['prefix' => 'reports', 'middleware' => 'can:read'], function () {
        Route::match(['get', 'post'], '/monthly', [ReportController::class, 'monthly']);
    });
});
Route::resource('photos', PhotoController::class);
Log::info("Route::get('/logged', ...) is text");
$name = $request->get('/not-a-route');
`;

const apiRoutes = `<?php
use Illuminate\\Support\\Facades\\Route;

Route::apiResource('orders', OrderController::class);
Route::middleware('auth:sanctum')->get('/user', fn ($request) => $request->user());
`;

describe("a Laravel application", () => {
  it("joins prefix groups, array groups and routes/api.php's /api; expands resources", () => {
    const routes = scanSourceRoutes(
      writeTree({
        artisan: "#!/usr/bin/env php\n<?php\n",
        "composer.json": JSON.stringify({ require: { "laravel/framework": "^10.0" } }),
        "routes/web.php": webRoutes,
        "routes/api.php": apiRoutes,
        "public/index.php": "<?php\nrequire __DIR__.'/../vendor/autoload.php';\necho 'front controller';\n",
        "tests/Feature/PostTest.php": "<?php\nRoute::get('/only-in-tests', fn () => 1);\n",
      }),
    ).routes;
    expect(signatures(routes)).toEqual([
      "DELETE /api/orders/{order}",
      "DELETE /photos/{photo}",
      "GET /",
      "GET /admin/reports/monthly",
      "GET /api/orders",
      "GET /api/orders/{order}",
      "GET /api/user",
      "GET /photos",
      "GET /photos/create",
      "GET /photos/{photo}",
      "GET /photos/{photo}/edit",
      "GET /posts/{post}/comments/{comment}",
      "PATCH /api/orders/{order}",
      "PATCH /photos/{photo}",
      "POST /admin/reports/monthly",
      "POST /admin/users/{id}/ban",
      "POST /api/orders",
      "POST /photos",
      "PUT /api/orders/{order}",
      "PUT /photos/{photo}",
    ]);
    expect(routeAt(routes, "POST /admin/users/{id}/ban")).toMatchObject({
      file: "routes/web.php",
      line: 9,
      framework: "laravel",
    });
  });
});

describe("a plain PHP application", () => {
  const tree = {
    "index.php": "<?php include 'includes/header.php'; ?>\n<h1>Welcome</h1>\n",
    "login.php": `<?php
if ($_SERVER['REQUEST_METHOD'] === 'POST') {
    $user = $_POST['username'];
    $password = $_POST["password"];
}
$next = isset($_GET['next']) ? $_GET['next'] : '/';
?>
<form method="post"><input name="username"></form>
`,
    "vulnerabilities/search/index.php": `<?php
$term = $_REQUEST['q'];
$theme = $_COOKIE['theme'];
// $old = $_GET['legacy'];
echo "Results for " . htmlspecialchars($term);
`,
    "upload.php":
      "<?php\nif (isset($_FILES['avatar'])) { move_uploaded_file($_FILES['avatar']['tmp_name'], 'x'); }\n",
    "includes/header.php": "<html><body>\n",
    "config.inc.php": "<?php\n$db_password = 'x';\n",
    "lib/Db.php": "<?php\nclass Db { public function query($sql) { return null; } }\n",
    "functions.php": "<?php\nfunction h($s) { return htmlspecialchars($s); }\n",
    "src/Model/User.php": "<?php\nnamespace App\\Model;\nclass User {}\n",
    "vendor/acme/lib/page.php": "<?php echo $_GET['x'];\n",
  };

  // $_REQUEST alone answers GET as well as POST: the page is offered by GET, its reads become query parameters.
  it("serves each page under the web root, with POST where the page reads a body, and skips libraries", () => {
    const routes = scanSourceRoutes(writeTree(tree)).routes;
    expect(signatures(routes)).toEqual([
      "GET /index.php",
      "GET /login.php",
      "GET /upload.php",
      "GET /vulnerabilities/search/index.php",
      "POST /login.php",
      "POST /upload.php",
    ]);
    expect(parametersOf(routeAt(routes, "GET /login.php"))).toEqual({ "query:next": { type: "string" } });
    const login = routeAt(routes, "POST /login.php");
    expect(login.request_body?.content_type).toBe("application/x-www-form-urlencoded");
    expect(Object.keys(bodyProperties(login))).toEqual(["username", "password"]);
    expect(parametersOf(routeAt(routes, "GET /vulnerabilities/search/index.php"))).toEqual({
      "query:q": { type: "string" },
      "cookie:theme": { type: "string" },
    });
    expect(routeAt(routes, "POST /upload.php").request_body?.content_type).toBe("multipart/form-data");
  });

  it("reads a page's includes as the page: their reads are its parameters, and they are no routes", () => {
    const routes = scanSourceRoutes(
      writeTree({
        "index.php": "<?php echo 'home';\n",
        "modules/lookup/index.php": `<?php
$level = $_COOKIE['level'] ?? 'low';
require_once __DIR__ . "/source/{$level}.php";
echo $html;
`,
        "modules/lookup/source/low.php": "<?php\n$id = $_GET['id'];\n$html = lookup($id);\n",
        "modules/lookup/source/high.php": "<?php\n$id = $_POST['id'];\n$html = lookup($id);\n",
        // A template a viewer reads as text and runs: no page of its own (requested alone it fails).
        "modules/lookup/help/help.php":
          "<div><p>Look a record up by its number.</p><?php echo page_link(); ?></div>\n",
        "help.php": `<?php
$module = $_GET['module'];
eval('?>' . file_get_contents("modules/{$module}/help/help.php") . '<?php ');
$notes = file_get_contents("notes/changes.txt");
`,
      }),
    ).routes;
    expect(signatures(routes)).toEqual([
      "GET /help.php",
      "GET /index.php",
      "GET /modules/lookup/index.php",
      "POST /modules/lookup/index.php",
    ]);
    expect(parametersOf(routeAt(routes, "GET /modules/lookup/index.php"))).toEqual({
      "query:id": { type: "string" },
      "cookie:level": { type: "string" },
    });
  });

  it("finds the web root in public/ when the project keeps its pages there", () => {
    const routes = scanSourceRoutes(
      writeTree({
        "public/index.php": "<?php echo 'home';\n",
        "public/account/profile.php": "<?php echo $_GET['id'];\n",
        "bin/cron.php": "<?php echo 'not served';\n",
      }),
    ).routes;
    expect(signatures(routes)).toEqual(["GET /account/profile.php", "GET /index.php"]);
  });
});
