"""Put the Hopper Gluon kernels of other projects where ``peer_gluon_gpu.py hopper`` reads them.

    python benchmarks/harness/carry_hopper_sources.py --mirrors /work/.mirror      # write them (owner+name/repo)
    python benchmarks/harness/carry_hopper_sources.py --from-git lmdeploy=/path/to/lmdeploy/.git ...
    python benchmarks/harness/carry_hopper_sources.py                              # check what is there

The MANIFEST is ``SOURCES`` below: per project its repository, the pinned commit, its license and
the git blob hash of every file taken (each kernel file unmodified, with its license header where
it has one, and the repository's LICENSE beside it).  Like the other carried sources
(``carry_peer_gluon.py``, ``carry_gluon_tutorials.py``) the files are not part of this repository:
the workplace keeps code fetched from other projects out of commits.  Each is read from a git
repository of its project that has the pinned commit (``git show <commit>:<path>``), checked
against its blob hash and written to ``.peer-tests/<project>/<path>`` (git-ignored; every file is
under 50 KiB; name ``.peer-tests`` in the device tool's ``carry``).  Triton's own Hopper tutorials
come from ``carry_gluon_tutorials.py`` (``.peer-tests/triton/python/tutorials/gluon/``, triton
v3.6.0, MIT).  Exit status 1 when something is missing or differs.

* ``flagdnn``: FlagOS's FlagDNN (Apache-2.0), ``backends/nvidia/kernels/matmul_sm90.py``: its SM90
  Gluon matmuls (persistent TMA + wgmma pipeline, warp-specialized load/MMA/store partitions, an
  FP8 variant that transposes B through registers).  The file at the pinned commit holds only the
  kernels; their Python launcher (``run_sm90_matmul``), configurations and tests are at commit
  ``4a364b91`` (``src/flag_dnn/runtime/backend/_nvidia/ops/matmul_sm90_gluon.py``, 52 KB: the same
  kernels, byte for byte, plus the launcher), which ``hopper_cases.py`` follows.
* ``lmdeploy``: InternLM's LMDeploy (Apache-2.0),
  ``lmdeploy/pytorch/kernels/cuda/blocked_fp8_gemm_gluon.py``: a blocked-FP8 GEMM for Hopper in
  three schedules (single partition, warp-specialized, persistent warp-specialized) with its own
  launcher; its test ``tests/pytorch/kernel/test_blocked_fp8_gemm_gluon.py``.
* ``gpt-oss-gluon``: Paroxysmisch/gpt-oss-gluon (Apache-2.0, a fork of openai/gpt-oss that adds the
  kernel), ``gpt_oss/triton/attention_gluon.py``: a TMA + wgmma attention forward with sinks and
  sliding windows, its launcher in the same file and its benchmark ``gpt_oss/triton/bench_attention.py``.
"""

from __future__ import annotations

import os
import sys

if __package__:                 # imported as harness.carry_hopper_sources
    from .carry_peer_gluon import Source, carry_command, check_source
else:                           # run as a command: its own folder, harness/, is first on the path
    from carry_peer_gluon import Source, carry_command, check_source

SOURCES = (
    Source("flagdnn", "flagos-ai/FlagDNN", "c56a33ae403e756e6a436db8efecc658df303897", "Apache-2.0",
           files={"backends/nvidia/kernels/matmul_sm90.py": "363130a29c3b2c75056b14278e1e5d0a2b9c944f",
                  "LICENSE": "261eeb9e9f8b2b4b0d119366dda99c6fd7d35c64"}),
    Source("lmdeploy", "InternLM/lmdeploy", "1263d5cd889b7ad500e85b8eb20401327a4516ab", "Apache-2.0",
           files={"lmdeploy/pytorch/kernels/cuda/blocked_fp8_gemm_gluon.py": "37edb519be3398caf350308fbac773758ce2a4be",
                  "LICENSE": "3158cead24b65a3dbebf44b312226ad082a828cc"}),
    Source("gpt-oss-gluon", "Paroxysmisch/gpt-oss-gluon", "0e96aa93fa201649481a0fb063d61c648cee6531", "Apache-2.0",
           files={"gpt_oss/triton/attention_gluon.py": "c35a105b054750d97e0a2fd0697fe045f628bad2",
                  "LICENSE": "d645695673349e3947e8e5ae42332d0ac3164cd7"}),
)


def source_named(project: str) -> Source:
    return next(s for s in SOURCES if s.project == project)


def carried_path(project: str, path: str) -> str:
    """Where ``path`` of ``project`` lies once carried."""
    return os.path.join(source_named(project).folder, path)


def why_not_carried(project: str) -> str | None:
    """None when ``project`` is carried as pinned; else why not (a row of the harness's table)."""
    problems = check_source(source_named(project))
    return None if not problems else f"{project} not carried as pinned ({problems[0]})"


def main(argv=None) -> int:
    return carry_command(SOURCES, argv, __doc__, "carry_hopper_sources")


if __name__ == "__main__":
    sys.exit(main())
