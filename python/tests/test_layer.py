"""EncoderLayer against torch.nn.TransformerEncoderLayer: outputs and every
gradient (f32 on the CPU module, f64 on the reference interpreter),
gradcheck, a 20-step SGD loop, a 4-layer stack, the errors, the cache."""

import os
import unittest

from common import (PARAMETERS, nn, relative_error, sluice, torch,
                    torch_gradients, torch_layer)

from sluice.torch_layer import _LayerFunction


def gradient_error(name, got, expected):
    """relative_error, except for d_bk: it is zero in exact arithmetic (a
    constant added to every key shifts each softmax row uniformly), a sum of
    cancelling terms, so it is measured against the size of d_bv."""
    if name == "bk":
        scale = max(float(expected["bv"].abs().max()), 1e-3)
        return float((got - expected["bk"]).abs().max()) / scale
    return relative_error(got, expected[name])


def compare(test, dtype, tolerance, **layer_options):
    """Runs y = layer(x) and sum(y * dy) backward in both and compares."""
    batch, seq = layer_options.pop("batch", 2), layer_options.pop("seq", 5)
    spec_options = layer_options.pop("spec_options", {})
    mask = layer_options.pop("mask", None)
    reference = torch_layer(dtype=dtype, **layer_options)
    layer = sluice.EncoderLayer.from_torch(reference, batch=batch, seq=seq,
                                           dtype=dtype, **spec_options)
    x = torch.randn(batch, seq, reference.self_attn.embed_dim, dtype=dtype)
    dy = torch.randn_like(x)
    xs = x.clone().requires_grad_()
    xt = x.clone().requires_grad_()
    y = layer(xs)
    yt = reference(xt, src_mask=mask) if mask is not None else reference(xt)
    test.assertLess(relative_error(y, yt), tolerance, "y")
    (y * dy).sum().backward()
    (yt * dy).sum().backward()
    test.assertLess(relative_error(xs.grad, xt.grad), tolerance, "d_x")
    expected = torch_gradients(reference)
    for name in PARAMETERS:
        with test.subTest(gradient=name):
            got = getattr(layer, name).grad
            test.assertEqual(got.shape, expected[name].shape)
            test.assertLess(gradient_error(name, got, expected), tolerance)
    return layer


class LayerMatchesTorch(unittest.TestCase):
    def test_f32_post_ln_gelu_cpu_module(self):
        layer = compare(self, torch.float32, 2e-5)
        self.assertTrue(layer.compiled.cpu_library)

    def test_f32_pre_ln_relu_causal_cpu_module(self):
        mask = nn.Transformer.generate_square_subsequent_mask(5)
        compare(self, torch.float32, 2e-5, activation="relu",
                norm_first=True, mask=mask, spec_options={"causal": True})

    def test_f64_reference_interpreter(self):
        compare(self, torch.float64, 1e-10, batch=2, seq=3, embed=8,
                ffn=12)

    def test_batch_first_false(self):
        reference = torch_layer()
        reference.self_attn.batch_first = False
        layer = sluice.EncoderLayer.from_torch(reference, batch=2, seq=5)
        x = torch.randn(5, 2, 16)
        self.assertLess(relative_error(layer(x), reference(x)), 2e-5)


class Gradcheck(unittest.TestCase):
    def test_gradcheck_f64(self):
        reference = torch_layer(embed=4, heads=2, ffn=4, dtype=torch.float64)
        layer = sluice.EncoderLayer.from_torch(reference, batch=1, seq=2,
                                               dtype=torch.float64)
        runner = layer._runner(True)
        params = [getattr(layer, n).detach().clone().requires_grad_()
                  for n in PARAMETERS]
        x = torch.randn(1, 2, 4, dtype=torch.float64, requires_grad=True)

        def f(x, *p):
            return _LayerFunction.apply(runner, 0, True, x, *p)

        # Every input along a random direction, then x and w1 element by
        # element.
        self.assertTrue(torch.autograd.gradcheck(f, (x, *params),
                                                 fast_mode=True))
        fixed = [p.detach() for p in params]
        w1 = PARAMETERS.index("w1")
        fixed[w1] = params[w1]
        self.assertTrue(torch.autograd.gradcheck(f, (x, *fixed)))


class Training(unittest.TestCase):
    def test_sgd_20_steps_match_torch(self):
        reference = torch_layer(embed=16, heads=4, ffn=48)
        layer = sluice.EncoderLayer.from_torch(reference, batch=3, seq=6)
        sgd_t = torch.optim.SGD(reference.parameters(), lr=0.05)
        sgd_s = torch.optim.SGD(layer.parameters(), lr=0.05)
        torch.manual_seed(1)
        x = torch.randn(3, 6, 16)
        target = torch.randn(3, 6, 16)
        for step in range(20):
            losses = []
            for model, sgd in ((reference, sgd_t), (layer, sgd_s)):
                sgd.zero_grad()
                loss = nn.functional.mse_loss(model(x), target)
                loss.backward()
                sgd.step()
                losses.append(float(loss))
            self.assertLess(abs(losses[0] - losses[1]) / losses[0], 1e-5,
                            "step %d: torch %r, sluice %r" %
                            (step, losses[0], losses[1]))
        self.assertLess(losses[0], first_loss(reference, x, target) * 2)


def first_loss(model, x, target):
    with torch.no_grad():
        return float(nn.functional.mse_loss(model(x), target))


class Stack(unittest.TestCase):
    def test_four_layers_match_torch_and_share_one_module(self):
        torch.manual_seed(3)
        encoder = nn.TransformerEncoder(torch_layer(), num_layers=4)
        for index, layer in enumerate(encoder.layers):
            with torch.no_grad():
                for p in layer.parameters():
                    p.add_(0.05 * torch.randn_like(p))
        stack = sluice.from_torch_encoder(encoder, batch=2, seq=5)
        modules = {id(layer._runner(True).module) for layer in stack}
        self.assertEqual(len(modules), 1)
        x = torch.randn(2, 5, 16)
        xs, xt = x.clone().requires_grad_(), x.clone().requires_grad_()
        module = stack[0]._runner(True).module
        created = module.contexts_created
        y, yt = stack(xs), encoder(xt)
        self.assertLess(relative_error(y, yt), 5e-5)
        # In flight: each layer's context holds its saved region; the four
        # share one scratch region.
        self.assertEqual(module.abi_version, 2)
        self.assertGreater(module.saved_bytes, 0)
        self.assertGreater(module.scratch_bytes, 0)
        memory = module.memory()
        self.assertGreaterEqual(memory["contexts"], max(created, 4))
        self.assertEqual(memory["scratch_bytes"], module.scratch_bytes)
        self.assertEqual(memory["total_bytes"],
                         memory["contexts"] * module.saved_bytes +
                         module.scratch_bytes)
        shared = 4 * module.saved_bytes + module.scratch_bytes
        unshared = 4 * (module.saved_bytes + module.scratch_bytes)
        print("4-layer stack: contexts %d x saved %d + scratch %d = %d bytes "
              "(unshared %d)" % (4, module.saved_bytes, module.scratch_bytes,
                                 shared, unshared))
        self.assertLess(shared, unshared)
        # sluice.memory reads the same sizes from the emitted module.
        spec = dict(stack[0].spec, training=True)
        layout = sluice.memory.module_layout(spec, backend="cpp")
        self.assertEqual((layout["saved_bytes"], layout["scratch_bytes"]),
                         (module.saved_bytes, module.scratch_bytes))
        step = sluice.memory.training_step_memory(spec, 4, backend="cpp")
        self.assertEqual(step["contexts_shared"], shared)
        self.assertEqual(step["contexts_unshared"], unshared)
        params = sum(p.numel() * 4 for p in stack[0].parameters())
        self.assertEqual(step["parameters"], 4 * params)
        self.assertEqual(step["activations"], 5 * x.numel() * 4)
        dy = torch.randn_like(y)
        (y * dy).sum().backward()
        (yt * dy).sum().backward()
        self.assertLess(relative_error(xs.grad, xt.grad), 5e-5)
        for index, (ours, theirs) in enumerate(zip(stack, encoder.layers)):
            expected = torch_gradients(theirs)
            for name in PARAMETERS:
                with self.subTest(layer=index, gradient=name):
                    self.assertLess(gradient_error(
                        name, getattr(ours, name).grad, expected), 5e-5)
        # Training: one context per layer in flight, given back after its
        # backward, all on the module's one scratch; inference reuses a
        # free one.
        free = module._free["cpu"]
        self.assertGreaterEqual(len(free), 4)
        self.assertTrue(all(c.scratch is module.scratch() for c in free))
        created = module.contexts_created
        with torch.no_grad():
            stack(x)
        self.assertEqual(module.contexts_created, created)


class Errors(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.layer = sluice.EncoderLayer.from_torch(torch_layer(), batch=2,
                                                   seq=5)

    def test_wrong_shape(self):
        with self.assertRaisesRegex(sluice.SluiceError,
                                    r"input has shape \(2, 6, 16\); this "
                                    r"layer is compiled for \(2, 5, 16\)"):
            self.layer(torch.randn(2, 6, 16))

    def test_wrong_dtype(self):
        with self.assertRaisesRegex(sluice.SluiceError,
                                    "input has dtype torch.float64; this "
                                    "layer is compiled for torch.float32"):
            self.layer(torch.randn(2, 5, 16, dtype=torch.float64))

    def test_wrong_device(self):
        with self.assertRaisesRegex(sluice.SluiceError,
                                    "input is on meta; this layer runs on "
                                    "cpu"):
            self.layer(torch.empty(2, 5, 16, device="meta"))

    def test_parameter_moved_to_another_dtype(self):
        layer = sluice.EncoderLayer.from_torch(torch_layer(), batch=2, seq=5)
        layer.wq.data = layer.wq.data.double()
        with self.assertRaisesRegex(sluice.SluiceError,
                                    "parameter 'wq' is torch.float64"):
            layer(torch.randn(2, 5, 16))

    def test_masks_are_refused(self):
        with self.assertRaisesRegex(sluice.SluiceError, "causal=True"):
            self.layer(torch.randn(2, 5, 16), src_mask=torch.zeros(5, 5))

    def test_not_a_tensor(self):
        with self.assertRaisesRegex(sluice.SluiceError,
                                    "expected a torch.Tensor input, got "
                                    "list"):
            self.layer([1.0])

    def test_inference_layer_has_no_backward(self):
        layer = sluice.EncoderLayer.from_torch(torch_layer(), batch=2, seq=5,
                                               training=False)
        with torch.no_grad():
            layer(torch.randn(2, 5, 16))
        with self.assertRaisesRegex(sluice.SluiceError,
                                    "compiled for inference"):
            layer(torch.randn(2, 5, 16, requires_grad=True))

    def test_one_backward_per_forward(self):
        y = self.layer(torch.randn(2, 5, 16, requires_grad=True)).sum()
        y.backward(retain_graph=True)
        with self.assertRaisesRegex(sluice.SluiceError,
                                    "one backward per forward"):
            y.backward()

    def test_bad_spec_names_the_field(self):
        with self.assertRaisesRegex(sluice.SluiceError,
                                    "field 'activation': unknown value "
                                    "\"swish\""):
            sluice.EncoderLayer.from_torch(torch_layer(), batch=2, seq=5,
                                           activation="swish")

    def test_not_an_encoder_layer(self):
        with self.assertRaisesRegex(sluice.SluiceError,
                                    "expected a torch.nn."
                                    "TransformerEncoderLayer, got Linear"):
            sluice.EncoderLayer.from_torch(nn.Linear(2, 2), batch=1, seq=1)


class CompileAndReport(unittest.TestCase):
    SPEC = {"name": "py_tiny", "dims": {"batch": 2, "seq": 4, "heads": 2,
                                        "embed": 8, "ffn": 16},
            "dtype": "f32", "training": False}

    def test_compile_is_cached_by_spec(self):
        first = sluice.compile_spec(self.SPEC)
        stamp = os.stat(first.directory).st_mtime_ns
        second = sluice.compile_spec(dict(self.SPEC))
        self.assertEqual(first.directory, second.directory)
        self.assertEqual(os.stat(second.directory).st_mtime_ns, stamp)
        self.assertTrue(os.path.exists(first.cpu_library))
        other = sluice.compile_spec(dict(self.SPEC, activation="relu"))
        self.assertNotEqual(other.directory, first.directory)

    def test_report_is_a_dict(self):
        report = sluice.report(self.SPEC)
        self.assertEqual(report["name"], "py_tiny")
        self.assertTrue(report["ops"])
        self.assertIn("totals", report)

    def test_spec_dict_layer(self):
        layer = sluice.EncoderLayer(dict(self.SPEC, training=True))
        self.assertEqual(layer.wq.shape, (8, 8))
        self.assertEqual(layer.w1.shape, (16, 8))
        y = layer(torch.randn(2, 4, 8))
        self.assertEqual(y.shape, (2, 4, 8))

    def test_prebuilt_directory_needs_no_sluicec(self):
        reference = torch_layer()
        compiled = sluice.compile_spec(sluice.spec_from_torch(reference, 2, 5))
        saved = os.environ.get("SLUICE_SLUICEC")
        os.environ["SLUICE_SLUICEC"] = "/nonexistent/sluicec"
        try:
            layer = sluice.EncoderLayer.from_torch(
                reference, batch=2, seq=5, compiled=compiled.directory)
            x = torch.randn(2, 5, 16)
            self.assertLess(relative_error(layer(x), reference(x)), 2e-5)
            with self.assertRaisesRegex(sluice.SluiceError,
                                        "was compiled for dims="):
                sluice.EncoderLayer.from_torch(
                    reference, batch=3, seq=5, compiled=compiled.directory)
            with self.assertRaisesRegex(sluice.SluiceError,
                                        "SLUICE_SLUICEC is "):
                sluice.EncoderLayer.from_torch(reference, batch=3, seq=5)
        finally:
            if saved is None:
                del os.environ["SLUICE_SLUICEC"]
            else:
                os.environ["SLUICE_SLUICEC"] = saved

    def test_bad_json(self):
        with self.assertRaisesRegex(sluice.SluiceError, "invalid JSON"):
            sluice.compile_spec("{not json")


if __name__ == "__main__":
    unittest.main()
