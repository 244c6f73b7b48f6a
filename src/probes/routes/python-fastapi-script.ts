// The part of the Python extractor that reads signature-declared inputs: FastAPI (and look-alikes)
// parameters — typed path, query, header, cookie, form, file and body parameters, `Query()`/`Header()`/
// `Body()`/`Depends()` markers, `Annotated[...]` — and pydantic models as JSON Schema (types, Optional,
// defaults, `Field(...)` bounds and patterns, enums and Literals, nested models). Spliced into
// PYTHON_ROUTE_SCRIPT; uses dotted, call_name, base_name, Project and Inputs.

export const PYTHON_FASTAPI_SCRIPT = String.raw`
MARKERS = {"Query": "query", "Header": "header", "Cookie": "cookie", "Body": "body", "Form": "form",
           "File": "file", "UploadFile": "file", "Path": "path", "Depends": "depends", "Security": "depends"}
SKIPPED_TYPES = {"Request", "Response", "BackgroundTasks", "WebSocket", "HTTPConnection", "SecurityScopes",
                 "Session", "AsyncSession", "Connection", "HTTPAuthorizationCredentials", "OAuth2PasswordRequestForm"}
SCALARS = {"int": {"type": "integer"}, "float": {"type": "number"}, "Decimal": {"type": "number"},
           "str": {"type": "string"}, "bool": {"type": "boolean"}, "bytes": {"type": "string", "format": "binary"},
           "UUID": {"type": "string", "format": "uuid"}, "datetime": {"type": "string", "format": "date-time"},
           "date": {"type": "string", "format": "date"}, "time": {"type": "string", "format": "time"},
           "EmailStr": {"type": "string", "format": "email"}, "HttpUrl": {"type": "string", "format": "uri"},
           "AnyUrl": {"type": "string", "format": "uri"}, "SecretStr": {"type": "string"},
           "dict": {"type": "object"}, "Dict": {"type": "object"}, "Any": {}, "Json": {},
           "UploadFile": {"type": "string", "format": "binary"}, "PositiveInt": {"type": "integer", "exclusiveMinimum": 0},
           "NonNegativeInt": {"type": "integer", "minimum": 0}, "conint": {"type": "integer"},
           "confloat": {"type": "number"}, "constr": {"type": "string"}, "conlist": {"type": "array"}}
ARRAYS = {"list", "List", "set", "Set", "Sequence", "tuple", "Tuple", "frozenset", "FrozenSet", "Iterable"}
MODEL_BASES = {"BaseModel", "SQLModel", "Schema", "BaseSchema"}
CONSTRAINTS = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum",
               "min_length": "minLength", "max_length": "maxLength", "regex": "pattern", "pattern": "pattern",
               "min_items": "minItems", "max_items": "maxItems", "description": "description"}


def constant(node):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        return -node.operand.value
    return None


class Signatures:
    """Schemas of annotations and models, resolved across the project."""

    def __init__(self, project):
        self.project = project

    def is_model(self, file, cls):
        _, names = self.project.class_chain(file, cls)
        return bool(names & MODEL_BASES)

    def is_enum(self, file, cls):
        _, names = self.project.class_chain(file, cls)
        return bool(names & {"Enum", "IntEnum", "StrEnum"})

    def annotation(self, file, node, depth=0):
        """(schema, optional) for a type annotation; optional when it admits None."""
        if node is None or depth > 6:
            return {}, False
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                return {}, False
        if isinstance(node, ast.Constant) and node.value is None:
            return {}, True
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            left, left_optional = self.annotation(file, node.left, depth + 1)
            right, right_optional = self.annotation(file, node.right, depth + 1)
            if left_optional and not left:
                return right, True
            return left if left else right, left_optional or right_optional
        if isinstance(node, ast.Subscript):
            outer = base_name(node.value)
            inner = node.slice
            elements = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            if outer == "Optional":
                return self.annotation(file, elements[0], depth + 1)[0], True
            if outer == "Union":
                schemas = [self.annotation(file, element, depth + 1) for element in elements]
                real = [schema for schema, optional in schemas if schema or not optional]
                admits_none = any(optional for _, optional in schemas)
                return (real[0] if len(real) == 1 else {}), admits_none
            if outer == "Annotated":
                schema, optional = self.annotation(file, elements[0], depth + 1)
                for extra in elements[1:]:
                    if isinstance(extra, ast.Call) and call_name(extra) in ("Field", "Query", "Body", "Path", "Header", "Cookie", "Form"):
                        schema = self.constrained(schema, extra)
                return schema, optional
            if outer == "Literal":
                values = [constant(element) for element in elements]
                values = [value for value in values if value is not None]
                kind = "integer" if values and all(isinstance(value, int) for value in values) else "string"
                return {"type": kind, "enum": values}, False
            if outer in ARRAYS:
                items = self.annotation(file, elements[0], depth + 1)[0]
                return ({"type": "array", "items": items} if items else {"type": "array"}), False
            if outer in ("Dict", "dict", "Mapping"):
                return {"type": "object"}, False
            return self.annotation(file, node.value, depth + 1)
        if isinstance(node, ast.Call):
            schema = dict(SCALARS.get(call_name(node) or "", {}))
            return self.constrained(schema, node), False
        name = dotted(node)
        if name is None:
            return {}, False
        simple = name.split(".")[-1]
        if simple in SCALARS:
            return dict(SCALARS[simple]), False
        if simple in ARRAYS:
            return {"type": "array"}, False
        found = self.project.resolve(file, name)
        if found and isinstance(found[1], ast.ClassDef):
            owner, cls = found
            if self.is_enum(owner, cls):
                return self.enum_schema(cls), False
            if self.is_model(owner, cls):
                return self.model(owner, cls, depth + 1), False
        if found and found[1] is not None and not isinstance(found[1], ast.ClassDef) and depth < 6:
            # A type alias: 'Username = constr(max_length=20)'.
            return self.annotation(found[0], found[1], depth + 1)
        return {}, False

    def enum_schema(self, cls):
        values = []
        for item in cls.body:
            if isinstance(item, ast.Assign) and isinstance(item.value, ast.Constant):
                values.append(item.value.value)
        kind = "integer" if values and all(isinstance(value, int) for value in values) else "string"
        return {"type": kind, "enum": values}

    def constrained(self, schema, call):
        schema = dict(schema)
        for keyword in call.keywords:
            target = CONSTRAINTS.get(keyword.arg)
            value = constant(keyword.value)
            if target and value is not None:
                schema[target] = value
        return schema

    def model(self, file, cls, depth=0):
        """A pydantic model (and its bases in the tree) as an object schema."""
        chain, _ = self.project.class_chain(file, cls)
        properties, required = {}, []
        for owner, node in reversed(chain):
            for item in node.body:
                if not isinstance(item, ast.AnnAssign) or not isinstance(item.target, ast.Name):
                    continue
                name = item.target.id
                if name.startswith("_") or base_name(item.annotation) == "ClassVar" or name == "model_config":
                    continue
                schema, optional = self.annotation(owner, item.annotation, depth) if depth < 5 else ({}, False)
                has_default = item.value is not None
                value = item.value
                if isinstance(value, ast.Call) and call_name(value) == "Field":
                    schema = self.constrained(schema, value)
                    first = value.args[0] if value.args else self.keyword(value, "default")
                    factory = self.keyword(value, "default_factory")
                    has_default = factory is not None or (first is not None and not (isinstance(first, ast.Constant) and first.value is Ellipsis))
                    alias = self.keyword(value, "alias")
                    if isinstance(alias, ast.Constant) and isinstance(alias.value, str):
                        name = alias.value
                elif has_default and isinstance(value, ast.Constant) and value.value is not None and "default" not in schema:
                    schema = dict(schema)
                    schema["default"] = value.value
                properties[name] = schema
                if has_default and name in required:
                    required.remove(name)
                elif not has_default and name not in required:
                    required.append(name)
        result = {"type": "object", "properties": properties}
        if required:
            result["required"] = required
        return result

    def keyword(self, call, name):
        for keyword in call.keywords:
            if keyword.arg == name:
                return keyword.value
        return None

    def function(self, file, function, path_names, inputs, depth=0):
        """Inputs a FastAPI-style signature declares."""
        args = function.args
        positional = args.posonlyargs + args.args
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        pairs = list(zip(positional, defaults)) + list(zip(args.kwonlyargs, args.kw_defaults))
        bodies = []
        for arg, default in pairs:
            if arg.arg in ("self", "cls"):
                continue
            annotation, marker = arg.annotation, None
            if isinstance(annotation, ast.Subscript) and base_name(annotation.value) == "Annotated":
                parts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
                annotation = parts[0]
                marker = next((part for part in parts[1:] if isinstance(part, ast.Call) and call_name(part) in MARKERS), None)
            in_default = isinstance(default, ast.Call) and call_name(default) in MARKERS
            if in_default:
                marker = default
            kind = MARKERS.get(call_name(marker)) if marker is not None else None
            if kind == "depends":
                target = marker.args[0] if marker.args else annotation
                found = self.project.resolve_node(file, target) if target is not None else None
                if found and isinstance(found[1], (ast.FunctionDef, ast.AsyncFunctionDef)) and depth < 3:
                    self.function(found[0], found[1], path_names, inputs, depth + 1)
                continue
            simple = base_name(annotation) if annotation is not None else None
            if simple in SKIPPED_TYPES or arg.arg in path_names or kind == "path":
                continue
            schema = self.annotation(file, annotation)[0]
            if marker is not None:
                schema = self.constrained(schema, marker)
                first = marker.args[0] if marker.args else self.keyword(marker, "default")
                # Query(...) as the default says it by its first argument; Annotated[..., Query()] by the default.
                if in_default:
                    required = first is None or (isinstance(first, ast.Constant) and first.value is Ellipsis)
                else:
                    required = default is None
                if kind == "file" and marker.args == [] and self.keyword(marker, "default") is None:
                    required = True
                alias = self.keyword(marker, "alias")
                name = alias.value if isinstance(alias, ast.Constant) else arg.arg
            else:
                required = default is None
                name = arg.arg
            if kind is None and simple == "UploadFile":
                kind = "file"
            if kind is None:
                is_body = schema.get("type") == "object" or (schema.get("type") == "array" and (schema.get("items") or {}).get("type") == "object")
                kind = "body" if is_body else "query"
            if kind == "header":
                convert = self.keyword(marker, "convert_underscores") if marker is not None else None
                if not (isinstance(convert, ast.Constant) and convert.value is False) and name == arg.arg:
                    name = name.replace("_", "-")
                inputs.param("header", name, schema or {"type": "string"}, required)
            elif kind in ("query", "cookie"):
                inputs.param(kind, name, schema or {"type": "string"}, required)
            elif kind == "form":
                inputs.field([name], schema or {"type": "string"}, required)
                inputs.encoding("form")
            elif kind == "file":
                inputs.field([name], {"type": "string", "format": "binary"}, required)
                inputs.encoding("multipart")
            elif kind == "body":
                embed = marker is not None and isinstance(self.keyword(marker, "embed"), ast.Constant) and self.keyword(marker, "embed").value is True
                bodies.append((name, schema, required, embed or marker is not None and schema.get("type") != "object"))
        if len(bodies) == 1 and not bodies[0][3]:
            inputs.body_schema(bodies[0][1])
            inputs.encoding("json")
        elif bodies:
            for name, schema, required, _ in bodies:
                inputs.field([name], schema, required)
            inputs.encoding("json")
`;
