"""bench/model's LAYER_WIDTHS and LAYER_ORDER on the CPU: the benches time another model's
MLP block at its hidden size D and whole MLP width F, so a malformed value
must stop them rather than time Llama-3-8B's block under another name.

    python -m unittest discover python/tests
"""

import os
import sys
import unittest

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "model")
)
import llama_tp  # noqa: E402


class LayerWidths(unittest.TestCase):
    def test_llama_3_8b_unless_set(self):
        self.assertEqual(llama_tp.layer_widths(""), (4096, 14336))

    def test_another_models_widths(self):
        self.assertEqual(llama_tp.layer_widths("6656,17920"), (6656, 17920))

    def test_malformed_widths_are_refused(self):
        for text in ("4096", "4096,", "4096,0", "4096,-8", "4096x14336", "a,b", "1,2,3"):
            with self.subTest(text=text), self.assertRaises(SystemExit) as refused:
                llama_tp.layer_widths(text)
            self.assertIn("LAYER_WIDTHS", str(refused.exception))


class LayerOrder(unittest.TestCase):
    def test_torch_first_unless_set(self):
        self.assertFalse(llama_tp.ours_first(""))
        self.assertFalse(llama_tp.ours_first("torch_first"))
        self.assertTrue(llama_tp.ours_first("symm_first"))

    def test_another_order_is_refused(self):
        for text in ("ours_first", "symm", "SYMM_FIRST"):
            with self.subTest(text=text), self.assertRaises(SystemExit) as refused:
                llama_tp.ours_first(text)
            self.assertIn("LAYER_ORDER", str(refused.exception))


if __name__ == "__main__":
    unittest.main()
