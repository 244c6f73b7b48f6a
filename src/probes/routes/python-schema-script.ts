// The part of the Python extractor that accumulates one route's inputs: parameters and body fields, merged
// from reads (guesses: a name, maybe a type from int()) and declarations (models, forms, serializers: they
// win), and written out in the map's shape. The Python twin of route-inputs.ts. Spliced into
// PYTHON_ROUTE_SCRIPT.

export const PYTHON_SCHEMA_SCRIPT = String.raw`
GUESS = "$guess"
CONTENT = {"json": "application/json", "form": "application/x-www-form-urlencoded",
           "multipart": "multipart/form-data"}
BODYLESS = {"GET", "HEAD", "OPTIONS"}
# Headers an HTTP client sets itself to frame the message: not inputs a caller chooses.
FRAMING_HEADERS = {"content-length", "host", "connection", "transfer-encoding"}


def guess(schema=None):
    result = dict(schema) if schema else {"type": "string"}
    result[GUESS] = True
    return result


def is_object(schema):
    return schema.get("type") == "object" or ("type" not in schema and "properties" in schema)


def merge_schema(left, right):
    if left is None or right is None:
        return left if right is None else right
    left_guess, right_guess = left.get(GUESS, False), right.get(GUESS, False)
    if is_object(left) and is_object(right):
        base = right if left_guess and not right_guess else left
        properties = dict(left.get("properties", {}))
        for name, schema in right.get("properties", {}).items():
            properties[name] = merge_schema(properties.get(name), schema)
        merged = dict(base)
        merged["type"] = "object"
        merged["properties"] = properties
        required = list(dict.fromkeys(list(left.get("required", [])) + list(right.get("required", []))))
        if required:
            merged["required"] = required
        else:
            merged.pop("required", None)
        if not (left_guess and right_guess):
            merged.pop(GUESS, None)
        return merged
    if left_guess and not right_guess:
        return right
    if right_guess and not left_guess:
        return left
    # Two guesses: a bare string (what an untyped read is taken for) gives way to anything more precise.
    if left_guess and right_guess and "type" in right and left.get("type") == "string" and set(left) <= {"type", GUESS}:
        return right
    return left


def strip(value):
    if isinstance(value, dict):
        return {key: strip(item) for key, item in value.items() if key != GUESS}
    if isinstance(value, list):
        return [strip(item) for item in value]
    return value


class Inputs:
    """Parameters and body fields of one route, merged from reads and declarations."""

    def __init__(self):
        self.params = {}
        self.values = {}
        self.body = None
        self.encodings = set()

    def param(self, location, name, schema=None, required=False):
        if not name or (location == "header" and name.lower() in FRAMING_HEADERS):
            return
        key = (location, name.lower() if location == "header" else name)
        incoming = schema if schema is not None else guess()
        found = self.params.get(key)
        if found is None:
            self.params[key] = {"name": name, "in": location, "required": bool(required), "schema": incoming}
        else:
            found["schema"] = merge_schema(found["schema"], incoming)
            found["required"] = found["required"] or bool(required)

    def value(self, name, schema=None, required=False):
        """Flask's request.values and reqparse's default: the query for GET, the body otherwise."""
        found = self.values.get(name)
        incoming = schema if schema is not None else guess()
        self.values[name] = (merge_schema(found[0], incoming) if found else incoming, bool(required) or (found[1] if found else False))

    def field(self, path, schema=None, required=False):
        path = [segment for segment in path if segment is not None]
        if not path or not all(isinstance(segment, str) and segment for segment in path):
            return
        leaf = schema if schema is not None else guess()
        for index in range(len(path) - 1, 0, -1):
            wrapper = guess({"type": "object", "properties": {path[index]: leaf}})
            if index == len(path) - 1 and required:
                wrapper["required"] = [path[index]]
            leaf = wrapper
        top = guess({"type": "object", "properties": {path[0]: leaf}})
        if required and len(path) == 1:
            top["required"] = [path[0]]
        self.body = merge_schema(self.body, top)

    def body_schema(self, schema):
        if schema:
            self.body = merge_schema(self.body, schema)

    def params_from(self, location, schema):
        required = set(schema.get("required", []))
        for name, property_schema in schema.get("properties", {}).items():
            self.param(location, name, property_schema, name in required)

    def read_body(self):
        if self.body is None:
            self.body = guess({"type": "object", "properties": {}})

    def encoding(self, encoding):
        if encoding:
            self.encodings.add(encoding)

    def merge(self, other):
        for entry in other.params.values():
            self.param(entry["in"], entry["name"], entry["schema"], entry["required"])
        for name, (schema, required) in other.values.items():
            self.value(name, schema, required)
        if other.body is not None:
            self.body = merge_schema(self.body, other.body)
        self.encodings |= other.encodings

    def output(self, method):
        params = [dict(entry) for entry in self.params.values()]
        body = self.body
        encodings = set(self.encodings)
        for name, (schema, required) in self.values.items():
            if method in BODYLESS or method == "DELETE":
                params.append({"name": name, "in": "query", "required": required, "schema": schema})
            else:
                top = guess({"type": "object", "properties": {name: schema}})
                if required:
                    top["required"] = [name]
                body = merge_schema(body, top)
                if not encodings:
                    encodings.add("form")
        result = {}
        if params:
            result["parameters"] = strip(params)
        if body is not None and method not in BODYLESS:
            encoding = "multipart" if "multipart" in encodings else (next(iter(encodings)) if len(encodings) == 1 else None)
            result["request_body"] = {"schema": strip(body)}
            if encoding:
                result["request_body"]["content_type"] = CONTENT[encoding]
        return result
`;
