// Realtime channels in Python source, read with Python's own `ast` (run once as a script file over every
// .py file): Flask-SocketIO and python-socketio servers with their path, namespaces, events and where they
// read a client's credential; plain WebSocket endpoints of `websockets.serve(...)`, Starlette/FastAPI
// `WebSocketRoute`/`add_websocket_route` and flask_sockets' `@sockets.route`. Input on stdin: {"root": str, "files": [str]}; output: JSON
// {"files": {rel: facts}, "errors": [str]}.

export const PYTHON_CHANNEL_SCRIPT = `
import ast, json, os, re, sys

RESERVED = {"connect", "disconnect", "connect_error", "error", "*"}
SOCKETIO_MODULES = {"flask_socketio", "socketio"}
AUTH_EVENT = re.compile(r"^(auth|authenticate|authentication|authorize|login|identify)$", re.I)
SERVER_CLASSES = {"SocketIO", "Server", "AsyncServer"}
APP_WRAPPERS = {"WSGIApp", "ASGIApp", "Middleware", "ASGIMiddleware"}


def string(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def keyword(call, *names):
    for item in call.keywords:
        if item.arg in names:
            return item.value
    return None


def call_name(node):
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name):
            return func.id
        if isinstance(func, ast.Attribute):
            return func.attr
    return None


def root_name(node):
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def auth_event_placement(name, handler):
    """event:<name>:<field> when the handler reads a field of its payload, event:<name> when it takes it whole."""
    if handler is None:
        return "event:%s:token" % name
    params = [a.arg for a in handler.args.args if a.arg not in ("self", "sid")]
    if not params:
        return "event:%s:token" % name
    payload = params[0]
    for inner in ast.walk(handler):
        if isinstance(inner, ast.Subscript) and isinstance(inner.value, ast.Name) and inner.value.id == payload:
            key = string(inner.slice)
            if key:
                return "event:%s:%s" % (name, key)
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr == "get":
            owner = inner.func.value
            if isinstance(owner, ast.Name) and owner.id == payload and inner.args and string(inner.args[0]):
                return "event:%s:%s" % (name, string(inner.args[0]))
    return "event:" + name


def norm_path(value):
    if not value:
        return "/socket.io"
    value = value if value.startswith("/") else "/" + value
    return value.rstrip("/") or "/"


class File:
    def __init__(self, tree):
        self.tree = tree
        self.socketio = False
        self.websockets = False
        self.servers = []
        self.namespaces = []
        self.events = []
        self.credentials = []
        self.channels = []
        self.middleware = False
        self.root_namespace = False
        self.instances = set()
        self.plain_instances = set()
        self.flask_sockets = False

    def add(self, bucket, value):
        if value is not None and value not in bucket:
            bucket.append(value)

    def event(self, name, handler=None):
        if name and name not in RESERVED:
            self.add(self.events, name)
            if AUTH_EVENT.match(name):
                self.add(self.credentials, auth_event_placement(name, handler))

    def constant(self, node):
        """A string literal, or a module-level name bound to one (DESK = "/desk")."""
        if isinstance(node, ast.Name):
            if not hasattr(self, "constants"):
                self.constants = {}
                for statement in self.tree.body:
                    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
                        value = string(statement.value)
                        if value is not None:
                            self.constants[statement.targets[0].id] = value
            return self.constants.get(node.id)
        return string(node)

    def namespace(self, node, handler=True):
        """A namespace keyword; on a handler, none (or "/") means the main namespace."""
        name = self.constant(node) if node is not None else None
        if name and name != "/" and name.startswith("/"):
            self.add(self.namespaces, name)
        elif handler and (node is None or name == "/"):
            self.root_namespace = True

    def run(self):
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    top = alias.name.split(".")[0]
                    if top in SOCKETIO_MODULES:
                        self.socketio = True
                    if top == "websockets":
                        self.websockets = True
            elif isinstance(node, ast.ImportFrom) and node.module:
                top = node.module.split(".")[0]
                if top == "flask_sockets":
                    self.flask_sockets = True
                if top in SOCKETIO_MODULES:
                    self.socketio = True
                if top == "websockets":
                    self.websockets = True
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                names = [target.id for target in node.targets if isinstance(target, ast.Name)]
                if call_name(node.value) in SERVER_CLASSES and self.socketio:
                    self.instances.update(names)
                if call_name(node.value) == "Sockets" and self.flask_sockets:
                    self.plain_instances.update(names)
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call):
                self.call(node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.function(node)
            elif isinstance(node, ast.ClassDef):
                self.namespace_class(node)
        return self

    def is_instance(self, node):
        name = root_name(node)
        return name in self.instances or (self.socketio and name in ("socketio", "sio", "socket_io"))

    def call(self, node):
        name = call_name(node)
        if not self.socketio and not self.websockets and name not in ("WebSocketRoute", "add_websocket_route", "add_api_websocket_route"):
            return
        if name == "SocketIO" and self.socketio:
            # Flask-SocketIO serves itself; python-socketio's Server is served by the app that wraps it.
            path = keyword(node, "path")
            self.servers.append({"path": norm_path(string(path)), "line": node.lineno, "explicit": path is not None})
        elif name in APP_WRAPPERS and self.socketio:
            path = keyword(node, "socketio_path")
            self.servers.append({"path": norm_path(string(path)), "line": node.lineno, "explicit": path is not None})
        elif name == "init_app" and self.is_instance(node.func):
            path = keyword(node, "path")
            if path is not None:
                self.servers.append({"path": norm_path(string(path)), "line": node.lineno, "explicit": True})
        elif name in ("emit", "send") and self.socketio:
            if name == "emit" and node.args:
                self.event(string(node.args[0]))
            self.namespace(keyword(node, "namespace"), handler=False)
        elif name == "on_event" and self.is_instance(node.func) and node.args:
            self.event(string(node.args[0]))
            self.namespace(keyword(node, "namespace"))
        elif name in ("on_namespace", "register_namespace") and node.args and isinstance(node.args[0], ast.Call):
            inner = node.args[0]
            named = inner.args[0] if inner.args else keyword(inner, "namespace")
            if named is not None:
                self.namespace(named)
        elif name in ("WebSocketRoute", "add_websocket_route", "add_api_websocket_route"):
            path = string(node.args[0]) if node.args else string(keyword(node, "path"))
            if path and path.startswith("/"):
                self.channels.append({"path": path, "line": node.lineno, "framework": "starlette"})
        elif name == "serve" and self.websockets and (isinstance(node.func, ast.Name) or root_name(node.func) == "websockets"):
            # A websockets server answers on every path; its handler may look at the path itself.
            self.channels.append({"path": "/", "line": node.lineno, "framework": "websockets"})

    def function(self, node):
        for decorator in node.decorator_list:
            # flask_sockets: @sockets.route("/path") on a plain WebSocket handler.
            if (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)
                    and decorator.func.attr == "route" and root_name(decorator.func) in self.plain_instances):
                path = string(decorator.args[0]) if decorator.args else None
                if path and path.startswith("/"):
                    self.channels.append({"path": path, "line": decorator.lineno, "framework": "flask-sockets"})
                continue
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if not isinstance(target, ast.Attribute) or not self.is_instance(target):
                continue
            if target.attr == "on" and isinstance(decorator, ast.Call) and decorator.args:
                event = string(decorator.args[0])
                self.namespace(keyword(decorator, "namespace"))
                if event == "connect":
                    self.connect_handler(node)
                self.event(event, node)
            elif target.attr == "event":
                if node.name == "connect":
                    self.connect_handler(node)
                self.event(node.name, node)
                self.namespace(keyword(decorator, "namespace") if isinstance(decorator, ast.Call) else None)
            elif target.attr in ("use", "before_request"):
                self.middleware = True

    def namespace_class(self, node):
        bases = [b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in node.bases]
        if not any(base in ("Namespace", "AsyncNamespace") for base in bases):
            return
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("on_"):
                if item.name == "on_connect":
                    self.connect_handler(item)
                self.event(item.name[3:], item)

    def connect_handler(self, node):
        """Where a connect handler reads the client's credential: auth payload, query, headers, cookie."""
        self.middleware = True
        params = [a.arg for a in node.args.args]
        auth = params[-1] if params and params[-1] == "auth" else None
        for inner in ast.walk(node):
            if isinstance(inner, ast.Subscript) and root_name(inner.value) == auth and auth:
                key = string(inner.slice)
                if key:
                    self.add(self.credentials, "auth:" + key)
            if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute):
                owner = inner.func.value
                arg = string(inner.args[0]) if inner.args else None
                # \`auth.get("token")\`, and \`(auth or {}).get("token")\` (the payload may be None).
                if isinstance(owner, ast.BoolOp) and isinstance(owner.op, ast.Or) and owner.values:
                    owner = owner.values[0]
                if inner.func.attr == "get" and isinstance(owner, ast.Name) and owner.id == auth and arg:
                    self.add(self.credentials, "auth:" + arg)
                if inner.func.attr == "get" and isinstance(owner, ast.Attribute) and owner.attr == "args" and arg:
                    self.add(self.credentials, "query:" + arg)
                if inner.func.attr == "get" and isinstance(owner, ast.Attribute) and owner.attr == "headers" and arg:
                    self.add(self.credentials, "header:" + arg.lower())
                if inner.func.attr == "get" and isinstance(owner, ast.Name) and owner.id == "environ" and arg:
                    if arg == "HTTP_COOKIE":
                        self.add(self.credentials, "header:cookie")
                    elif arg.startswith("HTTP_"):
                        self.add(self.credentials, "header:" + arg[5:].lower().replace("_", "-"))
            if isinstance(inner, ast.Subscript) and isinstance(inner.value, ast.Attribute) and inner.value.attr == "args":
                key = string(inner.slice)
                if key:
                    self.add(self.credentials, "query:" + key)
            if isinstance(inner, ast.Name) and inner.id in ("current_user", "session"):
                self.add(self.credentials, "header:cookie")
            if isinstance(inner, ast.Attribute) and inner.attr == "cookies":
                self.add(self.credentials, "header:cookie")

    def facts(self):
        return {"socketio": self.socketio, "servers": self.servers, "namespaces": self.namespaces,
                "events": self.events, "credentials": self.credentials, "channels": self.channels,
                "middleware": self.middleware, "root_namespace": self.root_namespace}


def main():
    request = json.load(sys.stdin)
    root = request["root"]
    output = {"files": {}, "errors": []}
    for rel in request["files"]:
        try:
            with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as handle:
                tree = ast.parse(handle.read(), filename=rel)
        except (SyntaxError, ValueError, OSError) as error:
            output["errors"].append("%s: %s" % (rel, error.__class__.__name__))
            continue
        facts = File(tree).run().facts()
        if facts["socketio"] or facts["channels"]:
            output["files"][rel] = facts
    json.dump(output, sys.stdout)


main()
`;
