// The part of the Python extractor that links files: a dotted name used in one module (`views.index`,
// `schemas.ItemCreate`, `from .forms import ContactForm`) resolved to the function, class or value it
// denotes in another, and classes followed up their bases. Spliced into PYTHON_ROUTE_SCRIPT; it uses that
// script's helpers (dotted).

export const PYTHON_PROJECT_SCRIPT = String.raw`
import posixpath


def top_level_defs(tree):
    defs = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defs[node.name] = node
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.AST):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    defs[target.id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            defs[node.target.id] = node.value
    return defs


def class_member(cls, name):
    for item in cls.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and item.name == name:
            return item
        if isinstance(item, ast.Assign):
            for target in item.targets:
                if isinstance(target, ast.Name) and target.id == name:
                    return item.value
    return None


def base_name(node):
    name = dotted(node.value if isinstance(node, ast.Subscript) else node)
    return name.split(".")[-1] if name else None


class Project:
    """Every parsed file of the tree, and the names of one file resolved into another."""

    def __init__(self, files):
        self.files = files
        self.suffix_cache = {}

    def module_file(self, module_path, relative):
        candidates = [module_path + ".py", module_path + "/__init__.py"] if module_path else ["__init__.py"]
        for candidate in candidates:
            if candidate in self.files:
                return self.files[candidate]
        if relative or not module_path:
            return None
        if module_path not in self.suffix_cache:
            matches = [rel for rel in self.files if any(rel.endswith("/" + candidate) for candidate in candidates)]
            self.suffix_cache[module_path] = self.files[min(matches, key=len)] if matches else None
        return self.suffix_cache[module_path]

    def base_path(self, file, binding):
        base = binding["module"].replace(".", "/")
        if binding["level"] > 0:
            folder = posixpath.dirname(file.rel)
            for _ in range(1, binding["level"]):
                folder = posixpath.dirname(folder)
            base = "/".join(part for part in (folder, base) if part)
        return base

    def resolve(self, file, name, depth=0):
        """(File, node) a dotted name denotes in 'file': a def, a class, an assigned value; node None for a module."""
        if depth > 5 or not name:
            return None
        head, _, rest = name.partition(".")
        attrs = rest.split(".") if rest else []
        if head in file.defs:
            return self.descend(file, file.defs[head], attrs)
        binding = file.imports.get(head)
        if not binding:
            return None
        names = ([binding["name"]] if binding["name"] else []) + attrs
        base = self.base_path(file, binding)
        relative = binding["level"] > 0
        for count in range(len(names), -1, -1):
            module = "/".join(part for part in [base] + names[:count] if part)
            target = self.module_file(module, relative)
            if target is None:
                continue
            remaining = names[count:]
            if not remaining:
                return (target, None)
            if target is file and remaining[0] == head:
                return None
            return self.resolve(target, ".".join(remaining), depth + 1)
        return None

    def resolve_node(self, file, node):
        """Like resolve, for an expression (a Name or an Attribute chain)."""
        name = dotted(node)
        return self.resolve(file, name) if name else None

    def descend(self, file, node, attrs):
        for attr in attrs:
            if isinstance(node, ast.ClassDef):
                found = class_member(node, attr)
                if found is None:
                    return None
                node = found
            else:
                return None
        return (file, node)

    def class_chain(self, file, cls, depth=0):
        """The class and its ancestors found in the tree, nearest first, and every base's simple name."""
        chain, names, pending, seen = [], set(), [(file, cls, 0)], set()
        while pending:
            owner, node, level = pending.pop(0)
            if id(node) in seen or level > 8:
                continue
            seen.add(id(node))
            chain.append((owner, node))
            for base in node.bases:
                simple = base_name(base)
                if simple:
                    names.add(simple)
                found = self.resolve_node(owner, base.value if isinstance(base, ast.Subscript) else base)
                if found and isinstance(found[1], ast.ClassDef):
                    pending.append((found[0], found[1], level + 1))
        return chain, names

    def class_methods(self, file, cls):
        """Methods of a class and its ancestors in the tree: name -> (File, FunctionDef), nearest wins."""
        methods = {}
        for owner, node in self.class_chain(file, cls)[0]:
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name not in methods:
                    methods[item.name] = (owner, item)
        return methods

    def class_attribute(self, file, cls, name):
        """A class attribute's value and the file it is written in, looked up the class chain."""
        for owner, node in self.class_chain(file, cls)[0]:
            found = class_member(node, name)
            if found is not None and not isinstance(found, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return owner, found
        return None

    def as_class(self, file, node):
        """The ClassDef an expression names (a class, or 'View.as_view(...)'), with its file."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "as_view":
            node = node.func.value
        found = self.resolve_node(file, node)
        if found and isinstance(found[1], ast.ClassDef):
            return found
        return None
`;
