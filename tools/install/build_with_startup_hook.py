"""The wheel's build step, with the plugin's start-up hook (used by pyproject.toml's ``cmdclass``).

Why a build step of our own: the start-up hook is a ``.pth`` file, which Python's ``site``
module runs only from the top of site-packages, outside every package, and setuptools'
configuration has no place for such a file.  :class:`BuildPy` is setuptools' ``build_py``
that also copies ``linear_layouts_startup.pth`` (beside this module) to the top of the
build, so that the wheel installs it and ``pip uninstall`` removes it.

The hook's one line does nothing unless ``LINEAR_LAYOUTS`` is set (and not ``0``); then it
imports ``linear_layouts``, which turns the plugin on right after the process imports triton
(``passes/drop_in/after_triton.py``).  An error there is one line on stderr, never a failed start.

This folder is not a package (no ``__init__.py``): it is used while building, and not shipped.
An editable install (``pip install -e .``) has no build step that can place the file; the
Makefile copies it into its virtual environments (``tools/install/startup_hook.py``).
"""

import os

from setuptools.command.build_py import build_py

STARTUP_HOOK = "linear_layouts_startup.pth"
HOOK_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), STARTUP_HOOK)


class BuildPy(build_py):
    def run(self):
        super().run()
        if not self.editable_mode:
            self.copy_file(HOOK_SOURCE, os.path.join(self.build_lib, STARTUP_HOOK))

    def get_outputs(self, include_bytecode=True):
        outputs = super().get_outputs(include_bytecode)
        return outputs if self.editable_mode else outputs + [os.path.join(self.build_lib, STARTUP_HOOK)]
