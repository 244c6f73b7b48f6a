// The part of the Python extractor that learns what a handler *checks* about a value it read, when no
// validator declares it: `isinstance(body.get("quantity"), int)` types the field, a refusal guarded by
// `if body.get("priority") not in ("low", "high"): return ..., 400` gives it an enum, and one guarded by
// `not 0 <= quantity <= 100` (or `quantity < 0`) its bounds. Hand-written checks
// are how small Flask and http.server apps validate; without them an undocumented field is a bare string
// and every request built from the map is refused before it reaches the code behind it.
// Spliced into PYTHON_ROUTE_SCRIPT after PYTHON_INPUTS_SCRIPT (Reads calls check_fields).

export const PYTHON_CHECKS_SCRIPT = String.raw`
CHECK_TYPES = {"int": ("integer", 4), "float": ("number", 3), "Decimal": ("number", 3),
               "str": ("string", 2), "bool": ("boolean", 1), "list": ("array", 5), "dict": ("object", 5)}


def checked_type_names(node):
    """The type names of isinstance's second argument: int, (int, float), numbers.Number…"""
    nodes = node.elts if isinstance(node, ast.Tuple) else [node]
    names = []
    for item in nodes:
        name = dotted(item)
        if name:
            names.append(name.split(".")[-1])
    return names


def refuses(statements):
    """A branch that ends the request: return (an error answer), raise or abort."""
    for statement in statements:
        if isinstance(statement, (ast.Return, ast.Raise)):
            return True
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) and call_name(statement.value) in ("abort", "bad_request"):
            return True
    return False


def literal_choices(file, node):
    """The strings of a literal tuple/list/set, or of a module constant bound to one."""
    if isinstance(node, ast.Name) and node.id in file.module_lists:
        node = file.module_lists[node.id]
    elif isinstance(node, ast.Name):
        for statement in file.tree.body:
            if isinstance(statement, ast.Assign) and any(isinstance(target, ast.Name) and target.id == node.id for target in statement.targets):
                node = statement.value
    if isinstance(node, ast.Call) and call_name(node) in ("set", "frozenset", "tuple", "list") and node.args:
        node = node.args[0]
    if not isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return None
    values = [item.value for item in node.elts if isinstance(item, ast.Constant) and isinstance(item.value, str)]
    return values if values and len(values) == len(node.elts) else None


def membership_test(test):
    """(value, choices) when 'test' refuses a value outside a set: x not in S, not (x in S)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        for value in test.values:
            found = membership_test(value)
            if found:
                return found
        return None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = test.operand
        if isinstance(inner, ast.Compare) and len(inner.ops) == 1 and isinstance(inner.ops[0], ast.In):
            return (inner.left, inner.comparators[0])
        return None
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.NotIn):
        return (test.left, test.comparators[0])
    return None


def number_constant(node):
    """The value of a numeric literal (a negative one too), else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = number_constant(node.operand)
        return -inner if inner is not None else None
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    return None


def refused_bounds(test):
    """(value, "minimum"|"maximum", bound) for each bound a refusing test keeps: x < 0, x > 100, 0 > x,
    not 0 <= x <= 100 (and either inside an or)."""
    tests = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
    found = []
    for item in tests:
        if isinstance(item, ast.UnaryOp) and isinstance(item.op, ast.Not) and isinstance(item.operand, ast.Compare):
            inner = item.operand
            # not low <= x <= high: the kept range itself.
            if len(inner.ops) == 2 and all(isinstance(op, (ast.LtE, ast.Lt)) for op in inner.ops):
                low, high = number_constant(inner.left), number_constant(inner.comparators[1])
                if low is not None:
                    found.append((inner.comparators[0], "minimum", low))
                if high is not None:
                    found.append((inner.comparators[0], "maximum", high))
            continue
        if not (isinstance(item, ast.Compare) and len(item.ops) == 1):
            continue
        op, left, right = item.ops[0], item.left, item.comparators[0]
        if number_constant(right) is not None and isinstance(op, ast.Lt):
            found.append((left, "minimum", number_constant(right)))
        elif number_constant(right) is not None and isinstance(op, ast.Gt):
            found.append((left, "maximum", number_constant(right)))
        elif number_constant(left) is not None and isinstance(op, ast.Gt):
            found.append((right, "minimum", number_constant(left)))
        elif number_constant(left) is not None and isinstance(op, ast.Lt):
            found.append((right, "maximum", number_constant(left)))
    return found


def refused_unless_typed(test):
    """The values a refusing test demands be of a type that excludes None: not isinstance(x, T) [or ...]."""
    tests = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
    values = []
    for item in tests:
        if not (isinstance(item, ast.UnaryOp) and isinstance(item.op, ast.Not)):
            continue
        call = item.operand
        if not (isinstance(call, ast.Call) and call_name(call) == "isinstance" and len(call.args) == 2):
            continue
        names = checked_type_names(call.args[1])
        if names and all(name in CHECK_TYPES for name in names):
            values.append(call.args[0])
    return values


def falls_back(expr):
    """A read that answers a value of its own when the field is absent: .get("k", "") or (x or 0)."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "get" and len(expr.args) >= 2:
        return not (isinstance(expr.args[1], ast.Constant) and expr.args[1].value is None)
    if isinstance(expr, ast.BoolOp) and isinstance(expr.op, ast.Or):
        last = expr.values[-1]
        return not (isinstance(last, ast.Constant) and last.value is None)
    return False


def defaulted(nodes, value):
    """Whether a checked value falls back to a default when the field is absent, itself or where the name
    it is read through was assigned: an absent field then passes the check, so it is not required."""
    if falls_back(value):
        return True
    if not isinstance(value, ast.Name):
        return False
    for node in (node for top in nodes for node in ast.walk(top)):
        if isinstance(node, ast.Assign) and falls_back(node.value):
            if any(isinstance(target, ast.Name) and target.id == value.id for target in node.targets):
                return True
    return False


def check_fields(reads, nodes):
    """Types from isinstance checks and enums from refusing membership tests, recorded on the fields read.
    A field the handler refuses unless it has a type (None has none of them) is required."""
    best, enums, required, bounds = {}, [], set(), {}
    for node in (node for top in nodes for node in ast.walk(top)):
        if isinstance(node, ast.If) and refuses(node.body):
            # A refused number outside a range: the range is the field's declared domain.
            for value, side, bound in refused_bounds(node.test):
                for origin in reads.classify(value):
                    if origin[0] == "bag" and origin[2]:
                        bounds.setdefault((origin[1], origin[2], origin[3]), {})[side] = bound
            for value in refused_unless_typed(node.test):
                if defaulted(nodes, value):
                    continue
                for origin in reads.classify(value):
                    if origin[0] == "bag" and origin[2]:
                        required.add((origin[1], origin[2], origin[3]))
        if isinstance(node, ast.Call) and call_name(node) == "isinstance" and len(node.args) == 2:
            names = [name for name in checked_type_names(node.args[1]) if name in CHECK_TYPES]
            if not names:
                continue
            # One check naming several types accepts any of them: (int, float) is a number.
            name = "float" if "int" in names and ("float" in names or "Decimal" in names) else max(names, key=lambda item: CHECK_TYPES[item][1])
            for origin in reads.classify(node.args[0]):
                if origin[0] != "bag" or not origin[2]:
                    continue
                key = (origin[1], origin[2], origin[3])
                # Across checks the most specific wins: isinstance(x, int) and not isinstance(x, bool) is an int.
                if key not in best or CHECK_TYPES[name][1] > CHECK_TYPES[best[key][0]][1]:
                    best[key] = (name, origin)
        if isinstance(node, ast.If) and refuses(node.body):
            found = membership_test(node.test)
            if not found:
                continue
            choices = literal_choices(reads.file, found[1])
            if not choices:
                continue
            for origin in reads.classify(found[0]):
                if origin[0] == "bag" and origin[2]:
                    enums.append((origin, choices))
                    # An absent value (None) is outside the set too: the refusal makes the field required,
                    # unless the handler reads it with a default of its own.
                    if not defaulted(nodes, found[0]):
                        required.add((origin[1], origin[2], origin[3]))
    # Types first: a later enum of strings refines a string type, never the other way round.
    for key, (name, origin) in best.items():
        schema = {"type": CHECK_TYPES[name][0]}
        if schema["type"] in ("integer", "number"):
            schema.update(bounds.get(key, {}))
        record_checked(reads, origin, guess(schema), key in required)
    for origin, choices in enums:
        key = (origin[1], origin[2], origin[3])
        record_checked(reads, origin, guess({"type": "string", "enum": choices}), key in required)


def record_checked(reads, origin, schema, required):
    parent = ("bag", origin[1], origin[2][:-1], origin[3])
    reads.record(parent, origin[2][-1], schema, required, checked=True)
`;
