"""
Checks Python examples of the docs against the Python SDK generated into sdk-gen/python (argv[1], the package
folder), statically, since the SDK needs the `pulumi` package from PyPI to import: each `posthog.X(...)` call
names a class or function of the SDK and passes only keyword arguments it takes, and each attribute read of a
variable holding a resource (or a function's result, `get_x_output`) is one of its properties. The examples come
on stdin as a JSON object (a name, e.g. the page, to its code); prints a JSON object of each name to its
mismatches (an empty list when there is none), reading the SDK once for all of them. Used by
test/docs/examples-yaml.test.ts.
"""
import ast, json, os, sys

sdk = sys.argv[1]
examples = json.load(sys.stdin)
classes, funcs = {}, {}
for f in sorted(os.listdir(sdk)):
    if not f.endswith(".py"):
        continue
    with open(os.path.join(sdk, f)) as fh:
        tree = ast.parse(fh.read())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            funcs[node.name] = {a.arg for a in node.args.args + node.args.kwonlyargs}
        if isinstance(node, ast.ClassDef):
            init, props = set(), set()
            for m in node.body:
                if not isinstance(m, ast.FunctionDef):
                    continue
                if m.name == "__init__":
                    init |= {a.arg for a in m.args.args + m.args.kwonlyargs}
                for d in m.decorator_list:
                    if (isinstance(d, ast.Name) and d.id == "property") or (
                        isinstance(d, ast.Attribute) and d.attr == "property"
                    ):
                        props.add(m.name)
            classes[node.name] = {"init": init, "props": props}


def callee(call):
    f = call.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "posthog":
        return f.attr
    return None


def check(code):
    """The mismatches of one example with the SDK."""
    try:
        tree = ast.parse(code)
    except SyntaxError as e:
        return [f"not Python: {e}"]
    errors = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and callee(node):
            name = callee(node)
            allowed = classes[name]["init"] if name in classes else funcs.get(name)
            if allowed is None:
                errors.append(f"the SDK has no {name}")
                continue
            for kw in node.keywords:
                if kw.arg not in allowed:
                    errors.append(f"{name} takes no argument {kw.arg}")
    known = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and callee(node.value):
            name = callee(node.value)
            var = node.targets[0].id
            if name in classes:
                known[var] = (name, classes[name]["props"] | {"id", "urn"})
            elif name.endswith("_output"):
                result = "".join(w.title() for w in name[: -len("_output")].split("_")) + "Result"
                if result not in classes:
                    errors.append(f"the SDK has no {result}")
                else:
                    known[var] = (result, classes[result]["props"])
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in known:
            owner, props = known[node.value.id]
            if node.attr not in props:
                errors.append(f"{owner} has no property {node.attr}")
    return errors


print(json.dumps({name: check(code) for name, code in examples.items()}))
