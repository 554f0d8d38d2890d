"""The symm package on the CPU: packaging, op registration, torch.compile
tracing, argument errors. Needs symm-compile ($SYMM_COMPILE) and the
runtime library (bundled by pip install, or $SYMM_RUNTIME_LIB); no GPU.
The GPU run is python/examples/torch_compile_mlp.py on the device.

    SYMM_COMPILE=target/debug/symm-compile python -m unittest discover python/tests
"""

import os
import tempfile
import unittest

import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx

import symm

HERE = os.path.dirname(os.path.abspath(__file__))
SCALE = os.path.join(HERE, "data", "scale.mlir")


def _library():
    if not hasattr(_library, "cached"):
        out = tempfile.mkdtemp(prefix="symm-test-")
        _library.cached = symm.compile(SCALE, out_dir=out, name="test_scale")
    return _library.cached


class Packaging(unittest.TestCase):
    def test_the_runtime_library_is_found(self):
        path = symm.runtime_library_path()
        self.assertTrue(os.path.isfile(path), path)

    @unittest.skipUnless(os.environ.get("SYMM_TEST_INSTALLED"), "not a pip-installed package")
    def test_pip_bundled_the_runtime_under_its_soname(self):
        lib = os.path.join(os.path.dirname(symm.__file__), "lib")
        names = sorted(os.listdir(lib))
        self.assertIn("libsymm_runtime.so", names)
        self.assertTrue(any(n.startswith("libsymm_runtime.so.") for n in names), names)
        self.assertEqual(symm.runtime_library_path(), os.path.join(lib, "libsymm_runtime.so"))


class Compile(unittest.TestCase):
    def test_compile_links_a_library_and_registers_its_ops(self):
        library = _library()
        self.assertTrue(os.path.isfile(library.path))
        self.assertEqual(list(library.entries), ["scale"])
        op = torch.ops.symm.test_scale_scale
        self.assertIs(library.scale.op, op)
        schema = str(op.default._schema)
        self.assertIn("Tensor arg0, Tensor arg1, Tensor(a!) arg2", schema)

    def test_a_program_that_does_not_compile_raises(self):
        with tempfile.TemporaryDirectory() as out:
            bad = os.path.join(out, "bad.mlir")
            with open(bad, "w") as file:
                file.write("func.func @f(\n")
            with self.assertRaisesRegex(ValueError, r"bad.mlir does not compile:\n.*error"):
                symm.compile(bad, out_dir=out)

    def test_a_missing_compiler_says_what_to_install_or_set(self):
        saved = os.environ.get("SYMM_COMPILE")
        os.environ["SYMM_COMPILE"] = "/nonexistent/symm-compile"
        try:
            with self.assertRaises(FileNotFoundError):
                symm.compile(SCALE, out_dir=tempfile.mkdtemp())
        finally:
            os.environ["SYMM_COMPILE"] = saved

    def test_loading_the_same_name_from_another_library_is_refused(self):
        library = _library()
        with tempfile.TemporaryDirectory() as out:
            other = os.path.join(out, "libother.so")
            with open(other, "wb") as copy, open(library.path, "rb") as original:
                copy.write(original.read())
            json = os.path.join(os.path.dirname(library.path), "test_scale.json")
            with self.assertRaisesRegex(ValueError, "already"):
                symm.load(other, json, name="test_scale")


class Tracing(unittest.TestCase):
    """What torch.compile sees: the fake implementation, one op, no break."""

    def setUp(self):
        self.library = _library()

    def test_the_fake_implementation_checks_shapes(self):
        with FakeTensorMode():
            x = torch.empty(16, 64, dtype=torch.bfloat16)
            w = torch.empty(64, dtype=torch.bfloat16)
            y = torch.empty(16, 64, dtype=torch.bfloat16)
            torch.ops.symm.test_scale_scale(x, w, y)
            with self.assertRaisesRegex(ValueError, "arg1 .* must have shape \\(64\\)"):
                torch.ops.symm.test_scale_scale(x, torch.empty(32, dtype=torch.bfloat16), y)

    def test_make_fx_traces_one_op(self):
        def f(x, w):
            y = torch.empty_like(x)
            self.library.scale(x, w, y)
            return y * 2

        x = torch.empty(16, 64, dtype=torch.bfloat16, device="meta")
        w = torch.empty(64, dtype=torch.bfloat16, device="meta")
        graph = make_fx(f, tracing_mode="fake")(x, w)
        targets = [str(node.target) for node in graph.graph.nodes if node.op == "call_function"]
        self.assertIn("symm.test_scale_scale.default", targets)

    def test_torch_compile_fullgraph_has_no_graph_break(self):
        captured = []

        def backend(graph_module, example_inputs):
            captured.append(graph_module)
            return lambda *args: (torch.zeros(1),)

        def model(x, w):
            y = torch.empty_like(x)
            self.library.scale(x, w, y)
            return (y.float() + 1,)

        compiled = torch.compile(model, fullgraph=True, backend=backend, dynamic=True)
        x = torch.empty(16, 64, dtype=torch.bfloat16)
        w = torch.empty(64, dtype=torch.bfloat16)
        compiled(x, w)
        self.assertEqual(len(captured), 1)
        code = captured[0].code
        self.assertIn("torch.ops.symm.test_scale_scale", code)


class Arguments(unittest.TestCase):
    """A wrong call raises before anything runs, naming the argument."""

    def setUp(self):
        self.scale = _library().scale
        self.x = torch.zeros(16, 64, dtype=torch.bfloat16)
        self.w = torch.zeros(64, dtype=torch.bfloat16)
        self.y = torch.zeros(16, 64, dtype=torch.bfloat16)

    def test_count(self):
        with self.assertRaisesRegex(TypeError, r"scale\(arg0, arg1, arg2\) takes 3 arguments, got 2"):
            self.scale(self.x, self.w)

    def test_type(self):
        with self.assertRaisesRegex(TypeError, "argument arg1 .* must be a torch.Tensor, got int"):
            self.scale(self.x, 3, self.y)

    def test_dtype(self):
        with self.assertRaisesRegex(TypeError, "argument arg0 .* must be torch.bfloat16, got torch.float32"):
            self.scale(self.x.float(), self.w, self.y)

    def test_shape(self):
        with self.assertRaisesRegex(ValueError, r"argument arg2 .* must have shape \(tokens, 64\), got \(16, 32\)"):
            self.scale(self.x, self.w, torch.zeros(16, 32, dtype=torch.bfloat16))
        with self.assertRaisesRegex(ValueError, "must have 2 dimensions"):
            self.scale(self.x, self.w, torch.zeros(1024, dtype=torch.bfloat16))

    def test_token_counts_agree_and_fit(self):
        with self.assertRaisesRegex(ValueError, "arg2 .* has 8 rows, but arg0 has 16"):
            self.scale(self.x, self.w, torch.zeros(8, 64, dtype=torch.bfloat16))
        big = torch.zeros(129, 64, dtype=torch.bfloat16)
        with self.assertRaisesRegex(ValueError, "129 tokens .* above the 128 it was compiled for"):
            self.scale(big, self.w, big.clone())
        empty = torch.zeros(0, 64, dtype=torch.bfloat16)
        with self.assertRaisesRegex(ValueError, "at least 1"):
            self.scale(empty, self.w, empty.clone())

    def test_device(self):
        with self.assertRaisesRegex(ValueError, "argument arg0 .* must be on a CUDA device, got cpu"):
            self.scale(self.x, self.w, self.y)


class Scalars(unittest.TestCase):
    """Scalar arguments: in the op's schema by their type, checked by it."""

    @classmethod
    def setUpClass(cls):
        out = tempfile.mkdtemp(prefix="symm-test-")
        cls.library = symm.compile(os.path.join(HERE, "data", "scalars.mlir"), out_dir=out, name="test_scalars")

    def test_schema(self):
        schema = str(torch.ops.symm.test_scalars_axpn.default._schema)
        self.assertIn("Tensor arg0, float arg1, int arg2, Tensor(a!) arg3", schema)

    def test_scalar_types(self):
        x = torch.zeros(64)
        with self.assertRaisesRegex(TypeError, "argument arg2 .* must be int, got float"):
            self.library.axpn(x, 2.0, 1.5, x.clone())
        with self.assertRaisesRegex(TypeError, "argument arg2 .* must be int, got bool"):
            self.library.axpn(x, 2.0, True, x.clone())
        with self.assertRaisesRegex(TypeError, "argument arg1 .* must be float, got str"):
            self.library.axpn(x, "2", 1, x.clone())
        # An int is a float; the call then fails only where the tensors are.
        with self.assertRaisesRegex(ValueError, "must be on a CUDA device"):
            self.library.axpn(x, 2, 1, x.clone())


if __name__ == "__main__":
    unittest.main()


class PreparedArguments(unittest.TestCase):
    """`Layer.prepare`'s calls check that no prepared tensor's storage moved
    (the pointer the entry point would get): found by `moved_argument`."""

    def test_a_resized_tensor_is_found(self):
        from symm.runtime import moved_argument

        x, w = torch.zeros(4, 8), torch.zeros(8)
        pointers = [(1, x, x.data_ptr()), (3, w, w.data_ptr())]
        self.assertIsNone(moved_argument(pointers))
        w.resize_(1 << 20)
        self.assertEqual(moved_argument(pointers), 3)

    def test_a_swapped_storage_is_found(self):
        from symm.runtime import moved_argument

        x = torch.zeros(4, 8)
        pointers = [(0, x, x.data_ptr())]
        x.set_(torch.ones(4, 8))
        self.assertEqual(moved_argument(pointers), 0)
