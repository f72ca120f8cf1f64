"""A generated module's text as an imported module (Gluon reads a kernel's source from its file)."""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile

from .translation import PortError


class loaded_module:
    """``with loaded_module(text) as (module, path)``: ``text`` written to a temporary file and
    imported; the file and the module are gone afterwards."""

    def __init__(self, text: str):
        self.text = text

    def __enter__(self):
        handle, path = tempfile.mkstemp(prefix="ll_port_", suffix=".py")
        with os.fdopen(handle, "w") as out:
            out.write(self.text)
        self.path = os.path.realpath(path)
        self.name = os.path.basename(self.path)[:-3]
        spec = importlib.util.spec_from_file_location(self.name, self.path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[self.name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as error:
            self.__exit__()
            raise PortError(f"the ported module does not load: {type(error).__name__}: {error}") from None
        return module, self.path

    def __exit__(self, *exc):
        sys.modules.pop(self.name, None)
        if os.path.exists(self.path):
            os.unlink(self.path)
        return False
