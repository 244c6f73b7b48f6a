// The Python half of the import graph, run once per build as a script file with
// `{ "root": ..., "files": [...] }` on stdin. It parses every file with Python's own `ast` and prints, per
// file, the imports (with their level and whether they are deferred or for type checking only), the
// folder-loading calls, module-like string constants, and the size facts god-module detection needs.

export const PYTHON_IMPORTS_SCRIPT = String.raw`
import ast, json, os, re, sys

MODULE_STRING = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+(:[\w.]+)?$|^[\w./-]+\.py$|^[A-Za-z_]\w*:[A-Za-z_][\w.]*$")
LOADERS = {"iter_modules", "walk_packages", "listdir", "scandir", "glob", "iglob", "walk"}
IMPORTERS = {"import_module", "__import__"}

def is_type_checking(test):
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")

def is_main_guard(test):
    if not isinstance(test, ast.Compare) or len(test.comparators) != 1:
        return False
    names = [test.left, test.comparators[0]]
    has_name = any(isinstance(n, ast.Name) and n.id == "__name__" for n in names)
    has_main = any(isinstance(n, ast.Constant) and n.value == "__main__" for n in names)
    return has_name and has_main

def is_literal(node):
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(is_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is None or is_literal(k) for k in node.keys) and all(is_literal(v) for v in node.values)
    if isinstance(node, ast.UnaryOp):
        return is_literal(node.operand)
    return False

def call_name(func):
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None

def static_prefix(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value, True
    if isinstance(node, ast.JoinedStr):
        head = ""
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                head += part.value
            else:
                break
        return head, False
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        head, whole = static_prefix(node.left)
        return head, False
    return "", False

def mentions_own_folder(node):
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name) and inner.id in ("__path__", "__file__"):
            return True
    return False

class Visitor(ast.NodeVisitor):
    def __init__(self):
        self.imports = []
        self.loaders = []
        self.strings = []
        self.opaque = 0
        self.functions = 0
        self.main = False
        self.depth = 0
        self.typing = 0

    def kind(self):
        if self.typing:
            return "type"
        return "lazy" if self.depth else "static"

    def visit_FunctionDef(self, node):
        self.functions += 1
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    def visit_If(self, node):
        if is_main_guard(node.test):
            self.main = True
        if is_type_checking(node.test):
            self.typing += 1
            for child in node.body:
                self.visit(child)
            self.typing -= 1
            for child in node.orelse:
                self.visit(child)
            return
        self.generic_visit(node)

    def visit_Import(self, node):
        for alias in node.names:
            self.imports.append({"module": alias.name, "names": [], "level": 0, "line": node.lineno, "kind": self.kind()})

    def visit_ImportFrom(self, node):
        self.imports.append({
            "module": node.module or "",
            "names": [alias.name for alias in node.names],
            "level": node.level or 0,
            "line": node.lineno,
            "kind": self.kind(),
        })

    def visit_Call(self, node):
        name = call_name(node.func)
        if name in IMPORTERS and node.args:
            prefix, whole = static_prefix(node.args[0])
            if whole:
                level = len(prefix) - len(prefix.lstrip("."))
                self.imports.append({"module": prefix.lstrip("."), "names": [], "level": level, "line": node.lineno, "kind": "lazy"})
            elif "." in prefix:
                self.loaders.append({"folder": prefix[: prefix.rfind(".")].replace(".", "/") + "/", "line": node.lineno, "dotted": True})
            else:
                self.opaque += 1
        elif name in LOADERS and node.args:
            if mentions_own_folder(node.args[0]) or any(mentions_own_folder(a) for a in node.args):
                self.loaders.append({"folder": "./", "line": node.lineno, "dotted": False})
            else:
                prefix, whole = static_prefix(node.args[0])
                if prefix:
                    folder = prefix if whole and "*" not in prefix else prefix[: prefix.rfind("/") + 1]
                    if folder:
                        self.loaders.append({"folder": folder.rstrip("/") + "/", "line": node.lineno, "dotted": False})
        self.generic_visit(node)

    def visit_Constant(self, node):
        if isinstance(node.value, str) and len(self.strings) < 400 and len(node.value) < 200 and MODULE_STRING.match(node.value):
            self.strings.append(node.value)

def facts_of(root, relative):
    with open(os.path.join(root, relative), "r", encoding="utf-8", errors="replace") as handle:
        text = handle.read()
    tree = ast.parse(text, filename=relative)
    visitor = Visitor()
    visitor.visit(tree)
    data_lines = 0
    for statement in tree.body:
        value = getattr(statement, "value", None)
        if isinstance(statement, (ast.Assign, ast.AnnAssign)) and value is not None and is_literal(value):
            data_lines += (statement.end_lineno or statement.lineno) - statement.lineno + 1
    return {
        "imports": visitor.imports,
        "loaders": visitor.loaders,
        "strings": visitor.strings,
        "opaque": visitor.opaque,
        "lines": sum(1 for line in text.splitlines() if line.strip()),
        "functions": visitor.functions,
        "data_lines": data_lines,
        "main": visitor.main or text.startswith("#!"),
    }

def main():
    request = json.loads(sys.stdin.read())
    output = {"files": {}, "errors": []}
    for relative in request["files"]:
        try:
            output["files"][relative] = facts_of(request["root"], relative)
        except (SyntaxError, ValueError, OSError) as error:
            output["errors"].append(relative + ": " + str(error).splitlines()[0][:200])
    sys.stdout.write(json.dumps(output))

main()
`;
