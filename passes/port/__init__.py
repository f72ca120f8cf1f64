"""The port: a ``@triton.jit`` kernel rewritten as a Gluon module whose layouts are written out.

``linear_layouts.port(kernel, target=..., **launch)`` (``tools/port_command.py`` is its command)
reads what Triton's own compile of the kernel chose and writes the same kernel in Gluon:

* :mod:`.launch`       - the launch a port is made for (target, warps, stages, argument types, constexprs);
* :mod:`.original`     - Triton's compile of the original: every op's layout by source location;
* :mod:`.translation`  - the kernel's source, edited in place: ``tl`` becomes ``gl``, layouts are named;
* :mod:`.gluon_build`  - the edited kernel built by Gluon's own front end, which says where layouts meet
  and differ (a conversion goes there) and which automatic layouts are left to fix;
* :mod:`.matmul`       - ``tl.dot`` as the target's matrix instruction (wgmma, mma.sync, tcgen05, MFMA);
* :mod:`.check`        - the port compiled for the target and read back against the original;
* :mod:`.port`         - the whole port, entered through :func:`port`.

Nothing else in the package imports this folder: it uses the IR layer and the layout algebra
and they do not know it exists.
"""

# (``port`` is imported from ``.port`` by the package root.)
