"""The port: a ``@triton.jit`` kernel rewritten as a Gluon module whose layouts are written out.

``linear_layouts.port(kernel, target=..., **launch)`` (``tools/port/command.py`` is its command)
reads what Triton's own compile of the kernel chose and writes the same kernel in Gluon:

* :mod:`.launch`       - the launch a port is made for (target, warps, stages, argument types, constexprs);
* :mod:`.original`     - Triton's compile of the original: every op's layout by source location;
* :mod:`.translation`  - the kernel's source, edited in place (:mod:`.text_edits`): ``tl`` becomes ``gl``;
* :mod:`.gluon_build`  - the edited kernel built by Gluon's own front end, which says where layouts meet
  and differ (a conversion goes there) and which automatic layouts are left to fix;
* :mod:`.matmul`       - ``tl.dot`` as the target's matrix instruction (wgmma, mma.sync, tcgen05, MFMA);
* :mod:`.layouts`      - each layout as the Gluon expression an author writes, and a named one;
* :mod:`.check`        - the port compiled for the target and read back against the original;
* :mod:`.comparison`   - Triton's compile, Triton's translator (:mod:`.triton_translator`) and the port,
  priced alike, for the report (``tools/port/report.py``);
* :mod:`.module_file`  - generated text loaded as a module (Gluon reads a kernel's source from its file);
* :mod:`.port`         - the whole port, entered through :func:`port`.

Nothing in ``passes/`` or below imports this folder (the commands in ``tools/`` do): it uses the
IR layer, the advice's layout expressions and the cost model, and they do not know it exists.
"""

# (``port`` is imported from ``.port`` by the package root.)
