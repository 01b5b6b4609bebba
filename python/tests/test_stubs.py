"""``typejoin/_native.pyi`` is the native module's interface as written: every name it declares
exists in ``typejoin._native`` with the same parameters, and every public name of the module is
declared. A stub that drifts (a function renamed, a parameter added) fails here."""

import ast
import inspect
from pathlib import Path

import typejoin
from typejoin import _native

STUB = Path(typejoin.__file__).with_name("_native.pyi")


def _params(fn: ast.FunctionDef, method: bool) -> list:
    names = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    names = names[1:] if method else names
    if fn.args.vararg is not None:  # `*operands`
        names.append(fn.args.vararg.arg)
    return names + [a.arg for a in fn.args.kwonlyargs]


def _stub():
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    functions, classes = {}, {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            functions[node.name] = _params(node, method=False)
        elif isinstance(node, ast.ClassDef):
            members = {}
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    members[item.name] = _params(item, method=True)
                elif isinstance(item, ast.AnnAssign):
                    members[item.target.id] = None  # an attribute
            classes[node.name] = members
    return functions, classes


def _signature(obj) -> list:
    return [p for p in inspect.signature(obj).parameters if p not in ("self", "/")]


def test_every_native_name_is_declared_and_exists():
    functions, classes = _stub()
    public = {n for n in dir(_native) if not n.startswith("_")}
    assert public == set(functions) | set(classes)


def test_native_functions_take_the_declared_parameters():
    functions, _ = _stub()
    assert functions, "the stub declares functions"
    for name, params in functions.items():
        assert _signature(getattr(_native, name)) == params, name


def test_native_classes_have_the_declared_members():
    _, classes = _stub()
    assert issubclass(_native.PolicyError, ValueError)
    assert issubclass(_native.KernelError, ValueError)
    assert set(classes) == {"PolicyError", "KernelError", "Loaded", "JoinMemo", "ResultTypeMemo"}
    inherited = set(dir(object))
    for cls in ("Loaded", "JoinMemo", "ResultTypeMemo"):
        members = {n: p for n, p in classes[cls].items() if not n.startswith("_")}
        native = getattr(_native, cls)
        public = {n for n in dir(native) if not n.startswith("_") and n not in inherited}
        assert public == set(members), cls
        for name, params in members.items():
            if params is not None:
                assert _signature(getattr(native, name)) == params, (cls, name)
