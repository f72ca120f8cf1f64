"""``ll-port`` (and ``python -m linear_layouts port``): a Triton kernel ported to Gluon, from the
command line (the port itself is ``passes/port``).

* ``command``: the command line: reads ``FILE.py:KERNEL`` and its ``--arg``s, writes the port,
  ``--check`` compiles it and compares it with the original;
* ``report``: ``--report DIR``'s text and HTML page (the three kernels side by side, every
  layout the port names, with its picture, and each conversion the port writes).
"""
