// The part of the Python extractor that reads hand-written dispatch (http.server handlers, WSGI
// callables): comparisons of the request path with literals, prefixes, regular expressions, dispatch
// tables, and the method each is guarded by. Spliced into PYTHON_ROUTE_SCRIPT; it uses that script's
// helpers (dotted, text, PATHISH, METHODISH, METHOD_AND_PATH, UPPER).

export const PYTHON_DISPATCH_SCRIPT = String.raw`
class Dispatch:
    """Paths a hand-written handler compares the request path with, and the method each is guarded by."""

    def __init__(self, file, functions, owner=None):
        self.file = file
        self.functions = {function.name: function for function in functions}
        self.owner = owner
        self.current = None

    def hits(self):
        """(method, path, style, line, target): target says what serves the path, for reading its inputs."""
        callers = {}
        for name, function in self.functions.items():
            for node in ast.walk(function):
                callee = dotted(node.func) if isinstance(node, ast.Call) else None
                if callee and callee.split(".")[-1] in self.functions:
                    callers.setdefault(callee.split(".")[-1], set()).add(name)
        results = []
        for name, function in self.functions.items():
            implied = self.implied_methods(name, callers, set())
            self.current = function
            for method, path, style, line, target in self.scan(function):
                for resolved in ([method] if method else implied):
                    results.append((resolved, path, style, line, target))
        if self.owner is not None:
            for node in self.owner.body:
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
                    results.extend(self.dict_hits(node.value, None))
                if isinstance(node, ast.Assign) and isinstance(node.value, (ast.List, ast.Tuple)):
                    results.extend(self.list_hits(node.value))
        seen, unique = set(), []
        for hit in results:
            if (hit[0], hit[1]) not in seen:
                seen.add((hit[0], hit[1]))
                unique.append(hit)
        return unique

    def implied_methods(self, name, callers, visiting):
        found = re.match(r"^do_([A-Z]+)$", name)
        if found:
            return [found.group(1)]
        if name in visiting:
            return []
        methods = []
        for caller in sorted(callers.get(name, ())):
            for method in self.implied_methods(caller, callers, visiting | {name}):
                if method not in methods:
                    methods.append(method)
        return methods or ["ALL"]

    def scan(self, function):
        hits = []
        parents = {}
        for node in ast.walk(function):
            for child in ast.iter_child_nodes(node):
                parents[child] = node
        for node in ast.walk(function):
            if isinstance(node, ast.Compare) and len(node.ops) == 1:
                hits.extend(self.compare_hits(node, parents))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                hits.extend(self.call_hits(node, parents))
            elif isinstance(node, ast.Dict):
                hits.extend(self.dict_hits(node, None))
            elif isinstance(node, ast.Name) and node.id in self.file.module_dicts:
                hits.extend(self.dict_hits(self.file.module_dicts[node.id], None))
            elif isinstance(node, ast.Name) and node.id in self.file.module_lists:
                hits.extend(self.list_hits(self.file.module_lists[node.id]))
            elif isinstance(node, ast.Attribute) and node.attr in self.file.module_dicts:
                hits.extend(self.dict_hits(self.file.module_dicts[node.attr], None))
            elif hasattr(ast, "Match") and isinstance(node, ast.Match):
                hits.extend(self.match_hits(node, parents))
        return hits

    def literal_hit(self, value, other, node, parents):
        pair = METHOD_AND_PATH.match(value)
        if pair:
            return (pair.group(1), pair.group(2), "brace", node.lineno, self.branch(node, parents))
        if value.startswith("/") and PATHISH.search(text(other)):
            return (self.guard(node, parents), value, "brace", node.lineno, self.branch(node, parents))
        return None

    def branch(self, node, parents):
        """The statements a path comparison guards (an if's body, a match case's body), to read inputs from."""
        current = node
        while current in parents:
            parent = parents[current]
            if isinstance(parent, ast.If) and parent.test is current:
                return ("branch", self.file, self.current, parent.body)
            if hasattr(ast, "match_case") and isinstance(parent, ast.match_case):
                return ("branch", self.file, self.current, parent.body)
            current = parent
        return None

    def handler_target(self, node):
        """A table's value: a method of the handler class, a function of the module, or its name."""
        name = None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            name = node.attr
        elif isinstance(node, ast.Name):
            name = node.id
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            name = node.value
        function = self.functions.get(name) if name else None
        if function is None and name:
            function = self.file.defs.get(name)
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return ("function", self.file, function)
        return None

    def list_hits(self, node):
        """[("GET", r"^/items/(\d+)$", handler), ...] or [{"method": "GET", "path": "/x", "handler": h}, ...]."""
        hits = []
        for element in node.elts:
            method = pattern = handler = None
            if isinstance(element, (ast.Tuple, ast.List)) and len(element.elts) >= 2:
                method, pattern = element.elts[0], element.elts[1]
                handler = element.elts[2] if len(element.elts) > 2 else None
            elif isinstance(element, ast.Dict):
                entries = {self.file.string(key): value for key, value in zip(element.keys, element.values) if key is not None}
                method = entries.get("method") or entries.get("verb")
                pattern = entries.get("path") or entries.get("pattern") or entries.get("url") or entries.get("route")
                handler = entries.get("handler") or entries.get("view") or entries.get("func")
            verb = self.file.string(method) if method is not None else None
            if not verb or verb.upper() not in UPPER | {"ALL", "*"}:
                continue
            if isinstance(pattern, ast.Call) and call_name(pattern) == "compile" and pattern.args:
                pattern = pattern.args[0]
            path = self.file.string(pattern) if pattern is not None else None
            if not path or not path.lstrip("^").startswith("/"):
                continue
            style = "regex" if path.startswith("^") or "(" in path or path.endswith("$") else "brace"
            target = self.handler_target(handler) if handler is not None else None
            hits.append((verb.upper().replace("*", "ALL"), path, style, element.lineno, target))
        return hits

    def compare_hits(self, node, parents):
        operator, right = node.ops[0], node.comparators[0]
        hits = []
        if isinstance(operator, ast.Eq):
            for value_node, other in ((right, node.left), (node.left, right)):
                value = self.file.string(value_node)
                if value is not None:
                    hit = self.literal_hit(value, other, node, parents)
                    if hit:
                        hits.append(hit)
                    break
        elif isinstance(operator, ast.In) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
            for element in right.elts:
                value = self.file.string(element)
                if value is not None:
                    hit = self.literal_hit(value, node.left, node, parents)
                    if hit:
                        hits.append(hit)
        return hits

    def call_hits(self, node, parents):
        member = node.func.attr
        hits = []
        if member == "startswith" and node.args and PATHISH.search(text(node.func.value)):
            candidates = node.args[0].elts if isinstance(node.args[0], ast.Tuple) else [node.args[0]]
            for candidate in candidates:
                prefix = self.file.string(candidate)
                if prefix and prefix.startswith("/"):
                    path = prefix + "{param}" if len(prefix) > 1 and prefix.endswith("/") else prefix
                    hits.append((self.guard(node, parents), path, "brace", node.lineno, self.branch(node, parents)))
        if member in ("match", "fullmatch", "search") and node.args:
            pattern = self.file.string(node.args[0]) if len(node.args) >= 2 else None
            subject = node.args[1] if len(node.args) >= 2 else node.args[0]
            if pattern is None and isinstance(node.func.value, ast.Name):
                pattern = self.file.consts.get("re:" + node.func.value.id)
            if pattern and pattern.lstrip("^").startswith("/") and PATHISH.search(text(subject)):
                hits.append((self.guard(node, parents), pattern, "regex", node.lineno, self.branch(node, parents)))
        return hits

    def dict_hits(self, node, method):
        hits = []
        for key, value_node in zip(node.keys, node.values):
            if key is None:
                continue
            if isinstance(key, ast.Tuple) and len(key.elts) == 2:
                first, second = self.file.string(key.elts[0]), self.file.string(key.elts[1])
                if first and second and first.upper() in UPPER and second.startswith("/"):
                    hits.append((first.upper(), second, "brace", key.lineno, self.handler_target(value_node)))
                continue
            value = self.file.string(key)
            if value is None:
                continue
            pair = METHOD_AND_PATH.match(value)
            if pair:
                hits.append((pair.group(1), pair.group(2), "brace", key.lineno, self.handler_target(value_node)))
            elif value.startswith("/"):
                hits.append((method, value, "brace", key.lineno, self.handler_target(value_node)))
        return hits

    def match_hits(self, node, parents):
        hits = []
        subject = text(node.subject)
        for case in node.cases:
            patterns = case.pattern.patterns if isinstance(case.pattern, ast.MatchOr) else [case.pattern]
            for pattern in patterns:
                if isinstance(pattern, ast.MatchValue):
                    value = self.file.string(pattern.value)
                    if value:
                        hit = self.literal_hit(value, node.subject, pattern, parents)
                        if hit:
                            hits.append(hit)
                elif isinstance(pattern, ast.MatchSequence) and len(pattern.patterns) == 2:
                    first, second = pattern.patterns
                    if isinstance(first, ast.MatchValue) and isinstance(second, ast.MatchValue):
                        method, path = self.file.string(first.value), self.file.string(second.value)
                        if method and path and method.upper() in UPPER and path.startswith("/"):
                            hits.append((method.upper(), path, "brace", pattern.lineno, ("branch", self.file, self.current, case.body)))
        return hits

    def guard(self, node, parents):
        """The method an enclosing condition compares with (method == 'POST' and ...), else None."""
        current = node
        while current in parents:
            parent = parents[current]
            tests = []
            if isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And):
                tests.extend(parent.values)
            if isinstance(parent, ast.If) and current in parent.body:
                tests.append(parent.test)
            for test in tests:
                for compare in ast.walk(test):
                    if isinstance(compare, ast.Compare) and len(compare.ops) == 1 and isinstance(compare.ops[0], ast.Eq):
                        for value_node, other in ((compare.comparators[0], compare.left), (compare.left, compare.comparators[0])):
                            value = self.file.string(value_node)
                            if value and value.upper() in UPPER and METHODISH.search(text(other)):
                                return value.upper()
            current = parent
        return None
`;
