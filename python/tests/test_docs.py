"""Every example a user reads runs: the ``>>>`` examples of the package's docstrings and of
docs/python.md's ``python`` blocks (one session per page, as a reader types them), with
NumPy's and the kernels' output as printed."""

import doctest
import pathlib
import re

import pytest

import typejoin
import typejoin.reference
import typejoin.testing

ROOT = pathlib.Path(__file__).resolve().parents[2]
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@pytest.mark.parametrize("module", [typejoin, typejoin.reference, typejoin.testing],
                         ids=lambda m: m.__name__)
def test_docstring_examples_run(module):
    result = doctest.testmod(module, optionflags=FLAGS)
    assert result.failed == 0


def test_python_md_examples_run():
    page = ROOT / "docs" / "python.md"
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=FLAGS)
    globs: dict = {}
    for i, block in enumerate(b for b in blocks if ">>>" in b):
        test = parser.get_doctest(block, globs, f"python.md block {i}", str(page), 0)
        runner.run(test, clear_globs=False)
        globs = test.globs
    result = runner.summarize(verbose=False)
    assert result.attempted >= 29 and result.failed == 0
