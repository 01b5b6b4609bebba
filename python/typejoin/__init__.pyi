import os
from typing import Any, Dict, List, Optional, Tuple, Union

from . import _native
from . import measure as measure
from . import reference as reference
from . import testing as testing

__version__: str

class PromotionError(TypeError):
    """No promotion under the policy (also NumPy's or JAX's own error for their policies)."""

class PolicyError(ValueError):
    """A policy or table that cannot be read; located like the CLI's messages."""
    path: str
    line: int
    column: int
    help: Optional[str]
    messages: List[str]

class KernelError(ValueError):
    """A reference kernel refused its operands."""
    kind: str

class Violation:
    law: str
    dtypes: Tuple[str, ...]
    left: Optional[str]
    right: Optional[str]
    detail: str

class Report:
    json: Dict[str, Any]
    text: str
    ok: bool
    name: str
    laws: List[Dict[str, Any]]
    lints: List[Dict[str, Any]]
    violations: List[Violation]
    @property
    def violation_count(self) -> int: ...
    def __bool__(self) -> bool: ...
    def _repr_html_(self) -> str: ...

class Diff:
    same: bool
    text: str
    json: Dict[str, Any]
    cells: List[Dict[str, Any]]
    def __bool__(self) -> bool: ...

Operand = Any  # a dtype name or Python type; a dtype, scalar or array of NumPy, ml_dtypes, JAX, PyTorch or TensorFlow; a Python scalar

def operand_name(x: Operand, ruleset: Optional[_Ruleset] = ...) -> str: ...

class _Ruleset:
    path: str
    @property
    def name(self) -> str: ...
    @property
    def nodes(self) -> List[str]: ...
    @property
    def dtypes(self) -> List[str]: ...
    def check(self, witnesses: int = ...) -> Report: ...
    def join(self, a: Operand, b: Operand) -> str: ...
    def join_or_none(self, a: Operand, b: Operand) -> Optional[str]: ...
    def result_type(self, *operands: Operand) -> str: ...
    def result_node(self, *operands: Operand) -> Optional[str]: ...
    def table(self, materialise: bool = ...) -> Dict[str, Dict[str, Optional[str]]]: ...
    def diff(self, other: _Ruleset, materialise: bool = ...) -> Diff: ...
    def to_dot(self) -> str: ...
    def to_svg(self) -> str: ...
    def _repr_svg_(self) -> Optional[str]: ...

class Policy(_Ruleset):
    @classmethod
    def from_toml(cls, text: str, path: str = ...) -> Policy: ...
    def safety(self) -> Dict[str, Any]: ...
    def suggest(self, name: str, format_of: Optional[str] = ..., max_degree: int = ...,
                top: int = ...) -> Dict[str, Any]: ...

class Table(_Ruleset):
    @classmethod
    def from_json(cls, text: str, path: str = ...) -> Table: ...
    @classmethod
    def from_library(cls, name: str) -> Table: ...

def load(path: Union[str, os.PathLike[str]]) -> Union[Policy, Table]: ...
def policies() -> List[str]: ...
def libraries() -> List[str]: ...
def policy(name: str) -> Union[Policy, Table]: ...
