// The part of the Python extractor that reads Django and Django REST framework declarations: form and
// serializer fields (and the model fields a ModelForm or ModelSerializer takes), which methods a class-based
// view or a viewset answers, and a DRF router's list/detail routes with `@action`s. Spliced into
// PYTHON_ROUTE_SCRIPT; uses dotted, call_name, base_name, class_member, Project and Signatures.

export const PYTHON_DJANGO_SCRIPT = String.raw`
FIELD_TYPES = {
    "CharField": {"type": "string"}, "TextField": {"type": "string"}, "SlugField": {"type": "string"},
    "EmailField": {"type": "string", "format": "email"}, "URLField": {"type": "string", "format": "uri"},
    "UUIDField": {"type": "string", "format": "uuid"}, "IntegerField": {"type": "integer"},
    "PositiveIntegerField": {"type": "integer", "minimum": 0}, "SmallIntegerField": {"type": "integer"},
    "BigIntegerField": {"type": "integer"}, "PositiveSmallIntegerField": {"type": "integer", "minimum": 0},
    "FloatField": {"type": "number"}, "DecimalField": {"type": "number"}, "BooleanField": {"type": "boolean"},
    "NullBooleanField": {"type": "boolean"}, "DateField": {"type": "string", "format": "date"},
    "DateTimeField": {"type": "string", "format": "date-time"}, "TimeField": {"type": "string", "format": "time"},
    "ChoiceField": {"type": "string"}, "TypedChoiceField": {"type": "string"}, "MultipleChoiceField": {"type": "array"},
    "ListField": {"type": "array"}, "DictField": {"type": "object"}, "JSONField": {},
    "FileField": {"type": "string", "format": "binary"}, "ImageField": {"type": "string", "format": "binary"},
    "RegexField": {"type": "string"}, "IPAddressField": {"type": "string"}, "GenericIPAddressField": {"type": "string"},
    "ForeignKey": {"type": "integer"}, "OneToOneField": {"type": "integer"}, "ManyToManyField": {"type": "array"},
    "PrimaryKeyRelatedField": {"type": "integer"}, "SerializerMethodField": None, "HiddenField": None,
    "ReadOnlyField": None, "AutoField": None, "BigAutoField": None, "HyperlinkedIdentityField": None,
}
FORM_BASES = {"Form", "ModelForm", "BaseForm"}
SERIALIZER_BASES = {"Serializer", "ModelSerializer", "HyperlinkedModelSerializer", "BaseSerializer"}
VIEW_METHODS = ("get", "post", "put", "patch", "delete", "head", "options")
GENERIC_METHODS = {
    "TemplateView": ["GET"], "ListView": ["GET"], "DetailView": ["GET"], "RedirectView": ["GET"],
    "ArchiveIndexView": ["GET"], "FormView": ["GET", "POST"], "CreateView": ["GET", "POST"],
    "UpdateView": ["GET", "POST"], "DeleteView": ["GET", "POST"], "LoginView": ["GET", "POST"],
    "LogoutView": ["GET", "POST"], "ListAPIView": ["GET"], "CreateAPIView": ["POST"],
    "ListCreateAPIView": ["GET", "POST"], "RetrieveAPIView": ["GET"], "UpdateAPIView": ["PUT", "PATCH"],
    "DestroyAPIView": ["DELETE"], "RetrieveUpdateAPIView": ["GET", "PUT", "PATCH"],
    "RetrieveDestroyAPIView": ["GET", "DELETE"], "RetrieveUpdateDestroyAPIView": ["GET", "PUT", "PATCH", "DELETE"],
    "Resource": [], "MethodView": [], "View": [], "APIView": [], "HTTPEndpoint": [],
}
VIEWSET_ACTIONS = {
    "ModelViewSet": ["list", "create", "retrieve", "update", "partial_update", "destroy"],
    "ReadOnlyModelViewSet": ["list", "retrieve"], "ListModelMixin": ["list"], "CreateModelMixin": ["create"],
    "RetrieveModelMixin": ["retrieve"], "UpdateModelMixin": ["update", "partial_update"],
    "DestroyModelMixin": ["destroy"],
}
ACTION_ROUTES = {"list": ("GET", False), "create": ("POST", False), "retrieve": ("GET", True),
                 "update": ("PUT", True), "partial_update": ("PATCH", True), "destroy": ("DELETE", True)}


class Declarations:
    """Django forms, models and DRF serializers as object schemas."""

    def __init__(self, project, signatures):
        self.project = project
        self.signatures = signatures

    def bases(self, file, cls):
        return self.project.class_chain(file, cls)[1]

    def is_form(self, file, cls):
        return bool(self.bases(file, cls) & FORM_BASES)

    def is_serializer(self, file, cls):
        return bool(self.bases(file, cls) & SERIALIZER_BASES)

    def field_schema(self, file, call, read_only_default=False):
        """(schema, required) of 'forms.CharField(max_length=20)' or 'serializers.IntegerField(...)'; None to skip."""
        name = call_name(call)
        keyword = lambda key: next((item.value for item in call.keywords if item.arg == key), None)
        flag = lambda key: isinstance(keyword(key), ast.Constant) and keyword(key).value is True
        if flag("read_only") or (name not in FIELD_TYPES and not name.endswith("Serializer")):
            return None
        if name.endswith("Serializer"):
            found = self.project.resolve_node(file, call.func)
            nested = self.serializer(found[0], found[1], 1) if found and isinstance(found[1], ast.ClassDef) else {"type": "object"}
            schema = {"type": "array", "items": nested} if flag("many") else nested
        else:
            base = FIELD_TYPES[name]
            if base is None:
                return None
            schema = dict(base)
        for source, target in (("max_length", "maxLength"), ("min_length", "minLength"), ("max_value", "maximum"), ("min_value", "minimum")):
            value = keyword(source)
            if isinstance(value, ast.Constant) and isinstance(value.value, (int, float)):
                schema[target] = value.value
        regex = keyword("regex") if name == "RegexField" else None
        if regex is None and name == "RegexField" and len(call.args) > 0:
            regex = call.args[0]
        if isinstance(regex, ast.Constant) and isinstance(regex.value, str):
            schema["pattern"] = regex.value
        choices = keyword("choices") or (call.args[0] if name in ("ChoiceField", "MultipleChoiceField") and call.args else None)
        values = self.choice_values(file, choices)
        if values:
            schema["enum"] = values
        required_node = keyword("required")
        if isinstance(required_node, ast.Constant):
            required = bool(required_node.value)
        else:
            required = not (flag("blank") or flag("null") or keyword("default") is not None or name in ("BooleanField", "NullBooleanField"))
        return schema, required

    def choice_values(self, file, node):
        if isinstance(node, ast.Name):
            found = self.project.resolve(file, node.id)
            node = found[1] if found and not isinstance(found[1], ast.ClassDef) else node
        if not isinstance(node, (ast.List, ast.Tuple)):
            return []
        values = []
        for element in node.elts:
            if isinstance(element, (ast.Tuple, ast.List)) and element.elts and isinstance(element.elts[0], ast.Constant):
                values.append(element.elts[0].value)
            elif isinstance(element, ast.Constant):
                values.append(element.value)
        return values

    def declared_fields(self, file, cls, depth):
        properties, required = {}, []
        for owner, node in reversed(self.project.class_chain(file, cls)[0]):
            for item in node.body:
                if isinstance(item, ast.Assign) and isinstance(item.value, ast.Call) and len(item.targets) == 1 and isinstance(item.targets[0], ast.Name):
                    found = self.field_schema(owner, item.value) if depth < 4 else None
                    if found is None:
                        continue
                    name = item.targets[0].id
                    properties[name] = found[0]
                    if found[1] and name not in required:
                        required.append(name)
        return properties, required

    def meta(self, file, cls):
        """(model (file, ClassDef) or None, fields list or '__all__', exclude list, read-only list) of class Meta."""
        meta = class_member(cls, "Meta")
        if not isinstance(meta, ast.ClassDef):
            return None, None, [], []
        model, fields, exclude, read_only = None, None, [], []
        for item in meta.body:
            if not (isinstance(item, ast.Assign) and len(item.targets) == 1 and isinstance(item.targets[0], ast.Name)):
                continue
            key, value = item.targets[0].id, item.value
            if key == "model":
                found = self.project.resolve_node(file, value)
                model = found if found and isinstance(found[1], ast.ClassDef) else None
            elif key in ("fields", "exclude", "read_only_fields"):
                names = [element.value for element in getattr(value, "elts", []) if isinstance(element, ast.Constant)]
                if isinstance(value, ast.Constant) and value.value == "__all__":
                    names = "__all__"
                if key == "fields":
                    fields = names
                elif key == "exclude":
                    exclude = names
                else:
                    read_only = names
        return model, fields, exclude, read_only

    def model_fields(self, file, cls):
        """(properties, required, fixed): fixed names the model sets itself (editable=False, auto_now)."""
        properties, required, fixed = {}, [], set()
        for owner, node in reversed(self.project.class_chain(file, cls)[0]):
            for item in node.body:
                if isinstance(item, ast.Assign) and isinstance(item.value, ast.Call) and len(item.targets) == 1 and isinstance(item.targets[0], ast.Name):
                    name = call_name(item.value)
                    if name not in FIELD_TYPES or FIELD_TYPES[name] is None:
                        continue
                    keyword = lambda key: next((entry.value for entry in item.value.keywords if entry.arg == key), None)
                    # editable=False, or auto_now / auto_now_add (which imply it): forms and serializers leave it out.
                    if any(isinstance(keyword(key), ast.Constant) and keyword(key).value is value for key, value in (("editable", False), ("auto_now", True), ("auto_now_add", True))):
                        fixed.add(item.targets[0].id)
                        continue
                    found = self.field_schema(owner, item.value)
                    if found:
                        properties[item.targets[0].id] = found[0]
                        if found[1]:
                            required.append(item.targets[0].id)
        return properties, required, fixed

    def with_model(self, file, cls, properties, required):
        model, fields, exclude, read_only = self.meta(file, cls)
        if model:
            model_properties, model_required, fixed = self.model_fields(model[0], model[1])
            names = list(model_properties) if fields in (None, "__all__") else fields
            for name in names:
                if name in exclude or name in read_only or name in properties or name in fixed:
                    continue
                if name in model_properties:
                    properties[name] = model_properties[name]
                    if name in model_required:
                        required.append(name)
                elif name not in ("id", "pk", "url"):
                    properties[name] = {"type": "string"}
        elif isinstance(fields, list):
            for name in fields:
                if name not in properties and name not in read_only and name not in ("id", "pk", "url"):
                    properties[name] = {"type": "string"}
        result = {"type": "object", "properties": properties}
        if required:
            result["required"] = list(dict.fromkeys(required))
        return result

    def form(self, file, cls):
        properties, required = self.declared_fields(file, cls, 0)
        return self.with_model(file, cls, properties, required)

    def serializer(self, file, cls, depth=0):
        properties, required = self.declared_fields(file, cls, depth)
        return self.with_model(file, cls, properties, required)

    def class_schema(self, file, cls):
        """A declared body class of any kind: a pydantic model, a form, a serializer, a marshmallow schema."""
        if self.is_form(file, cls):
            return self.form(file, cls), "form"
        if self.is_marshmallow(file, cls):
            return self.marshmallow(file, cls), "json"
        if self.is_serializer(file, cls):
            return self.serializer(file, cls), None
        if self.signatures.is_model(file, cls):
            return self.signatures.model(file, cls), "json"
        return None, None

    def is_marshmallow(self, file, cls):
        for owner, node in self.project.class_chain(file, cls)[0]:
            for item in node.body:
                if isinstance(item, ast.Assign) and isinstance(item.value, ast.Call) and isinstance(item.value.func, ast.Attribute):
                    if dotted(item.value.func.value) in ("fields", "ma.fields", "marshmallow.fields"):
                        return True
        return False

    def marshmallow(self, file, cls, depth=0):
        """marshmallow fields: fields.Str(required=True, validate=validate.Length(max=20)), fields.Nested(...)."""
        properties, required = {}, []
        for owner, node in reversed(self.project.class_chain(file, cls)[0]):
            for item in node.body:
                if not (isinstance(item, ast.Assign) and len(item.targets) == 1 and isinstance(item.targets[0], ast.Name) and isinstance(item.value, ast.Call)):
                    continue
                schema, is_required = self.marshmallow_field(owner, item.value, depth)
                if schema is None:
                    continue
                name = item.targets[0].id
                key = next((entry.value for entry in item.value.keywords if entry.arg in ("data_key", "load_from")), None)
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    name = key.value
                properties[name] = schema
                if is_required:
                    required.append(name)
        result = {"type": "object", "properties": properties}
        if required:
            result["required"] = required
        return result

    def marshmallow_field(self, file, call, depth):
        kind = call_name(call)
        keyword = lambda key: next((entry.value for entry in call.keywords if entry.arg == key), None)
        if isinstance(keyword("dump_only"), ast.Constant) and keyword("dump_only").value is True:
            return None, False
        types = {"Str": "string", "String": "string", "Int": "integer", "Integer": "integer", "Float": "number",
                 "Decimal": "number", "Number": "number", "Bool": "boolean", "Boolean": "boolean", "Dict": "object",
                 "Email": "string", "Url": "string", "URL": "string", "UUID": "string", "DateTime": "string",
                 "Date": "string", "List": "array", "Nested": "object", "Raw": None}
        if kind not in types:
            return None, False
        schema = {"type": types[kind]} if types[kind] else {}
        formats = {"Email": "email", "Url": "uri", "URL": "uri", "UUID": "uuid", "DateTime": "date-time", "Date": "date"}
        if kind in formats:
            schema["format"] = formats[kind]
        if kind == "List" and call.args and isinstance(call.args[0], ast.Call):
            items, _ = self.marshmallow_field(file, call.args[0], depth)
            if items is not None:
                schema["items"] = items
        if kind == "Nested" and call.args and depth < 3:
            found = self.project.resolve_node(file, call.args[0])
            if found and isinstance(found[1], ast.ClassDef):
                schema = self.marshmallow(found[0], found[1], depth + 1)
                if isinstance(keyword("many"), ast.Constant) and keyword("many").value is True:
                    schema = {"type": "array", "items": schema}
        validator = keyword("validate")
        for check in (validator.elts if isinstance(validator, (ast.List, ast.Tuple)) else [validator] if validator is not None else []):
            if not isinstance(check, ast.Call):
                continue
            name = call_name(check)
            bounds = {entry.arg: entry.value.value for entry in check.keywords if isinstance(entry.value, ast.Constant)}
            if name == "Length":
                if "min" in bounds:
                    schema["minLength"] = bounds["min"]
                if "max" in bounds:
                    schema["maxLength"] = bounds["max"]
            elif name == "Range":
                if "min" in bounds:
                    schema["minimum"] = bounds["min"]
                if "max" in bounds:
                    schema["maximum"] = bounds["max"]
            elif name == "OneOf" and check.args and isinstance(check.args[0], (ast.List, ast.Tuple)):
                schema["enum"] = [element.value for element in check.args[0].elts if isinstance(element, ast.Constant)]
            elif name == "Regexp" and check.args and isinstance(check.args[0], ast.Constant):
                schema["pattern"] = check.args[0].value
        required = isinstance(keyword("required"), ast.Constant) and keyword("required").value is True
        return schema, required

    def view_methods(self, file, cls):
        """Methods a class-based view answers: the handler methods it defines, else its generic base's."""
        methods = self.project.class_methods(file, cls)
        declared = [name.upper() for name in VIEW_METHODS if name in methods and name not in ("head", "options")]
        attribute = self.project.class_attribute(file, cls, "methods") or self.project.class_attribute(file, cls, "http_method_names")
        if attribute and isinstance(attribute[1], (ast.List, ast.Tuple, ast.Set)):
            listed = [element.value.upper() for element in attribute[1].elts if isinstance(element, ast.Constant) and isinstance(element.value, str)]
            listed = [method for method in listed if method not in ("HEAD", "OPTIONS")]
            if listed:
                return listed
        if declared:
            return declared
        for name in self.bases(file, cls):
            if GENERIC_METHODS.get(name):
                return GENERIC_METHODS[name]
        return []

    def viewset_actions(self, file, cls):
        methods = self.project.class_methods(file, cls)
        actions = [name for name in ACTION_ROUTES if name in methods]
        for base in self.bases(file, cls):
            for action in VIEWSET_ACTIONS.get(base, []):
                if action not in actions:
                    actions.append(action)
        return actions

    def extra_actions(self, file, cls):
        """@action(detail=True, methods=["post"], url_path="x") methods: (function, detail, methods, path)."""
        found = []
        for name, (owner, function) in self.project.class_methods(file, cls).items():
            for decorator in function.decorator_list:
                if not (isinstance(decorator, ast.Call) and call_name(decorator) in ("action", "detail_route", "list_route")):
                    continue
                keyword = lambda key: next((entry.value for entry in decorator.keywords if entry.arg == key), None)
                detail_node = keyword("detail")
                detail = call_name(decorator) == "detail_route" or (isinstance(detail_node, ast.Constant) and detail_node.value is True)
                methods = owner.methods_of(keyword("methods"), ["GET"])
                path_node = keyword("url_path")
                path = path_node.value if isinstance(path_node, ast.Constant) else name
                found.append((owner, function, detail, methods, path))
        return found
`;
