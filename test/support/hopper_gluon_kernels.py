"""The Hopper-class Gluon kernels the tests compile (TMA, mbarrier, wgmma, persistent loops,
their epilogues), each in an expert and an automatic form.

Their home is ``benchmarks/harness/hopper_kernels.py``: ``benchmarks/peer_gluon_gpu.py hopper`` times
them on a GPU, and a benchmark imports nothing of ``test/``.  This module is that one, under the
name the tests import (``from support import hopper_gluon_kernels as H``)."""

import sys

from support import REPO

if str(REPO / "benchmarks") not in sys.path:
    sys.path.insert(0, str(REPO / "benchmarks"))

from harness import hopper_kernels  # noqa: E402

sys.modules[__name__] = hopper_kernels
