"""What the benchmark scripts share; nothing here measures on its own.

A script runs as ``python benchmarks/<name>.py``, which puts ``benchmarks/`` first on the path,
and imports these as ``harness.<module>``; a module of this folder that runs in a child process
runs as ``python -m harness.<module>`` from ``benchmarks/`` (``common.module_command``).  The
scripts measure the installed ``linear_layouts`` (a clone: ``make`` or ``pip install -e .``; the
GPU machine: the project's wheel, ``pip install --no-deps``); nothing here adds to ``sys.path``.

* ``common``: ``require_package`` (the installed package, or one line saying how to install it),
  ``module_command``, ``geomean``, ``publish``.
* ``skeleton``: the one shape of a harness (shared options ``--out``, ``--dry-run``, ``--rounds``,
  ``--jobs``, ``--seed``; its cases, the run, the summary; the GPU or the dry run's target found
  once); ``fuzz_gpu.py``, ``gpu_conversions.py``, ``local_load_gpu.py``, ``assign_fuzz_gpu.py``,
  ``conversions.py``, ``gluon_forms_gpu.py``, ``peer_gluon_gpu.py``, ``paper_kernels.py`` and
  ``plan_choice.py`` are written in it, and the modules ``calibrate`` and ``gluon_matmul`` here.
* ``mode_rounds``: each mode of a script in a fresh process with its own Triton cache, the order
  rotated over rounds.
* ``op_rounds``: whole third-party ops, forward + backward, stock against ``enable()``, each
  (op, mode, round) in a fresh process, the modes reversed on odd rounds; the timing, the
  bit-exactness check and the report's table (``fla_ops_gpu.py``, ``liger_ops_gpu.py``).
* ``conversion_cases``: the conversions the choice harnesses time (the corpus's, Liger-Kernel's)
  and the kernel ``conversions.py`` times one in.
* ``plan_contexts``: the contexts ``plan_choice.py --fresh/--train`` times conversions in
  (dependent round-trip chains, full grid, one program per SM) and the fresh draws.
* ``fit_choice``: the choice model fitted to ``--train`` runs, run as ``plan_choice.py fit``.
* ``calibrate``: the cost model's constants, each instruction class it counts alone in a loop on
  the GPU (checked in the SASS) and the fit, run as ``plan_choice.py calibrate``.
* ``stock_shared_oracle``: stock's shared-memory instructions as ``lowering/choosing/stock_shared.py``
  predicts them, against Triton's PTX (CPU, triton 3.6), run as ``plan_choice.py stock-shared``.
* ``compile_time_fuzz``: compile time of random large-register conversions, run as
  ``compile_time.py fuzz`` (each mode in a fresh process of this module).
* ``compile_time_corpus``: compile time of Liger-Kernel's TTGIR files (or the held-out
  flash-linear-attention corpus, ``--corpus``), run as ``compile_time.py corpus``; its clocks (``PluginClock``, ``cpu_seconds``) serve ``compile_time.py``.
* ``compile_time_pruning``: the guard-barrier pruning alone on those corpora's LLVM IR, against
  an older copy of its module, run as ``compile_time.py prune``.
* ``gluon_modes``: the modes both Gluon harnesses time (form compiled, plugin on or off).
* ``quiet_compile``: the Gluon dry runs' compile for sm_90 on the CPU (warnings silenced, MLIR's
  diagnostics captured, a failure returned), the failure as one line, the PTX's memory accesses.
* ``gluon_auto_suite``: ``gluon_forms_gpu.py kernels``, four kernels of our own in every form,
  each mode in its own process; ``gluon_auto_kernels``: those kernels and their forms.
* ``gluon_forms``, ``gluon_forms_cases``, ``gluon_forms_builtin``: for ``gluon_forms_gpu.py``, the
  rule that writes a file's auto and newcomer forms, which tutorial kernels are taken, and our
  two built-in kernels.
* ``gluon_matmul``: ``gluon_forms_gpu.py matmul``, an expert's Gluon ``mma_v2`` matmul stock, with
  ``enable()`` and with inline-PTX shared accesses, each mode in its own process (of this module);
  ``gluon_matmul_kernel``: that kernel, a file of its own so that ``peer_gluon_forms.load_kernels``
  can write its automatic form.
* ``peer_gluon_forms``, ``peer_gluon_cases``: for ``peer_gluon_gpu.py``, the automatic form's rule
  and the kernels-only source of another project's file, and which of its kernels are taken and
  how each is launched.
* ``hopper_gluon``: ``peer_gluon_gpu.py hopper``, Hopper-class Gluon kernels in every mode in one
  process, the expert's own binary timed again as a mode (the A/A run).
* ``hopper_kernels``, ``hopper_cases``: for ``hopper_gluon``, our Hopper-class Gluon kernels
  (TMA, mbarrier, wgmma, persistent loops and their epilogues; the tests compile them too, as
  ``support.hopper_gluon_kernels``) and the cases of others: Triton's Hopper tutorials and the
  Hopper kernels of other projects, their automatic form and how each is launched.

Two commands keep the harnesses' inputs and outputs:

* ``python benchmarks/harness/carry_gluon_tutorials.py [--from-git DIR]``: Triton's Gluon
  tutorials (not committed) into ``.peer-tests/``, checked against their blob hashes;
* ``python benchmarks/harness/carry_peer_gluon.py [--mirrors DIR | --from-git PROJECT=DIR]``: the
  Gluon kernels of other projects (flash-linear-attention, triton-viz; not committed) into
  ``.peer-tests/``, checked against their blob and tree hashes;
* ``python benchmarks/harness/carry_hopper_sources.py [--mirrors DIR]``: the Hopper Gluon kernels
  ``hopper_cases`` launches (FlagDNN, LMDeploy, gpt-oss-gluon; not committed) into ``.peer-tests/``,
  checked against the MANIFEST's commits and blob hashes;
* ``python benchmarks/harness/regenerate_results.py [--restore NAME]``: the raw result files taken
  out of ``benchmarks/results`` (to keep it small), the command that writes each, and restoring
  one from git history (the list itself: ``harness/removed_results.jsonl``, one file a line).

Nothing here imports a script one folder up: the scripts import these.
* ``port_corpus``: the port benchmark's corpus (``port_gpu.py``): 43 third-party Triton kernels carried
  in ``benchmarks/port_corpus/``, each with one realistic launch.
"""
