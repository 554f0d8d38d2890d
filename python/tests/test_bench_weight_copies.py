"""bench/model's weight copies on the CPU (no GPU, no process group): the
layer benches take LAYER_WEIGHT_COPIES copies of every weight in turn, on
every side, so that no call finds the previous call's weight lines in L2
(bench/results/2026-11-28-weight-copies-h200x2.md). What must hold for
those figures to mean anything: the copies are distinct tensors of equal
values, they are taken in turn, and torch.compile takes each copy as an
input of one compiled graph (not a constant, and no recompilation per
copy).

    python -m unittest discover python/tests
"""

import os
import sys
import unittest
from types import SimpleNamespace
from unittest import mock

import torch

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "model")
)
import layer_bench  # noqa: E402
import llama_tp  # noqa: E402

D = 64


def namespace():
    """The fields of llama_tp.setup's namespace that the copies touch, at
    toy sizes (the shapes do not matter here)."""
    g = torch.Generator().manual_seed(0)

    def normal(*shape):
        return torch.randn(*shape, generator=g)

    w_gate, w_up = normal(D, 16), normal(D, 16)
    return SimpleNamespace(
        block="llama",
        shard=16,
        norm=1 + normal(D) * 0.1,
        w_gate=w_gate,
        w_up=w_up,
        w_down=normal(16, D),
        w_gate_up=torch.cat([w_gate, w_up], dim=1),
        w_gate_t=None,
        w_up_t=None,
        w_down_t=None,
        w_gate_up_t=None,
        w_o=normal(D, D),
    )


def hidden(c, x):
    """The block's SiLU(gate) * up of RMSNorm(x), as llama_tp.hidden (whose
    rms_norm is fixed to the Llama width)."""
    xn = torch.nn.functional.rms_norm(x, (D,), c.norm, 1e-5)
    gu = xn @ c.w_gate_up
    return torch.nn.functional.silu(gu[:, : c.shard]) * gu[:, c.shard :]


class WeightCopies(unittest.TestCase):
    def copies(self, count, extra=()):
        with mock.patch.dict(os.environ, {"LAYER_WEIGHT_COPIES": str(count)}):
            return llama_tp.weight_copies(namespace(), extra=extra)

    def test_three_unless_set(self):
        with mock.patch.dict(os.environ, {}, clear=True):
            self.assertEqual(llama_tp.weight_copy_count(), 3)

    def test_copies_are_distinct_tensors_of_equal_values_taken_in_turn(self):
        copies, next_copy = self.copies(3, extra=("w_o",))
        self.assertEqual(len(copies), 3)
        for name in ("norm", "w_gate", "w_up", "w_down", "w_gate_up", "w_o"):
            tensors = [getattr(c, name) for c in copies]
            self.assertEqual(len({t.data_ptr() for t in tensors}), 3, name)
            for t in tensors[1:]:
                self.assertTrue(torch.equal(t, tensors[0]), name)
        # What is not a weight is shared; absent weights stay absent.
        self.assertTrue(all(c.block == "llama" and c.w_gate_t is None for c in copies))
        self.assertEqual([next_copy() for _ in range(7)], [copies[i % 3] for i in range(7)])

    def test_one_copy_is_the_namespace_itself(self):
        copies, next_copy = self.copies(1)
        self.assertEqual(len(copies), 1)
        self.assertIs(next_copy(), copies[0])

    def test_a_count_that_is_not_a_whole_number_of_at_least_1_is_refused(self):
        for value in ("0", "-2", "three", ""):
            with mock.patch.dict(os.environ, {"LAYER_WEIGHT_COPIES": value}):
                with self.assertRaises(SystemExit) as refused:
                    llama_tp.weight_copy_count()
                self.assertIn("LAYER_WEIGHT_COPIES", str(refused.exception))

    def test_in_turn_calls_each_in_turn(self):
        calls = []
        call = layer_bench.in_turn([lambda i=i: calls.append(i) for i in range(3)])
        for _ in range(6):
            call()
        self.assertEqual(sorted(calls[:3]), [0, 1, 2])
        self.assertEqual(calls[:3], calls[3:])

    def test_torch_compile_takes_each_copy_as_an_input_of_one_graph(self):
        copies, next_copy = self.copies(3)
        x = torch.randn(4, D)
        compiles = []

        def counting(gm, example_inputs):
            compiles.append(gm)
            return gm

        variant = layer_bench.compiled_variant(
            "test-copies", lambda c, fused: hidden(c, x), next_copy, backend=counting
        )
        outputs = [variant() for _ in range(6)]
        self.assertEqual(len(compiles), 1)
        for got in outputs:
            self.assertTrue(torch.allclose(got, outputs[0]))
        # A copy's values are read at each call, not folded in at compile time.
        copies[1].w_gate_up.mul_(2)
        changed = [variant() for _ in range(3)]
        self.assertEqual(sum(not torch.allclose(got, outputs[0]) for got in changed), 1)
        self.assertEqual(len(compiles), 1)


if __name__ == "__main__":
    unittest.main()
