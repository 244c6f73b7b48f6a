// The last step of the Python extractor, once every file is read: each route is linked to its handler
// (a decorated function, a view named in urlpatterns or add_url_rule, a MethodView or Flask-RESTful
// Resource, a Django class-based view, a DRF viewset) wherever it is defined, class-based handlers are
// expanded into one route per method or action, and each route gets the inputs its handler declares and
// reads. Spliced into PYTHON_ROUTE_SCRIPT; uses everything above it.

export const PYTHON_HANDLERS_SCRIPT = String.raw`
FLASK_LIKE = {"flask", "quart", "flask-restful", "flask-restx"}
SIGNATURE_FRAMEWORKS = {"fastapi", "starlette"}
REQUEST_MODULES = {"flask", "quart", "werkzeug", "flask_restful", "flask_restx", "flask_restplus"}
METHOD_DECORATORS = {"require_POST": ["POST"], "require_GET": ["GET"], "require_safe": ["GET"]}
RESTX_FIELDS = {"String": {"type": "string"}, "Integer": {"type": "integer"}, "Float": {"type": "number"},
                "Boolean": {"type": "boolean"}, "DateTime": {"type": "string", "format": "date-time"},
                "Date": {"type": "string", "format": "date"}, "Url": {"type": "string", "format": "uri"},
                "Raw": {}, "Arbitrary": {"type": "number"}, "Fixed": {"type": "number"}}


def path_names(path):
    return set(re.findall(r"<(?:\w+:)?(\w+)>", path)) | set(re.findall(r"\{(\w+)(?::[^}]*)?\}", path)) | set(re.findall(r"\(\?P<(\w+)>", path))


class Finisher:
    def __init__(self, project):
        self.project = project
        self.signatures = Signatures(project)
        self.declarations = Declarations(project, self.signatures)
        self.apps = {}
        self.inputs_cache = {}
        self.hooks = {}

    def request_names(self, file, function, framework, method):
        names = {local for local, binding in file.imports.items()
                 if binding.get("name") == "request" and binding["module"].split(".")[0] in REQUEST_MODULES}
        params = function.args.posonlyargs + function.args.args
        if method and params:
            params = params[1:]
        for arg in params + function.args.kwonlyargs:
            if arg.annotation is not None and base_name(arg.annotation) in ("Request", "HttpRequest", "WSGIRequest"):
                names.add(arg.arg)
        if params and (params[0].arg in ("request", "req") or framework not in FLASK_LIKE | SIGNATURE_FRAMEWORKS):
            names.add(params[0].arg)
        return names

    def function_inputs(self, file, function, framework, path, method=False):
        key = (id(function), framework, tuple(sorted(path_names(path))), method)
        if key not in self.inputs_cache:
            self.inputs_cache[key] = self.read_inputs(file, function, framework, path, method)
        return self.inputs_cache[key]

    def read_inputs(self, file, function, framework, path, method):
        inputs = Inputs()
        if framework in SIGNATURE_FRAMEWORKS:
            self.signatures.function(file, function, path_names(path), inputs)
        names = self.request_names(file, function, framework, method)
        reads = Reads(self.project, file, inputs, names)
        reads.self_request = method
        reads.read(function)
        self.declared_bodies(file, function, names, inputs)
        self.expectations(file, function, inputs)
        return inputs

    def declared_bodies(self, file, function, names, inputs):
        """ContactForm(request.POST), ItemSerializer(data=request.data), Item(**request.get_json())."""
        for node in function_index(function)[2]:
            if not isinstance(node, ast.Call):
                continue
            callee = call_name(node)
            target = node.func
            if isinstance(node.func, ast.Attribute) and callee in ("load", "loads", "validate"):
                # marshmallow: UserSchema().load(request.get_json()), user_schema.load(request.json)
                target = node.func.value.func if isinstance(node.func.value, ast.Call) else node.func.value
            elif not callee or not callee[0].isupper():
                # Only a class builds a form, serializer or model: by convention its name is capitalized.
                continue
            carries = [keyword.value for keyword in node.keywords if keyword.arg in ("data", None)] + list(node.args[:1])
            if not any(any(isinstance(part, ast.Name) and part.id in names for part in ast.walk(value)) for value in carries):
                continue
            found = self.project.resolve_node(file, target)
            if found and isinstance(found[1], ast.Call):
                found = self.project.resolve_node(found[0], found[1].func)
            if not found or not isinstance(found[1], ast.ClassDef):
                continue
            schema, encoding = self.declarations.class_schema(found[0], found[1])
            if schema:
                inputs.body_schema(schema)
                inputs.encoding(encoding)

    def expectations(self, file, function, inputs):
        """Flask-RESTX '@ns.expect(model)' with 'api.model("X", {"name": fields.String(required=True)})'."""
        for decorator in function.decorator_list:
            if not (isinstance(decorator, ast.Call) and call_name(decorator) == "expect"):
                continue
            for argument in decorator.args:
                found = self.project.resolve_node(file, argument)
                value = found[1] if found else None
                if isinstance(value, ast.Call) and call_name(value) == "model" and len(value.args) >= 2 and isinstance(value.args[1], ast.Dict):
                    inputs.body_schema(self.restx_model(found[0], value.args[1]))
                    inputs.encoding("json")
                elif isinstance(value, ast.Call) and call_name(value) == "RequestParser":
                    reads = Reads(self.project, found[0], inputs, set())
                    reads.reqparse(dotted(argument).split(".")[-1])

    def restx_model(self, file, mapping, depth=0):
        properties, required = {}, []
        for key, value in zip(mapping.keys, mapping.values):
            name = file.string(key) if key is not None else None
            if not name or not isinstance(value, ast.Call):
                continue
            kind = call_name(value)
            schema = dict(RESTX_FIELDS.get(kind, {}))
            if kind == "List" and value.args and isinstance(value.args[0], ast.Call):
                schema = {"type": "array", "items": dict(RESTX_FIELDS.get(call_name(value.args[0]), {}))}
            if kind == "Nested" and value.args and depth < 3:
                found = self.project.resolve_node(file, value.args[0])
                nested = found[1] if found else None
                if isinstance(nested, ast.Call) and len(nested.args) >= 2 and isinstance(nested.args[1], ast.Dict):
                    schema = self.restx_model(found[0], nested.args[1], depth + 1)
            for keyword in value.keywords:
                if keyword.arg == "required" and isinstance(keyword.value, ast.Constant) and keyword.value.value is True:
                    required.append(name)
                if keyword.arg in ("enum",) and isinstance(keyword.value, (ast.List, ast.Tuple)):
                    schema["enum"] = [item.value for item in keyword.value.elts if isinstance(item, ast.Constant)]
                if keyword.arg in ("min_length", "max_length", "min", "max", "pattern") and isinstance(keyword.value, ast.Constant):
                    schema[{"min_length": "minLength", "max_length": "maxLength", "min": "minimum", "max": "maximum", "pattern": "pattern"}[keyword.arg]] = keyword.value.value
            properties[name] = schema
        result = {"type": "object", "properties": properties}
        if required:
            result["required"] = required
        return result

    def hook_inputs(self, file, container, framework):
        """Reads of before_request hooks: every route of the blueprint (or of the app) sees them."""
        key = (file.rel, container, framework)
        if key in self.hooks:
            return self.hooks[key]
        inputs = Inputs()
        self.hooks[key] = inputs
        for owner in self.project.files.values():
            for hook_container, function, app_wide in owner.hooks:
                same = owner is file and hook_container == container
                if app_wide or same or self.is_app(owner, hook_container):
                    inputs.merge(self.function_inputs(owner, function, framework, ""))
        return inputs

    def is_app(self, file, name):
        """Whether a name is bound (here or through imports) to Flask(...) or Quart(...): the whole app."""
        key = (file.rel, name)
        if key not in self.apps:
            found = self.project.resolve(file, name) if name else None
            value = found[1] if found else None
            self.apps[key] = isinstance(value, ast.Call) and call_name(value) in APPS
        return self.apps[key]

    def function_methods(self, file, function, names):
        """A Django function view's methods: its decorators, else the methods it compares with, else any."""
        for decorator in function.decorator_list:
            name = call_name(decorator) if isinstance(decorator, ast.Call) else dotted(decorator)
            name = name.split(".")[-1] if name else None
            if name in METHOD_DECORATORS:
                return METHOD_DECORATORS[name]
            if name in ("require_http_methods", "api_view") and isinstance(decorator, ast.Call) and decorator.args:
                return file.methods_of(decorator.args[0], ["GET"])
        compared = []
        for node in ast.walk(function):
            if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.In)):
                if isinstance(node.left, ast.Attribute) and node.left.attr == "method":
                    for candidate in [node.comparators[0]] + list(getattr(node.comparators[0], "elts", [])):
                        value = file.string(candidate)
                        if value and value.upper() in UPPER and value.upper() not in compared:
                            compared.append(value.upper())
        if compared:
            return (["GET"] if "GET" not in compared else []) + compared
        return ["ALL"]

    def finish(self, file):
        routes = []
        for route in file.routes:
            target = route.pop("target", None)
            kind = target[0] if target else None
            if kind == "function":
                routes.extend(self.function_routes(file, route, target[1], target[2], [route["method"]]))
            elif kind == "view" and self.opens_socket(file, route, target[1]):
                file.channels.append({key: route[key] for key in ("container", "path", "style", "line", "framework")})
            elif kind == "view":
                routes.extend(self.view_routes(file, route, target[1], target[2]))
            elif kind == "class":
                routes.extend(self.class_routes(file, route, target[1], target[2], target[3]))
            elif kind == "viewset":
                routes.extend(self.viewset_routes(file, route, target[1], target[2]))
            elif kind == "branch":
                routes.append(self.branch_route(route, target[1], target[2], target[3]))
            else:
                routes.append(route)
        file.routes = routes

    def opens_socket(self, file, route, expression):
        """An aiohttp handler that answers with a WebSocketResponse serves a WebSocket, not a page."""
        if route.get("framework") != "aiohttp":
            return False
        found = self.project.resolve_node(file, expression)
        return bool(found) and isinstance(found[1], (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            call_name(node) == "WebSocketResponse" for node in ast.walk(found[1]))

    def branch_route(self, route, owner, function, nodes):
        """One path of a hand-written dispatcher: what its branch reads."""
        inputs = Inputs()
        if function is not None:
            names = self.request_names(owner, function, route.get("framework") or "", False)
            Reads(self.project, owner, inputs, names).read_branch(function, nodes)
        return self.with_inputs(route, route["method"], inputs)

    def with_inputs(self, route, method, inputs, extra=None):
        entry = dict(route)
        entry["method"] = method
        if extra is not None:
            merged = Inputs()
            merged.merge(inputs)
            merged.merge(extra)
            inputs = merged
        result = inputs.output(method)
        if result:
            entry["inputs"] = result
        return entry

    def function_routes(self, file, route, owner, function, methods):
        framework = route.get("framework") or ""
        inputs = self.function_inputs(owner, function, framework, route["path"])
        hooks = self.hook_inputs(file, route["container"], framework) if framework in FLASK_LIKE else None
        return [self.with_inputs(route, method, inputs, hooks) for method in methods]

    def view_routes(self, file, route, expression, explicit):
        """A view named by reference: a function (methods from decorators), or a class-based view."""
        found = self.project.as_class(file, expression)
        if found:
            return self.class_routes(file, route, found[0], found[1], explicit)
        found = self.project.resolve_node(file, expression)
        if found and isinstance(found[1], (ast.FunctionDef, ast.AsyncFunctionDef)):
            names = self.request_names(found[0], found[1], route.get("framework") or "", False)
            methods = explicit or (self.function_methods(found[0], found[1], names) if route.get("framework") in ("django", "django-rest-framework") else ["GET"])
            return self.function_routes(file, route, found[0], found[1], methods)
        return [dict(route, method=method) for method in (explicit or [route["method"]])]

    def class_routes(self, file, route, owner, cls, explicit):
        """A MethodView, Resource or class-based view: one route per handler method, each with its reads."""
        methods = explicit or self.declarations.view_methods(owner, cls) or ["ALL"]
        handlers = self.project.class_methods(owner, cls)
        class_inputs = Inputs()
        self.expectations(owner, cls, class_inputs)
        for attribute in ("form_class", "serializer_class"):
            found = self.project.class_attribute(owner, cls, attribute)
            target = self.project.resolve_node(found[0], found[1]) if found else None
            if target and isinstance(target[1], ast.ClassDef):
                schema, encoding = self.declarations.class_schema(target[0], target[1])
                if schema:
                    class_inputs.body_schema(schema)
                    class_inputs.encoding(encoding)
        framework = route.get("framework") or ""
        if framework in FLASK_LIKE:
            class_inputs.merge(self.hook_inputs(file, route["container"], framework))
        routes = []
        for method in methods:
            handler = handlers.get(method.lower())
            inputs = Inputs()
            inputs.merge(class_inputs)
            if handler:
                inputs.merge(self.function_inputs(handler[0], handler[1], route.get("framework") or "", route["path"], True))
            for helper in ("get_queryset", "get_object", "get_context_data", "dispatch"):
                if helper in handlers:
                    inputs.merge(self.function_inputs(handlers[helper][0], handlers[helper][1], route.get("framework") or "", route["path"], True))
            routes.append(self.with_inputs(route, method, inputs))
        return routes

    def viewset_routes(self, file, route, expression, lookup_default):
        """router.register("items", ItemViewSet): list/create on the collection, the rest on one item, @actions."""
        base = route["path"]
        trailing = "/" if route.pop("trailing", True) else ""
        found = self.project.as_class(file, expression)
        if not found:
            actions, extras, owner, cls = list(ACTION_ROUTES), [], None, None
        else:
            owner, cls = found
            actions = self.declarations.viewset_actions(owner, cls)
            extras = self.declarations.extra_actions(owner, cls)
        lookup = lookup_default
        if cls is not None:
            for attribute in ("lookup_url_kwarg", "lookup_field"):
                value = self.project.class_attribute(owner, cls, attribute)
                if value and isinstance(value[1], ast.Constant) and isinstance(value[1].value, str):
                    lookup = value[1].value
                    break
        collection = base.rstrip("/") + trailing
        item = base.rstrip("/") + "/{" + lookup + "}" + trailing
        body = Inputs()
        if cls is not None:
            serializer = self.project.class_attribute(owner, cls, "serializer_class")
            target = self.project.resolve_node(serializer[0], serializer[1]) if serializer else None
            if target and isinstance(target[1], ast.ClassDef):
                schema, encoding = self.declarations.class_schema(target[0], target[1])
                if schema:
                    body.body_schema(schema)
        handlers = self.project.class_methods(owner, cls) if cls is not None else {}
        routes = []
        for action in actions:
            method, detail = ACTION_ROUTES[action]
            inputs = Inputs()
            if action in ("create", "update"):
                inputs.merge(body)
            if action == "partial_update" and body.body is not None:
                # PATCH sends any subset of the fields.
                inputs.body_schema({key: value for key, value in body.body.items() if key != "required"})
            for name in (action, "get_queryset"):
                if name in handlers:
                    inputs.merge(self.function_inputs(handlers[name][0], handlers[name][1], "django-rest-framework", item, True))
            entry = dict(route, path=item if detail else collection, style="brace")
            routes.append(self.with_inputs(entry, method, inputs))
        for owner_file, function, detail, methods, path in extras:
            inputs = self.function_inputs(owner_file, function, "django-rest-framework", item, True)
            entry = dict(route, path=(item if detail else collection).rstrip("/") + "/" + path.strip("/") + trailing, style="brace", line=route["line"])
            for method in methods:
                routes.append(self.with_inputs(entry, method, inputs))
        return routes
`;
