from typing import Any, Callable, Iterable, List, Optional, Sequence, Tuple, Union

from . import Policy, Table

def mismatches(fn: Callable[..., Any], policy: Union[Policy, Table, str],
               dtypes: Optional[Sequence[str]] = ..., max_operands: int = ...,
               operand: Callable[[str], Any] = ...
               ) -> List[Tuple[Tuple[str, ...], Optional[str], Optional[str]]]: ...
def assert_promotion_matches(fn: Callable[..., Any], policy: Union[Policy, Table, str],
                             dtypes: Optional[Iterable[str]] = ..., max_operands: int = ...,
                             operand: Callable[[str], Any] = ...) -> None: ...
