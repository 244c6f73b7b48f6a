// The Python half of code access, run by python3 once per scan: reads {"root", "files"} on stdin, parses
// each file with `ast` (never imports or runs it) and prints one JSON object with the same records the
// JS/TS scanner produces. Kept as a string so the package ships no .py file to locate at run time.

export const PYTHON_ACCESS_SCRIPT = String.raw`
import ast, json, os, re, sys

SQL_START = re.compile(r"^\s*\(?\s*(select|insert|update|delete|with|replace)\b", re.I)
FETCH_SINGLE = {"fetchone", "fetchrow", "fetchval", "fetch_one", "fetch_val", "first", "one", "one_or_none",
                "scalar", "scalar_one", "scalar_one_or_none", "mappings_one"}
FETCH_MANY = {"fetchall", "fetchmany", "fetch", "fetch_all", "all", "scalars", "mappings"}
# Helpers that take the SQL and answer one row or all of them (asyncpg, databases, records, and the
# wrappers a project writes the way better-sqlite3 names them: db.get(sql, args), db.all(sql, args)).
CALLEE_SINGLE = {"fetchrow", "fetchval", "fetch_one", "fetch_val", "get", "one", "first", "get_one",
                 "query_one", "select_one", "fetch_first"}
CALLEE_MANY = {"fetch", "fetch_all", "all", "query_all", "select_all", "many"}
ORM_TERMINAL = {"one", "first", "one_or_none", "scalar", "scalar_one", "scalar_one_or_none", "get"}
FOREIGN_KEYS = re.compile(r"foreign_keys\s*=\s*(on|1|true)\b", re.I)

def looks_like_sql(text):
    if not SQL_START.match(text):
        return False
    verb = text.strip().lstrip("(").split()[0].lower()
    if verb == "select":
        return re.search(r"\bfrom\b", text, re.I) is not None or re.match(r"^\s*select\s+[\w(]", text, re.I) is not None
    if verb in ("insert", "replace"):
        return re.search(r"\binto\b", text, re.I) is not None
    if verb == "update":
        return re.search(r"\bset\b", text, re.I) is not None
    if verb == "delete":
        return re.search(r"\bfrom\b", text, re.I) is not None
    return True

def attach_parents(tree):
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            child._parent = node

def parent(node):
    return getattr(node, "_parent", None)

def string_value(node, constants, depth=0):
    if depth > 8 or node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                parts.append(value.value)
            else:
                inner = string_value(getattr(value, "value", None), constants, depth + 1)
                parts.append(inner if inner and inner.strip() else "?")
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left = string_value(node.left, constants, depth + 1)
        right = string_value(node.right, constants, depth + 1)
        if left is None and right is None:
            return None
        return (left if left is not None else "?") + (right if right is not None else "?")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return string_value(node.left, constants, depth + 1)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return string_value(node.func.value, constants, depth + 1)
    if isinstance(node, ast.Call) and call_name(node) == "text" and node.args:
        return string_value(node.args[0], constants, depth + 1)
    return None

def call_name(call):
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None

def receiver_name(call):
    func = call.func
    if isinstance(func, ast.Attribute):
        value = func.value
        if isinstance(value, ast.Name):
            return value.id
        if isinstance(value, ast.Attribute):
            return value.attr
    return None

def scope_of(node):
    current = parent(node)
    while current is not None:
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return "%s@%d" % (current.name, current.lineno)
        current = parent(current)
    return "module@0"

def enclosing_body(node):
    current = parent(node)
    while current is not None:
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            return current
        current = parent(current)
    return None

def collect_constants(tree):
    constants = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = string_value(node.value, constants)
            if value is not None and looks_like_sql(value):
                constants[node.targets[0].id] = value
    return constants

def position(node):
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))

def effective_call(call):
    # text("...") inside session.execute(...): the statement is consumed through the outer call.
    outer = parent(call)
    if call_name(call) == "text" and isinstance(outer, ast.Call):
        return outer
    return call

def consumer(call):
    # cursor.execute(sql).fetchone(), await conn.fetchrow(sql)
    node = call
    up = parent(node)
    while isinstance(up, ast.Await):
        node, up = up, parent(up)
    if isinstance(up, ast.Attribute) and isinstance(parent(up), ast.Call) and parent(up).func is up:
        if up.attr in FETCH_SINGLE:
            return ("single", "." + up.attr + "()")
        if up.attr in FETCH_MANY:
            return ("many", "." + up.attr + "()")
    return None

def later_fetch(call, scope_node):
    # cur.execute(sql) ... row = cur.fetchone(): the next fetch on the same cursor or result.
    names = set()
    receiver = receiver_name(call)
    if receiver:
        names.add(receiver)
    holder = parent(call)
    while isinstance(holder, ast.Await):
        holder = parent(holder)
    if isinstance(holder, ast.Assign) and len(holder.targets) == 1 and isinstance(holder.targets[0], ast.Name):
        names.add(holder.targets[0].id)
    if not names or scope_node is None:
        return None
    start = position(call)
    calls = sorted(
        (node for node in ast.walk(scope_node) if isinstance(node, ast.Call) and position(node) > start),
        key=position,
    )
    for node in calls:
        if not isinstance(node.func, ast.Attribute):
            continue
        owner = node.func.value
        owner_name = owner.id if isinstance(owner, ast.Name) else (owner.attr if isinstance(owner, ast.Attribute) else None)
        if owner_name not in names:
            continue
        if node.func.attr in ("execute", "executemany"):
            return None
        if node.func.attr in FETCH_SINGLE:
            return ("single", "." + node.func.attr + "()")
        if node.func.attr in FETCH_MANY:
            return ("many", "." + node.func.attr + "()")
    return None

def keyword_columns(call):
    columns = []
    for keyword in call.keywords:
        if keyword.arg is None:
            continue
        name = keyword.arg.split("__")[0]
        if keyword.arg.endswith("__in") or "__" in keyword.arg and not keyword.arg.endswith(("__exact", "__iexact")):
            continue
        columns.append(name)
    return columns

def compare_columns(node):
    columns = []
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq):
        left = node.left
        if isinstance(left, ast.Attribute):
            columns.append(left.attr)
    if isinstance(node, ast.Call) and call_name(node) in ("and_",):
        for argument in node.args:
            columns.extend(compare_columns(argument))
    return columns

def model_name(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None

def orm_lookup(call):
    name = call_name(call)
    func = call.func
    if not isinstance(func, ast.Attribute):
        if name == "get_object_or_404" and call.args:
            model = model_name(call.args[0])
            columns = [c for c in keyword_columns(call) if c not in ("pk", "id")]
            if model and columns:
                return (model, columns, "get_object_or_404()")
        return None
    if name == "get" and isinstance(func.value, ast.Attribute) and func.value.attr == "objects":
        model = model_name(func.value.value)
        columns = [c for c in keyword_columns(call) if c not in ("pk", "id")]
        if model and columns:
            return (model, columns, ".objects.get()")
        return None
    if name not in ORM_TERMINAL or name == "get":
        return None
    model, columns, steps = None, [], 0
    node = func.value
    while steps < 20:
        steps += 1
        if isinstance(node, ast.Attribute) and node.attr in ("query", "objects"):
            model = model or model_name(node.value)
            break
        if not isinstance(node, ast.Call):
            break
        step = call_name(node)
        if step == "filter_by" or (step == "filter" and node.keywords):
            columns.extend(keyword_columns(node))
        elif step in ("filter", "where"):
            for argument in node.args:
                columns.extend(compare_columns(argument))
        elif step in ("query", "select") and node.args:
            model = model or model_name(node.args[0])
            if isinstance(node.func, ast.Name) or step == "query":
                break
        elif step in ("execute", "scalars", "scalar") and node.args and isinstance(node.args[0], ast.Call):
            node = node.args[0]
            continue
        if not isinstance(node.func, ast.Attribute):
            break
        node = node.func.value
    if model and columns:
        return (model, columns, "." + name + "()")
    return None

def literal_strings(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and node.elts and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts
    ):
        return [e.value for e in node.elts]
    return None

def property_read(node):
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return key.value
    if isinstance(node, ast.Call) and call_name(node) == "get" and node.args:
        first = node.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
    return None

def model_declarations(tree, relative, tables, columns):
    parts = relative.replace(os.sep, "/").split("/")
    app = None
    if parts[-1] == "models.py" and len(parts) >= 2:
        app = parts[-2]
    elif len(parts) >= 3 and parts[-2] == "models":
        app = parts[-3]
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        declared = None
        is_django = any(isinstance(b, ast.Attribute) and b.attr == "Model" and isinstance(b.value, ast.Name) and b.value.id == "models" for b in node.bases)
        for item in node.body:
            if isinstance(item, ast.Assign) and len(item.targets) == 1 and isinstance(item.targets[0], ast.Name):
                target = item.targets[0].id
                if target == "__tablename__" and isinstance(item.value, ast.Constant):
                    declared = item.value.value
                elif isinstance(item.value, ast.Call):
                    column_of(node.name, target, item.value, columns, is_django)
            elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and isinstance(item.value, ast.Call):
                column_of(node.name, item.target.id, item.value, columns, is_django)
            elif isinstance(item, ast.ClassDef) and item.name == "Meta":
                for meta in item.body:
                    if isinstance(meta, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "db_table" for t in meta.targets):
                        if isinstance(meta.value, ast.Constant):
                            declared = meta.value.value
        if declared:
            tables[node.name] = declared
        elif is_django and app:
            tables[node.name] = "%s_%s" % (app, node.name.lower())

def column_of(model, attribute, call, columns, is_django):
    name = call_name(call)
    for keyword in call.keywords:
        if keyword.arg in ("db_column", "name") and isinstance(keyword.value, ast.Constant):
            columns["%s.%s" % (model, attribute)] = keyword.value.value
            return
    if name in ("Column", "mapped_column") and call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
        columns["%s.%s" % (model, attribute)] = call.args[0].value
        return
    if is_django and name in ("ForeignKey", "OneToOneField"):
        columns["%s.%s" % (model, attribute)] = attribute + "_id"

def scan(root, relative, out):
    try:
        with open(os.path.join(root, relative), encoding="utf-8", errors="replace") as handle:
            text = handle.read()
        tree = ast.parse(text, filename=relative)
    except (SyntaxError, ValueError, OSError) as error:
        out["problems"].append("%s: %s" % (relative, error))
        return
    if FOREIGN_KEYS.search(text):
        out["enablesForeignKeys"] = True
    attach_parents(tree)
    constants = collect_constants(tree)
    model_declarations(tree, relative, out["modelTables"], out["modelColumns"])
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            sql = None
            for argument in node.args[:2]:
                value = string_value(argument, constants)
                if value is not None and looks_like_sql(value):
                    sql = value
                    break
            if sql is not None and call_name(node) != "text":
                call = effective_call(node)
                name = call_name(node)
                decided = None
                # Flask's documented helper: query_db(sql, args, one=True).
                one = next((k.value for k in node.keywords if k.arg == "one"), None)
                if isinstance(one, ast.Constant) and one.value is True:
                    decided = ("single", name + "(one=True)")
                elif name in CALLEE_SINGLE:
                    decided = ("single", name + "()")
                elif name in CALLEE_MANY:
                    decided = ("many", name + "()")
                decided = decided or consumer(call) or later_fetch(call, enclosing_body(call))
                out["accesses"].append({
                    "file": relative, "line": node.lineno, "language": "python", "scope": scope_of(node),
                    "kind": "sql", "sql": sql,
                    "cardinality": decided[0] if decided else "unknown",
                    "via": decided[1] if decided else "unknown",
                })
            lookup = orm_lookup(node)
            if lookup:
                out["accesses"].append({
                    "file": relative, "line": node.lineno, "language": "python", "scope": scope_of(node),
                    "kind": "orm", "cardinality": "single", "via": lookup[2],
                    "model": lookup[0], "columns": lookup[1],
                })
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
            left, right = node.left, node.comparators[0]
            prop = property_read(left)
            values = literal_strings(right)
            if prop is None or values is None:
                prop, values = property_read(right), literal_strings(left)
            if prop is not None and values:
                out["comparisons"].append({"file": relative, "line": node.lineno, "property": prop, "values": values})

def main():
    request = json.load(sys.stdin)
    out = {"accesses": [], "comparisons": [], "modelTables": {}, "modelColumns": {},
           "enablesForeignKeys": False, "problems": []}
    for relative in request["files"]:
        scan(request["root"], relative, out)
    # Single-row consumption found for a statement text anywhere wins over "unknown".
    json.dump(out, sys.stdout)

main()
`;
