import { PYTHON_CHECKS_SCRIPT } from "./python-checks-script.ts";
import { PYTHON_DISPATCH_SCRIPT } from "./python-dispatch-script.ts";
import { PYTHON_DJANGO_SCRIPT } from "./python-django-script.ts";
import { PYTHON_FASTAPI_SCRIPT } from "./python-fastapi-script.ts";
import { PYTHON_HANDLERS_SCRIPT } from "./python-handlers-script.ts";
import { PYTHON_INPUTS_SCRIPT } from "./python-inputs-script.ts";
import { PYTHON_PROJECT_SCRIPT } from "./python-project-script.ts";
import { PYTHON_SCHEMA_SCRIPT } from "./python-schema-script.ts";

// The Python half of route extraction, run once over every .py file as a script file: Python's own `ast`
// module parses Python, so comments, docstrings and strings that look like routes are never routes.
// It reports facts per file (containers, routes with the inputs their handlers read, mounts, channels);
// python-routes.ts resolves modules and prefixes. Input on stdin: {"root": str, "files": [str]}; output on
// stdout: JSON.

export const PYTHON_ROUTE_SCRIPT = String.raw`
import ast, json, os, re, sys

HTTP = {"get", "post", "put", "patch", "delete", "options", "head"}
FACTORIES = {
    "Flask": "flask", "Blueprint": "flask", "Quart": "quart", "FastAPI": "fastapi", "APIRouter": "fastapi",
    "Sanic": "sanic", "Starlette": "starlette", "Sock": "flask-sock", "RouteTableDef": "aiohttp",
    "DefaultRouter": "django-rest-framework", "SimpleRouter": "django-rest-framework",
    "Sockets": "flask-sockets", "Api": "flask-restful", "Namespace": "flask-restx", "NinjaAPI": "fastapi",
}
APPS = {"Flask", "Quart"}
WEBSOCKET_FRAMEWORKS = {"flask-sock", "flask-sockets"}
FRAMEWORK_MODULES = {"flask": "flask", "quart": "quart", "fastapi": "fastapi", "sanic": "sanic",
    "starlette": "starlette", "aiohttp": "aiohttp", "django": "django", "rest_framework": "django-rest-framework"}
PATHISH = re.compile(r"path|url|route|endpoint", re.I)
METHODISH = re.compile(r"method|command|verb", re.I)
METHOD_AND_PATH = re.compile(r"^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+(/\S*)$")
UPPER = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}


def dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return None if base is None else base + "." + node.attr
    return None


def call_name(node):
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name):
            return func.id
        if isinstance(func, ast.Attribute):
            return func.attr
    return None


def text(node):
    try:
        return ast.unparse(node)
    except Exception:
        return ""


class File:
    def __init__(self, rel, tree):
        self.rel = rel
        self.tree = tree
        self.consts = {}
        self.imports = {}
        self.frameworks = []
        self.containers = {}
        self.routes = []
        self.mounts = []
        self.channels = []
        self.module_dicts = {}
        self.module_lists = {}
        self.defs = top_level_defs(tree)
        # Every node of the file, walked once and read by every pass.
        self.nodes = list(ast.walk(tree))
        # before_request hooks: (container, function, applies to the whole app)
        self.hooks = []

    def string(self, node):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return self.consts.get(node.id)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.string(node.left), self.string(node.right)
            return None if left is None or right is None else left + right
        if isinstance(node, ast.JoinedStr):
            parts = []
            for value in node.values:
                if isinstance(value, ast.FormattedValue):
                    part = self.string(value.value)
                else:
                    part = self.string(value)
                if part is None:
                    return None
                parts.append(part)
            return "".join(parts)
        return None

    def keyword(self, call, *names):
        for keyword in call.keywords:
            if keyword.arg in names:
                return keyword.value
        return None

    def methods_of(self, node, default):
        if node is None:
            return default
        values = node.elts if isinstance(node, (ast.List, ast.Tuple, ast.Set)) else [node]
        found = [self.string(value) for value in values]
        found = [value.upper() for value in found if value]
        return found or default

    def reference(self, node):
        name = dotted(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        if head in self.imports:
            binding = dict(self.imports[head])
            binding["attrs"] = rest.split(".") if rest else []
            return binding
        return {"local": name}

    def collect(self):
        for node in self.nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    root = alias.name.split(".")[0]
                    self.note_framework(root)
                    local = alias.asname or root
                    module = alias.name if alias.asname else root
                    self.imports[local] = {"module": module, "level": 0, "name": None}
            elif isinstance(node, ast.ImportFrom):
                self.note_framework((node.module or "").split(".")[0])
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = {
                        "module": node.module or "", "level": node.level, "name": alias.name}
        for node in self.tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                value = self.string(node.value)
                if value is not None:
                    self.consts[name] = value
                if isinstance(node.value, ast.Dict):
                    self.module_dicts[name] = node.value
                if isinstance(node.value, (ast.List, ast.Tuple)):
                    self.module_lists[name] = node.value
        for node in self.nodes:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                factory = call_name(node.value)
                for target in node.targets:
                    name = dotted(target)
                    if name and factory in FACTORIES:
                        self.factory(name, factory, node.value)
                    elif name and factory == "namespace" and isinstance(node.value.func, ast.Attribute):
                        # Flask-RESTX: ns = api.namespace("users", path="/users")
                        self.namespace(name, node.value, dotted(node.value.func.value))

    def factory(self, name, factory, call):
        prefix = self.string(self.keyword(call, "url_prefix", "prefix")) or ""
        framework = FACTORIES[factory]
        if factory in ("Api", "Namespace"):
            framework = "flask-restx" if any(module in self.imported_modules() for module in ("flask_restx", "flask_restplus")) else "flask-restful"
        if factory == "Namespace":
            self.namespace(name, call, None)
            return
        container = {"framework": framework, "prefix": prefix}
        if factory in ("DefaultRouter", "SimpleRouter"):
            trailing = self.keyword(call, "trailing_slash")
            container["trailing"] = not (isinstance(trailing, ast.Constant) and trailing.value in (False, ""))
        if factory in APPS:
            container["app"] = True
        self.containers[name] = container
        # Api(app) / Api(blueprint): the API's routes hang off what it wraps.
        if factory in ("Api", "Sockets") and call.args and dotted(call.args[0]):
            self.mounts.append({"parent": dotted(call.args[0]), "child": {"local": name}, "prefix": "", "replace": False})

    def namespace(self, name, call, parent):
        first = self.string(call.args[0]) if call.args else None
        path = self.string(self.keyword(call, "path"))
        prefix = path if path is not None else ("/" + first if first else "")
        framework = "flask-restx"
        self.containers[name] = {"framework": framework, "prefix": prefix}
        if parent:
            self.mounts.append({"parent": parent, "child": {"local": name}, "prefix": "", "replace": False})

    def imported_modules(self):
        return {binding["module"].split(".")[0] for binding in self.imports.values()}

    def note_framework(self, module):
        framework = FRAMEWORK_MODULES.get(module)
        if framework and framework not in self.frameworks:
            self.frameworks.append(framework)

    def framework_of(self, container):
        known = self.containers.get(container)
        if known:
            return known["framework"]
        return self.frameworks[0] if self.frameworks else None

    def add_route(self, container, method, path, style, line, framework=None, target=None):
        route = {"container": container, "method": method, "path": path, "style": style,
                 "line": line, "framework": framework or self.framework_of(container)}
        if target is not None:
            route["target"] = target
        self.routes.append(route)
        return route

    def scan(self):
        for node in self.nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for decorator in node.decorator_list:
                    self.decorator(decorator, node)
                args = [arg.arg for arg in node.args.args]
                if args[:2] == ["environ", "start_response"]:
                    for method, path, style, line, target in Dispatch(self, [node]).hits():
                        self.add_route("wsgi@" + str(node.lineno), method, path, style, line, "wsgi", target)
            elif isinstance(node, ast.ClassDef):
                self.handler_class(node)
                for decorator in node.decorator_list:
                    self.class_decorator(decorator, node)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                self.mount_call(node)
            elif isinstance(node, (ast.Assign, ast.AugAssign)):
                self.urlpatterns(node)

    def decorator(self, decorator, function):
        if isinstance(decorator, ast.Attribute) and decorator.attr in ("before_request", "before_app_request"):
            container = dotted(decorator.value)
            app_wide = decorator.attr == "before_app_request" or self.containers.get(container, {}).get("app", False)
            self.hooks.append((container, function, app_wide))
            return
        if not isinstance(decorator, ast.Call) or not isinstance(decorator.func, ast.Attribute):
            return
        container = dotted(decorator.func.value)
        member = decorator.func.attr
        if container is None:
            return
        first = decorator.args[0] if decorator.args else self.keyword(decorator, "path", "rule", "uri")
        path = self.string(first) if first is not None else None
        if path is None or not path.startswith("/"):
            return
        style = "angle" if "<" in path else "brace"
        framework = self.framework_of(container)
        if member in ("websocket", "websocket_route") or (member == "route" and framework in WEBSOCKET_FRAMEWORKS):
            self.channels.append({"container": container, "path": path, "style": style,
                                  "line": decorator.lineno, "framework": framework or "websocket"})
            return
        target = ("function", self, function)
        if member in HTTP:
            self.add_route(container, member.upper(), path, style, decorator.lineno, None, target)
        elif member in ("route", "api_route"):
            for method in self.methods_of(self.keyword(decorator, "methods"), ["GET"]):
                self.add_route(container, method, path, style, decorator.lineno, None, target)

    def class_decorator(self, decorator, cls):
        """Flask-RESTX '@ns.route("/x")' (and look-alikes) on a Resource class: its methods are the routes."""
        if not (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute) and decorator.func.attr == "route"):
            return
        container = dotted(decorator.func.value)
        path = self.string(decorator.args[0]) if decorator.args else None
        if container is None or path is None or not path.startswith("/"):
            return
        style = "angle" if "<" in path else "brace"
        explicit = self.methods_of(self.keyword(decorator, "methods"), None)
        self.add_route(container, "ALL", path, style, decorator.lineno, None, ("class", self, cls, explicit))

    def mount_call(self, node):
        member = node.func.attr
        parent = dotted(node.func.value)
        if parent is None:
            return
        if member in ("register_blueprint", "include_router") and node.args:
            child = self.reference(node.args[0])
            prefix_node = self.keyword(node, "url_prefix", "prefix")
            prefix = self.string(prefix_node) if prefix_node is not None else None
            if child:
                self.mounts.append({"parent": parent, "child": child, "prefix": prefix or "",
                                    "replace": member == "register_blueprint" and prefix is not None})
        elif member == "mount" and len(node.args) >= 2:
            prefix = self.string(node.args[0])
            child = self.reference(node.args[1])
            if prefix is not None and child:
                self.mounts.append({"parent": parent, "child": child, "prefix": prefix, "replace": False})
        elif member == "add_url_rule" and (node.args or self.keyword(node, "rule")):
            rule = self.string(node.args[0] if node.args else self.keyword(node, "rule"))
            view = self.keyword(node, "view_func") or (node.args[2] if len(node.args) >= 3 else None)
            explicit = self.methods_of(self.keyword(node, "methods"), None)
            if rule and rule.startswith("/"):
                style = "angle" if "<" in rule else "brace"
                # A class-based view (View.as_view) answers whatever methods the class defines.
                placeholder = "ALL" if call_name(view) == "as_view" else "GET"
                target = ("view", view, explicit) if view is not None else None
                self.add_route(parent, placeholder, rule, style, node.lineno, None, target)
        elif member == "add_resource" and len(node.args) >= 2:
            # Flask-RESTful / RESTX: api.add_resource(UserResource, "/users/<int:id>", "/u/<int:id>")
            for argument in node.args[1:]:
                rule = self.string(argument)
                if rule and rule.startswith("/"):
                    style = "angle" if "<" in rule else "brace"
                    self.add_route(parent, "ALL", rule, style, node.lineno, None, ("view", node.args[0], None))
        elif member in ("add_namespace", "init_app") and node.args:
            child = self.reference(node.args[0])
            path_node = self.keyword(node, "path")
            path = self.string(path_node) if path_node is not None else None
            if child and member == "add_namespace":
                self.mounts.append({"parent": parent, "child": child, "prefix": path or "", "replace": path is not None})
            elif child and member == "init_app" and parent in self.containers:
                self.mounts.append({"parent": dotted(node.args[0]), "child": {"local": parent}, "prefix": "", "replace": False})
        elif member in ("add_get", "add_post", "add_put", "add_patch", "add_delete", "add_head") and node.args:
            self.aiohttp_route(parent, member[4:].upper(), node.args[0], node.args[1:2], node.lineno)
        elif member == "add_route" and len(node.args) >= 2:
            method = self.string(node.args[0])
            if method:
                self.aiohttp_route(parent, method.upper().replace("*", "ALL"), node.args[1], node.args[2:3], node.lineno)
        elif member == "add_routes" and node.args and isinstance(node.args[0], (ast.List, ast.Tuple)):
            # app.add_routes([web.get("/x", handler), web.route("*", "/y", View)])
            for entry in node.args[0].elts:
                verb = call_name(entry)
                if verb in HTTP and entry.args:
                    self.aiohttp_route(parent, verb.upper(), entry.args[0], entry.args[1:2], entry.lineno)
                elif verb in ("route", "view") and len(entry.args) >= 2:
                    method = self.string(entry.args[0]) if verb == "route" else "*"
                    path_node, handler = (entry.args[1], entry.args[2:3]) if verb == "route" else (entry.args[0], entry.args[1:2])
                    if method:
                        self.aiohttp_route(parent, method.upper().replace("*", "ALL"), path_node, handler, entry.lineno)
        elif member == "register" and len(node.args) >= 2 and self.containers.get(parent, {}).get("framework") == "django-rest-framework":
            prefix = self.string(node.args[0])
            if prefix is not None:
                base = prefix.strip("^").strip("/")
                route = self.add_route(parent, "ALL", base, "brace", node.lineno, None, ("viewset", node.args[1], "pk"))
                route["trailing"] = self.containers[parent].get("trailing", True)

    def aiohttp_route(self, parent, method, path_node, handler, line):
        """An aiohttp router entry; the handler it names (a function or a web.View class) gives its inputs."""
        path = self.string(path_node)
        if not path or not path.startswith("/"):
            return
        target = ("view", handler[0], None if method == "ALL" else [method]) if handler else None
        self.add_route(parent, method, path, "brace", line, "aiohttp", target)

    def urlpatterns(self, node):
        """urlpatterns (or any list of path()/re_path()/url() entries, which include() may name) as a container."""
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = [target.id for target in targets if isinstance(target, ast.Name)]
        value = node.value
        is_list = isinstance(value, (ast.List, ast.Tuple))
        patterns = is_list and any(call_name(element) in ("path", "re_path", "url") for element in value.elts)
        container = "urlpatterns" if "urlpatterns" in names else (names[0] if names and patterns else None)
        if container is None:
            return
        if not is_list:
            child = self.urls_reference(value)
            if child:
                self.mounts.append({"parent": container, "child": child, "prefix": "", "replace": False})
            return
        for element in value.elts:
            name = call_name(element)
            if name not in ("path", "re_path", "url") or not element.args:
                continue
            route = self.string(element.args[0])
            if route is None:
                continue
            style = "angle" if name == "path" else "regex"
            target = element.args[1] if len(element.args) > 1 else None
            if call_name(target) == "include" and target.args:
                child = self.urls_reference(target.args[0])
                if child:
                    self.mounts.append({"parent": container, "child": child, "prefix": route,
                                        "style": style, "replace": False})
                continue
            self.add_route(container, "ALL", route, style, element.lineno, "django",
                           ("view", target, None) if target is not None else None)

    def urls_reference(self, node):
        """What include() names: a module path, a module object, a router's .urls, a list, a (list, app) pair."""
        if isinstance(node, ast.Tuple) and node.elts:
            return self.urls_reference(node.elts[0])
        module = self.string(node)
        if module is not None:
            return {"module": module, "level": 0, "name": None, "attrs": ["urlpatterns"]}
        if isinstance(node, ast.Attribute) and node.attr == "urls":
            return self.reference(node.value)
        reference = self.reference(node)
        if reference is None or "local" in reference:
            return reference
        # An imported module object: its urlpatterns.
        reference["attrs"] = reference["attrs"] + ["urlpatterns"]
        return reference

    def handler_class(self, node):
        functions = [item for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]
        handlers = [item for item in functions if re.match(r"^do_[A-Z]+$", item.name)]
        if not handlers:
            return
        for method, path, style, line, target in Dispatch(self, functions, node).hits():
            self.add_route(node.name, method, path, style, line, "http.server", target)


${PYTHON_DISPATCH_SCRIPT}
${PYTHON_PROJECT_SCRIPT}
${PYTHON_SCHEMA_SCRIPT}
${PYTHON_INPUTS_SCRIPT}
${PYTHON_CHECKS_SCRIPT}
${PYTHON_FASTAPI_SCRIPT}
${PYTHON_DJANGO_SCRIPT}
${PYTHON_HANDLERS_SCRIPT}

def main():
    request = json.load(sys.stdin)
    root = request["root"]
    output = {"files": {}, "errors": []}
    files = {}
    for rel in request["files"]:
        try:
            with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as handle:
                tree = ast.parse(handle.read(), filename=rel)
        except (SyntaxError, ValueError, OSError) as error:
            output["errors"].append(rel + ": " + str(error).splitlines()[0])
            continue
        facts = File(rel, tree)
        try:
            facts.collect()
        except Exception as error:
            output["errors"].append(rel + ": not read (" + type(error).__name__ + ")")
            continue
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                if call_name(node.value) == "compile" and node.value.args:
                    pattern = facts.string(node.value.args[0])
                    if pattern is not None:
                        facts.consts["re:" + node.targets[0].id] = pattern
        try:
            facts.scan()
        except Exception as error:
            output["errors"].append(rel + ": routes not read (" + type(error).__name__ + ")")
            continue
        files[rel] = facts
    finisher = Finisher(Project(files))
    for rel, facts in files.items():
        if not (facts.routes or facts.mounts or facts.channels or facts.containers):
            continue
        try:
            finisher.finish(facts)
        except Exception as error:
            # The routes stand without their inputs rather than not at all.
            output["errors"].append(rel + ": handlers not read (" + type(error).__name__ + ")")
            for route in facts.routes:
                route.pop("target", None)
                route.pop("trailing", None)
        output["files"][rel] = {
            "containers": facts.containers, "routes": facts.routes, "mounts": facts.mounts,
            "channels": facts.channels, "frameworks": facts.frameworks,
        }
    sys.stdout.write(json.dumps(output))


main()
`;
