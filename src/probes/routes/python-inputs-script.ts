// The part of the Python extractor that learns what a handler reads: Flask's `request.args.get("q")`,
// `request.form["name"]`, `request.get_json()["x"]`, Django's `request.GET`/`request.POST`/`request.META`,
// DRF's `request.data`, http.server's `parse_qs(urlparse(self.path).query)` and JSON read from rfile,
// Flask-RESTful's reqparse — through aliases, type conversions and one call into a helper of the file.
// Spliced into PYTHON_ROUTE_SCRIPT after PYTHON_SCHEMA_SCRIPT (Inputs, guess); uses dotted, call_name and
// the File class.

export const PYTHON_INPUTS_SCRIPT = String.raw`
PY_TYPES = {"int": {"type": "integer"}, "float": {"type": "number"}, "bool": {"type": "boolean"},
            "str": {"type": "string"}, "Decimal": {"type": "number"}}
FLASK_BAGS = {"args": ("query", None), "form": ("body", "form"), "values": ("values", None),
              "json": ("body", "json"), "files": ("body", "multipart"), "cookies": ("cookie", None),
              "headers": ("header", None), "view_args": ("path", None)}
DJANGO_BAGS = {"GET": ("query", None), "POST": ("body", "form"), "FILES": ("body", "multipart"),
               "COOKIES": ("cookie", None), "META": ("meta", None), "headers": ("header", None),
               "data": ("body", None), "query_params": ("query", None), "query": ("query", None)}


DATE_PARSERS = {"fromisoformat": {"type": "string", "format": "date"}, "strptime": {"type": "string", "format": "date"},
                "isoparse": {"type": "string", "format": "date-time"}, "parse_date": {"type": "string", "format": "date"},
                "parse_datetime": {"type": "string", "format": "date-time"}}


def conversion_schema(call):
    """The type a conversion gives its first argument: int(x), float(x), Decimal(x), date.fromisoformat(x)."""
    func = call.func
    if isinstance(func, ast.Name) and func.id in PY_TYPES and func.id != "str":
        return PY_TYPES[func.id]
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name in DATE_PARSERS:
        owner = dotted(func.value) if isinstance(func, ast.Attribute) else ""
        return {"type": "string", "format": "date-time"} if owner and owner.endswith("datetime") else DATE_PARSERS[name]
    return None


def literal_schema(node):
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool):
            return guess({"type": "boolean"})
        if isinstance(value, int):
            return guess({"type": "integer"})
        if isinstance(value, float):
            return guess({"type": "number"})
    if isinstance(node, (ast.List, ast.Tuple)):
        return guess({"type": "array"})
    if isinstance(node, ast.Dict):
        return guess({"type": "object", "properties": {}})
    return None


def environ_key(key):
    """A WSGI environ key: the query string, the body stream, a header (HTTP_*)."""
    if key == "QUERY_STRING":
        return [("url",)]
    if key == "wsgi.input":
        return [("raw",)]
    if key.startswith("HTTP_"):
        return [("bag", "meta", (), None)]
    return []


def meta_header(key):
    """Django's META['HTTP_X_API_KEY'] is the X-Api-Key header; other META keys are not headers."""
    if not key.startswith("HTTP_"):
        return None
    return "-".join(part.capitalize() for part in key[5:].split("_"))


READ_NODES = (ast.Subscript, ast.Call, ast.Compare)
ASSIGN_NODES = (ast.Assign, ast.AnnAssign, ast.NamedExpr)
FUNCTION_INDEX = {}
RETURNED = {}


def function_index(function):
    """One walk of a function, kept: each node's parent, its assignments in source order, the nodes that read."""
    found = FUNCTION_INDEX.get(id(function))
    if found is None:
        parents, assignments, reads, stack = {}, [], [], [function]
        while stack:
            node = stack.pop()
            for child in ast.iter_child_nodes(node):
                parents[child] = node
                stack.append(child)
            if isinstance(node, ASSIGN_NODES):
                assignments.append(node)
            elif isinstance(node, READ_NODES):
                reads.append(node)
        assignments.sort(key=lambda item: (item.lineno, item.col_offset))
        found = (parents, assignments, reads)
        FUNCTION_INDEX[id(function)] = found
    return found


class Reads:
    """What one function reads from the request, its request being global names or bound parameters."""

    def __init__(self, project, file, inputs, request_names, depth=0, visiting=None):
        self.project = project
        self.file = file
        self.inputs = inputs
        self.request_names = set(request_names)
        self.depth = depth
        self.visiting = visiting if visiting is not None else set()
        self.aliases = {}
        self.parents = {}
        self.raw_body = False
        # In a class-based view, 'self.request' is the request too.
        self.self_request = False

    def read(self, function, bound=None):
        self.read_branch(function, [function], bound)

    def read_branch(self, function, nodes, bound=None):
        """Names bound anywhere in 'function', reads inside 'nodes' (one branch of a dispatcher)."""
        if id(function) in self.visiting:
            return
        self.visiting.add(id(function))
        reads = self.bind(function, bound)
        if nodes != [function]:
            reads = [node for top in nodes for node in ast.walk(top) if isinstance(node, READ_NODES)]
        for node in reads:
            if isinstance(node, ast.Subscript):
                self.read_subscript(node)
            elif isinstance(node, ast.Call):
                self.read_call(node)
            elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In):
                key = node.left.value if isinstance(node.left, ast.Constant) and isinstance(node.left.value, str) else None
                if key is not None:
                    for origin in self.classify(node.comparators[0]):
                        self.record(origin, key, None, False)
        check_fields(self, nodes)
        self.visiting.discard(id(function))

    def bind(self, function, bound=None):
        """The names 'function' binds to what the request gave, in source order; answers its reading nodes."""
        for name, origins in (bound or {}).items():
            self.aliases[name] = list(origins)
        self.parents, assignments, reads = function_index(function)
        for node in assignments:
            origins = self.classify(node.value) if node.value is not None else []
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and origins:
                    self.aliases[target.id] = self.aliases.get(target.id, []) + origins
                # a, b = body.get("a"), body.get("b"): each name takes its own value's origins.
                if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) and len(target.elts) == len(node.value.elts):
                    for name, value in zip(target.elts, node.value.elts):
                        found = self.classify(value)
                        if isinstance(name, ast.Name) and found:
                            self.aliases[name.id] = self.aliases.get(name.id, []) + found
        return reads

    def is_request(self, node):
        return any(origin[0] == "request" for origin in self.classify(node))

    def classify(self, node):
        if isinstance(node, ast.Name):
            if node.id in self.request_names:
                return [("request",)]
            return self.aliases.get(node.id, [])
        if isinstance(node, ast.Attribute):
            if node.attr == "request" and self.self_request and isinstance(node.value, ast.Name) and node.value.id == "self":
                return [("request",)]
            results = []
            for origin in self.classify(node.value):
                if origin[0] == "request":
                    bags = DJANGO_BAGS if node.attr in DJANGO_BAGS and node.attr not in FLASK_BAGS else FLASK_BAGS
                    if node.attr in bags:
                        bag, encoding = bags[node.attr]
                        results.append(("bag", bag, (), encoding))
                    elif node.attr in ("body", "data", "stream"):
                        results.append(("raw",))
                    elif node.attr in ("request",):
                        results.append(origin)
                    elif node.attr in ("path", "url", "full_path", "query_string"):
                        results.append(("url",))
                if origin[0] == "parsed" and node.attr == "query":
                    results.append(("url",))
            return results
        if isinstance(node, ast.Subscript):
            key = node.slice.value if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str) else None
            if key is None:
                if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
                    return [origin for origin in self.classify(node.value) if origin[0] == "list"]
                return []
            results = []
            for origin in self.classify(node.value):
                if origin[0] == "bag":
                    results.append(self.child(origin, key))
                elif origin[0] == "request":
                    results.extend(environ_key(key))
            return results
        if isinstance(node, ast.Call):
            return self.call_origins(node)
        if isinstance(node, ast.BoolOp):
            return [origin for value in node.values for origin in self.classify(value)]
        if isinstance(node, ast.IfExp):
            return self.classify(node.body) + self.classify(node.orelse)
        if isinstance(node, ast.Await):
            return self.classify(node.value)
        if isinstance(node, ast.Dict):
            # {**row, **request.get_json()}, the partial update's merge: the whole bag spread in it.
            return [origin for key, value in zip(node.keys, node.values) if key is None
                    for origin in self.classify(value) if origin[0] == "bag" and not origin[2]]
        return []

    def child(self, origin, key):
        return ("bag", origin[1], origin[2] + (key,), origin[3])

    def call_origins(self, node):
        func = node.func
        name = call_name(node)
        first = node.args[0] if node.args else None
        if isinstance(func, ast.Attribute):
            objects = self.classify(func.value)
            results = []
            for origin in objects:
                if origin[0] == "request" and func.attr in ("get_json", "json"):
                    results.append(("bag", "body", (), "json"))
                if origin[0] == "request" and func.attr in ("get_data", "read", "body"):
                    results.append(("raw",))
                if origin[0] == "request" and func.attr in ("post", "form"):
                    results.append(("bag", "body", (), "form"))
                if origin[0] == "bag" and func.attr == "get" and first is not None:
                    key = self.file.string(first)
                    if key is not None:
                        results.append(self.child(origin, key))
                if origin[0] == "request" and func.attr == "get" and first is not None:
                    results.extend(environ_key(self.file.string(first) or ""))
                if origin[0] == "bag" and func.attr in ("to_dict", "copy", "dict"):
                    results.append(origin)
                if origin[0] == "bag" and func.attr == "getlist":
                    results.append(("list",))
            if results:
                return results
        if name in ("int", "float", "str", "bool") and first is not None:
            return []
        carried = self.classify(first) if first is not None else []
        from_body = any(origin[0] == "raw" or (origin[0] == "bag" and origin[1] == "body" and not origin[2]) for origin in carried)
        if name == "loads" and first is not None and (from_body or self.reads_raw(first)):
            self.inputs.encoding("json")
            return [("bag", "body", (), "json")]
        if name in ("urlparse", "urlsplit") and first is not None and any(origin[0] == "url" for origin in self.classify(first)):
            return [("parsed",)]
        if name == "parse_qs" and first is not None:
            firsts = self.classify(first)
            if any(origin[0] == "url" for origin in firsts):
                return [("bag", "query", (), "qs")]
            if any(origin[0] == "raw" for origin in firsts) or self.reads_raw(first):
                return [("bag", "body", (), "form-qs")]
        if name == "parse_args" and isinstance(func, ast.Attribute):
            self.reqparse(dotted(func.value))
        return self.returned(node)

    def reads_raw(self, node):
        """rfile.read(...) in http.server handlers, request.body / request.data / request.get_data()."""
        for child in ast.walk(node):
            if isinstance(child, ast.Attribute) and child.attr in ("rfile",):
                return True
            if isinstance(child, ast.Name) and any(origin[0] == "raw" for origin in self.aliases.get(child.id, [])):
                return True
        return False

    def context_schema(self, node):
        parent = self.parents.get(node)
        # int(qs["limit"][0]): parse_qs answers lists, the conversion applies to their first item.
        if isinstance(parent, ast.Subscript) and parent.value is node and isinstance(parent.slice, ast.Constant) and isinstance(parent.slice.value, int):
            node, parent = parent, self.parents.get(parent)
        if isinstance(parent, ast.Call) and parent.args and parent.args[0] is node:
            converted = conversion_schema(parent)
            if converted is not None:
                return guess(converted)
        return None

    def read_subscript(self, node):
        key = node.slice.value if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str) else None
        if key is None:
            return
        for origin in self.classify(node.value):
            if origin[0] == "request" and key.startswith("HTTP_"):
                origin = ("bag", "meta", (), None)
            if origin[0] == "bag":
                self.record(origin, key, self.context_schema(node), not isinstance(self.parents.get(node), ast.Subscript))

    def read_call(self, node):
        func = node.func
        first = node.args[0] if node.args else None
        if isinstance(func, ast.Attribute) and first is not None and func.attr in ("get", "getlist", "get_all", "pop"):
            key = self.file.string(first)
            if key is not None:
                for origin in self.classify(func.value):
                    if origin[0] == "request" and key.startswith("HTTP_"):
                        origin = ("bag", "meta", (), None)
                    if origin[0] != "bag":
                        continue
                    schema = None
                    type_node = self.file.keyword(node, "type")
                    if type_node is not None and dotted(type_node) in PY_TYPES:
                        schema = guess(PY_TYPES[dotted(type_node)])
                    elif len(node.args) > 1:
                        schema = literal_schema(node.args[1])
                    if func.attr in ("getlist", "get_all"):
                        schema = guess({"type": "array", "items": {"type": "string"}})
                    self.record(origin, key, schema or self.context_schema(node), False)
        # asked = request.args.get("page"); int(asked): the conversion types the field the name holds.
        converted = conversion_schema(node)
        # date.fromisoformat(value.strip()): a text method keeps the value what it was.
        while isinstance(first, ast.Call) and isinstance(first.func, ast.Attribute) and first.func.attr in ("strip", "lower", "upper", "rstrip", "lstrip"):
            first = first.func.value
        if converted is not None and isinstance(first, ast.Name):
            for origin in self.aliases.get(first.id, []):
                if origin[0] == "bag" and origin[2]:
                    self.record(("bag", origin[1], origin[2][:-1], origin[3]), origin[2][-1], guess(converted), False)
        if isinstance(func, ast.Attribute) and func.attr in ("get_json", "json"):
            if any(origin[0] == "request" for origin in self.classify(func.value)):
                self.inputs.read_body()
                self.inputs.encoding("json")
        found = self.helper(node)
        if found is not None:
            owner, target, bound = found
            # A helper reads the request itself when the request is a global (Flask) or handed over.
            if bound or self.global_request():
                Reads(self.project, owner, self.inputs, self.helper_names(bound), self.depth + 1, self.visiting).read(target, bound)

    def helper(self, node):
        """A function of the project the call runs ('check(body)', 'service.create(user, body)'): its file,
        its definition, and the parameters bound to what the request gave (positional and by keyword)."""
        if self.depth >= 3 or not isinstance(node.func, (ast.Name, ast.Attribute)):
            return None
        found = self.project.resolve_node(self.file, node.func)
        if not found or not isinstance(found[1], (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        owner, target = found
        params = [arg.arg for arg in target.args.posonlyargs + target.args.args]
        bound = {}
        for index, argument in enumerate(node.args):
            origins = self.classify(argument)
            if origins and index < len(params):
                bound[params[index]] = origins
        for keyword in node.keywords:
            origins = self.classify(keyword.value) if keyword.arg else []
            if origins:
                bound[keyword.arg] = origins
        return owner, target, bound

    def returned(self, node):
        """What a helper hands back of the request ('data = await read_body(request)'), the helper read with
        the call's arguments bound."""
        found = self.helper(node)
        if found is None or id(found[1]) in self.visiting:
            return []
        owner, target, bound = found
        if not bound and not self.global_request():
            return []
        # Every classification of the call asks again: one reading per helper and arguments.
        key = (id(target), self.depth, tuple(sorted((name, tuple(origins)) for name, origins in bound.items())))
        if key not in RETURNED:
            inner = Reads(self.project, owner, Inputs(), self.helper_names(bound), self.depth + 1, self.visiting)
            inner.bind(target, bound)
            RETURNED[key] = [origin for child in ast.walk(target) if isinstance(child, ast.Return) and child.value is not None
                             for origin in inner.classify(child.value) if origin[0] in ("bag", "raw")]
        return RETURNED[key]

    def global_request(self):
        return any(self.file.imports.get(name, {}).get("name") == "request" for name in self.request_names)

    def helper_names(self, bound):
        names = {name for name in self.request_names if self.file.imports.get(name, {}).get("name") == "request"}
        return names | {name for name, origins in bound.items() if any(origin[0] == "request" for origin in origins)}

    def record(self, origin, key, schema, required, checked=False):
        bag, path, encoding = origin[1], origin[2] + (key,), origin[3]
        if encoding in ("qs", "form-qs"):
            # parse_qs answers lists: qs["x"][0] is the value.
            schema = None if schema and schema.get("type") == "array" else schema
            encoding = "form" if encoding == "form-qs" else None
        if bag == "path":
            return
        if bag == "meta":
            header = meta_header(key)
            if header:
                self.inputs.param("header", header, schema, False)
            return
        if bag == "values":
            self.inputs.value(path[0], schema if len(path) == 1 else None, required)
            return
        if bag == "body":
            self.inputs.encoding(encoding)
            if encoding == "multipart" and schema is None:
                schema = guess({"type": "string", "format": "binary"})
            # A JSON field read by subscript fails with a 500, not a refusal: required only when a check says so.
            self.inputs.field(list(path), schema, required and len(path) == 1 and (encoding != "json" or checked))
            return
        name = path[0]
        nested = None
        if len(path) > 1:
            nested = schema if schema is not None else guess()
            for segment in reversed(path[1:]):
                nested = guess({"type": "object", "properties": {segment: nested}})
        self.inputs.param(bag, name, nested if nested is not None else schema, required and bag == "query" and len(path) == 1)

    def reqparse(self, parser_name):
        """Flask-RESTful's RequestParser: parser.add_argument("name", type=int, required=True, location="args")."""
        if not parser_name:
            return
        for node in self.file.nodes:
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"):
                continue
            if dotted(node.func.value) != parser_name or not node.args:
                continue
            name = self.file.string(node.args[0])
            if not name:
                continue
            type_node = self.file.keyword(node, "type")
            schema = dict(PY_TYPES.get(dotted(type_node) or "", {"type": "string"}))
            choices = self.file.keyword(node, "choices")
            if isinstance(choices, (ast.List, ast.Tuple)):
                values = [item.value for item in choices.elts if isinstance(item, ast.Constant)]
                if values:
                    schema["enum"] = values
            if self.file.string(self.file.keyword(node, "action")) == "append":
                schema = {"type": "array", "items": schema}
            required_node = self.file.keyword(node, "required")
            required = isinstance(required_node, ast.Constant) and required_node.value is True
            location_node = self.file.keyword(node, "location")
            locations = self.file.methods_of(location_node, [])
            location = locations[0].lower() if locations else None
            if location == "args":
                self.inputs.param("query", name, schema, required)
            elif location in ("form", "files"):
                self.inputs.field([name], schema, required)
                self.inputs.encoding("multipart" if location == "files" else "form")
            elif location == "json":
                self.inputs.field([name], schema, required)
                self.inputs.encoding("json")
            elif location == "headers":
                self.inputs.param("header", name, schema, required)
            elif location == "cookies":
                self.inputs.param("cookie", name, schema, required)
            else:
                self.inputs.value(name, schema, required)
`;
