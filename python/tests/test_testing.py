"""`typejoin.testing.assert_promotion_matches` gates a library's result_type."""

import json
import pathlib

import numpy as np
import pytest

import typejoin
from typejoin.testing import assert_promotion_matches, mismatches

ROOT = pathlib.Path(__file__).resolve().parents[2]


def numpy_table():
    return typejoin.Table.from_library("numpy")


# NumPy's own dtypes: the table measures np.add, which ml_dtypes extends to pairs that
# np.result_type refuses (uint4 with int1), so the two agree on NumPy's dtypes only.
NUMPY = ["bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
         "float16", "float32", "float64", "complex64", "complex128"]


def test_numpy_matches_its_own_measured_table():
    table = numpy_table()
    assert_promotion_matches(np.result_type, table, dtypes=NUMPY, max_operands=2)
    assert_promotion_matches(np.promote_types, table, dtypes=NUMPY, max_operands=2)


def test_numpy_result_type_of_three_is_not_its_binary_fold():
    # The table's n-ary result is the left fold of np.add; np.result_type reduces otherwise:
    # (int8 ∨ uint8) ∨ float16 is float32, np.result_type(int8, uint8, float16) float16.
    found = mismatches(np.result_type, numpy_table(), dtypes=["int8", "uint8", "float16"],
                       max_operands=3)
    assert (("int8", "uint8", "float16"), "float16", "float32") in found
    assert all(len(names) == 3 for names, _, _ in found)


def test_a_mutated_table_fails_with_the_right_cells():
    doc = json.loads((ROOT / "observed" / "numpy.json").read_text())
    doc["result"]["int8"]["uint8"] = "int32"
    doc["result"]["uint8"]["int8"] = "int32"
    mutated = typejoin.Table.from_json(json.dumps(doc), "mutated.json")
    dtypes = ["int8", "uint8", "int16", "float32"]
    found = mismatches(np.promote_types, mutated, dtypes=dtypes, max_operands=2)
    assert found == [(("int8", "uint8"), "int16", "int32")]
    with pytest.raises(AssertionError) as e:
        assert_promotion_matches(np.promote_types, mutated, dtypes=dtypes, max_operands=2)
    assert "int8 ∨ uint8: library int16, policy int32" in str(e.value)
    assert "1 cell(s)" in str(e.value)


def test_numpy_is_not_jax():
    found = mismatches(np.promote_types, "jax", dtypes=["int8", "uint8", "float16"],
                       max_operands=2)
    assert found == []
    found = mismatches(np.result_type, "array-api", dtypes=["int8", "uint8", "float16"],
                       max_operands=2)
    # the Array API leaves mixed kinds undefined; NumPy promotes them
    assert (("int8", "float16"), "float16", None) in found


def test_jax_matches_its_policy():
    jnp = pytest.importorskip("jax.numpy", reason="JAX is not installed")
    import jax

    jax.config.update("jax_enable_x64", True)
    dtypes = ["bool", "int8", "uint8", "int16", "int32", "uint32", "int64", "bfloat16",
              "float16", "float32", "float64", "complex64"]
    assert_promotion_matches(jnp.result_type, "jax", dtypes=dtypes, max_operands=3)


def test_torch_through_an_adapter():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    names = {"bool": torch.bool, "int8": torch.int8, "uint8": torch.uint8,
             "int16": torch.int16, "int32": torch.int32, "int64": torch.int64,
             "float16": torch.float16, "bfloat16": torch.bfloat16,
             "float32": torch.float32, "float64": torch.float64}

    def tensor(name):
        return torch.zeros(2, dtype=names[name])

    def result_type(*operands):
        r = operands[0]
        for o in operands[1:]:
            r = torch.zeros(2, dtype=torch.result_type(r, o))
        return str(r.dtype).replace("torch.", "")

    assert_promotion_matches(result_type, "torch", dtypes=list(names), max_operands=2,
                             operand=tensor)
