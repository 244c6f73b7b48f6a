import ast

from helpers import APP_ROOT, BookwellCase

PACKAGE = APP_ROOT / "bookwell"


def imports_of(path):
    """Modules a file imports, as dotted names (relative imports resolved against the file's package)."""
    package = list(path.relative_to(APP_ROOT).with_suffix("").parts[:-1])
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            prefix = ".".join(base + ([node.module] if node.module else []))
            found.add(prefix)
            found.update(f"{prefix}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def graph():
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        name = ".".join(path.relative_to(APP_ROOT).with_suffix("").parts).removesuffix(".__init__")
        modules[name] = imports_of(path)
    return modules


class ArchitectureDefects(BookwellCase):
    def test_CLIN_70_the_billing_service_imports_from_the_view_layer(self):
        modules = graph()
        service_imports = {m for name, deps in modules.items() if name.startswith("bookwell.services") for m in deps}
        self.assertIn("bookwell.views.templating", service_imports)
        self.assertIn("bookwell.views.templating", modules["bookwell.services.billing"])

    def test_CLIN_71_appointments_and_realtime_import_each_other(self):
        modules = graph()
        self.assertIn("bookwell.realtime", modules["bookwell.services.appointments"])
        self.assertIn("bookwell.services.appointments", modules["bookwell.realtime"])

    def test_CLIN_72_the_waitlist_views_are_never_imported_or_registered(self):
        modules = graph()
        importers = [name for name, deps in modules.items() if "bookwell.views.waitlist" in deps]
        self.assertEqual(importers, [])
        self.assertNotIn("waitlist", self.app.blueprints)
        self.assertFalse([rule for rule in self.app.url_map.iter_rules() if "waitlist" in rule.rule])
