"""A Sluice layer inside torch.nn.parallel.DistributedDataParallel: two
processes (gloo, CPU module) on halves of a batch; after one step their
averaged gradients equal one process's on the whole batch."""

import os
import tempfile
import unittest

from common import PARAMETERS, sluice, torch, torch_layer

import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F

WORLD = 2
BATCH = 2  # per process


def data():
    generator = torch.Generator().manual_seed(7)
    x = torch.randn(WORLD * BATCH, 5, 16, generator=generator)
    target = torch.randn(WORLD * BATCH, 5, 16, generator=generator)
    return x, target


def worker(rank, init_file, out_dir, cache_dir):
    os.environ["SLUICE_CACHE_DIR"] = cache_dir
    dist.init_process_group("gloo", init_method="file://" + init_file,
                            rank=rank, world_size=WORLD)
    layer = sluice.EncoderLayer.from_torch(torch_layer(), batch=BATCH, seq=5)
    model = torch.nn.parallel.DistributedDataParallel(layer)
    x, target = data()
    part = slice(rank * BATCH, (rank + 1) * BATCH)
    loss = F.mse_loss(model(x[part]), target[part])
    loss.backward()
    torch.save({n: getattr(layer, n).grad for n in PARAMETERS},
               os.path.join(out_dir, "grads%d.pt" % rank))
    dist.destroy_process_group()


class DistributedDataParallel(unittest.TestCase):
    def test_two_processes_equal_one_on_the_whole_batch(self):
        cache_dir = os.environ.get("SLUICE_CACHE_DIR") or tempfile.mkdtemp()
        # Compile both specs up front so the workers only load them.
        sluice.EncoderLayer.from_torch(torch_layer(), batch=BATCH, seq=5)
        with tempfile.TemporaryDirectory() as work:
            mp.spawn(worker, args=(os.path.join(work, "init"), work,
                                   cache_dir), nprocs=WORLD, join=True)
            grads = [torch.load(os.path.join(work, "grads%d.pt" % r))
                     for r in range(WORLD)]
        whole = sluice.EncoderLayer.from_torch(torch_layer(),
                                               batch=WORLD * BATCH, seq=5)
        x, target = data()
        F.mse_loss(whole(x), target).backward()
        for name in PARAMETERS:
            with self.subTest(gradient=name):
                # DDP averaged the gradients: every rank holds the same.
                self.assertTrue(torch.equal(grads[0][name], grads[1][name]))
                expected = getattr(whole, name).grad
                scale_name = "bv" if name == "bk" else name  # see test_layer
                scale = max(float(getattr(whole, scale_name).grad.abs()
                                  .max()), 1e-3)
                error = float((grads[0][name] - expected).abs().max())
                self.assertLess(error / scale, 1e-5)


if __name__ == "__main__":
    unittest.main()
