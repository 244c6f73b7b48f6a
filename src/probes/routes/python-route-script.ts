import { PYTHON_DISPATCH_SCRIPT } from "./python-dispatch-script.ts";

// The Python half of route extraction, run once over every .py file with `python3 -c`: Python's own `ast`
// module parses Python, so comments, docstrings and strings that look like routes are never routes.
// It reports facts per file (containers, routes, mounts, imports, channels); python-routes.ts resolves
// modules and prefixes. Input on stdin: {"root": str, "files": [str]}; output on stdout: JSON.

export const PYTHON_ROUTE_SCRIPT = String.raw`
import ast, json, os, re, sys

HTTP = {"get", "post", "put", "patch", "delete", "options", "head"}
FACTORIES = {
    "Flask": "flask", "Blueprint": "flask", "Quart": "quart", "FastAPI": "fastapi", "APIRouter": "fastapi",
    "Sanic": "sanic", "Starlette": "starlette", "Sock": "flask-sock", "RouteTableDef": "aiohttp",
    "DefaultRouter": "django-rest-framework", "SimpleRouter": "django-rest-framework",
}
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
        for node in ast.walk(self.tree):
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
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                factory = call_name(node.value)
                if factory in FACTORIES:
                    for target in node.targets:
                        name = dotted(target)
                        if name:
                            prefix = self.string(self.keyword(node.value, "url_prefix", "prefix")) or ""
                            self.containers[name] = {"framework": FACTORIES[factory], "prefix": prefix}

    def note_framework(self, module):
        framework = FRAMEWORK_MODULES.get(module)
        if framework and framework not in self.frameworks:
            self.frameworks.append(framework)

    def framework_of(self, container):
        known = self.containers.get(container)
        if known:
            return known["framework"]
        return self.frameworks[0] if self.frameworks else None

    def add_route(self, container, method, path, style, line, framework=None):
        self.routes.append({"container": container, "method": method, "path": path, "style": style,
                            "line": line, "framework": framework or self.framework_of(container)})

    def scan(self):
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for decorator in node.decorator_list:
                    self.decorator(decorator, node)
                args = [arg.arg for arg in node.args.args]
                if args[:2] == ["environ", "start_response"]:
                    for method, path, style, line in Dispatch(self, [node]).hits():
                        self.add_route("wsgi@" + str(node.lineno), method, path, style, line, "wsgi")
            elif isinstance(node, ast.ClassDef):
                self.handler_class(node)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                self.mount_call(node)
            elif isinstance(node, (ast.Assign, ast.AugAssign)):
                self.urlpatterns(node)

    def decorator(self, decorator, function):
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
        if member in ("websocket", "websocket_route") or (member == "route" and framework == "flask-sock"):
            self.channels.append({"container": container, "path": path, "style": style,
                                  "line": decorator.lineno, "framework": framework or "websocket"})
            return
        if member in HTTP:
            self.add_route(container, member.upper(), path, style, decorator.lineno)
        elif member in ("route", "api_route"):
            for method in self.methods_of(self.keyword(decorator, "methods"), ["GET"]):
                self.add_route(container, method, path, style, decorator.lineno)

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
            # A class-based view (View.as_view) answers whatever methods the class defines.
            default = ["ALL"] if call_name(view) == "as_view" else ["GET"]
            if rule and rule.startswith("/"):
                for method in self.methods_of(self.keyword(node, "methods"), default):
                    self.add_route(parent, method, rule, "angle" if "<" in rule else "brace", node.lineno)
        elif member in ("add_get", "add_post", "add_put", "add_patch", "add_delete", "add_head") and node.args:
            path = self.string(node.args[0])
            if path and path.startswith("/"):
                self.add_route(parent, member[4:].upper(), path, "brace", node.lineno, "aiohttp")
        elif member == "add_route" and len(node.args) >= 2:
            method, path = self.string(node.args[0]), self.string(node.args[1])
            if method and path and path.startswith("/"):
                self.add_route(parent, method.upper().replace("*", "ALL"), path, "brace", node.lineno, "aiohttp")
        elif member == "register" and len(node.args) >= 2 and self.containers.get(parent, {}).get("framework") == "django-rest-framework":
            prefix = self.string(node.args[0])
            if prefix is not None:
                base = prefix.strip("^").strip("/")
                for method in ("GET", "POST"):
                    self.add_route(parent, method, base + "/", "angle", node.lineno)
                for method in ("GET", "PUT", "PATCH", "DELETE"):
                    self.add_route(parent, method, base + "/{pk}/", "brace", node.lineno)

    def urlpatterns(self, node):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if not any(isinstance(target, ast.Name) and target.id == "urlpatterns" for target in targets):
            return
        value = node.value
        if not isinstance(value, (ast.List, ast.Tuple)):
            child = self.urls_reference(value)
            if child:
                self.mounts.append({"parent": "urlpatterns", "child": child, "prefix": "", "replace": False})
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
                    self.mounts.append({"parent": "urlpatterns", "child": child, "prefix": route,
                                        "style": style, "replace": False})
                continue
            self.add_route("urlpatterns", "ALL", route, style, element.lineno, "django")

    def urls_reference(self, node):
        module = self.string(node)
        if module is not None:
            return {"module": module, "level": 0, "name": None, "attrs": ["urlpatterns"]}
        if isinstance(node, ast.Attribute) and node.attr == "urls":
            return self.reference(node.value)
        return None

    def handler_class(self, node):
        functions = [item for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]
        handlers = [item for item in functions if re.match(r"^do_[A-Z]+$", item.name)]
        if not handlers:
            return
        for method, path, style, line in Dispatch(self, functions, node).hits():
            self.add_route(node.name, method, path, style, line, "http.server")


${PYTHON_DISPATCH_SCRIPT}

def main():
    request = json.load(sys.stdin)
    root = request["root"]
    output = {"files": {}, "errors": []}
    for rel in request["files"]:
        try:
            with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as handle:
                tree = ast.parse(handle.read(), filename=rel)
        except (SyntaxError, ValueError, OSError) as error:
            output["errors"].append(rel + ": " + str(error).splitlines()[0])
            continue
        facts = File(rel, tree)
        facts.collect()
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                if call_name(node.value) == "compile" and node.value.args:
                    pattern = facts.string(node.value.args[0])
                    if pattern is not None:
                        facts.consts["re:" + node.targets[0].id] = pattern
        facts.scan()
        if facts.routes or facts.mounts or facts.channels or facts.containers:
            output["files"][rel] = {
                "containers": facts.containers, "routes": facts.routes, "mounts": facts.mounts,
                "channels": facts.channels, "frameworks": facts.frameworks,
            }
    json.dump(output, sys.stdout)


main()
`;
