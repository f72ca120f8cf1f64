"""linear_layouts.tools: the commands and what they share.

At the top: ``cli`` (what every command line shares), ``ll_opt`` (``ll-opt``) with
``mlir_dump`` (reading a module out of an MLIR pass dump), and ``demo`` (``ll-demo``).  The
rooms: ``report/`` (``python -m linear_layouts report``), ``viewers/`` (``ll-viz``), ``port/``
(``ll-port``), ``fuzz/`` (``ll-fuzz`` and the random inputs the tests draw), ``corpus/`` (the
lit corpus's generators).  ``install/`` is no package: the wheel's build step and the start-up
hook's installer.
"""
