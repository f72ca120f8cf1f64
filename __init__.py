"""linear-layouts: the Linear Layouts system (tensor layouts as linear maps over F2) for Triton.

Subpackages, with dependencies pointing one way (tools -> passes -> lowering -> dialect):

* ``linear_layouts.dialect``  - the F2 algebra (``LinearLayout``) and TritonGPU layout attributes
* ``linear_layouts.passes``   - Python passes over TritonGPU IR (the only users of Triton's bindings)
* ``linear_layouts.lowering`` - conversion plans, swizzling, cost model, verifier, code emission
* ``linear_layouts.tools``    - command-line tools (``ll-opt``, ``ll-viz``, the demo)
"""

from .dialect import LayoutError, LinearLayout

__version__ = "0.1.0"
__all__ = ["LayoutError", "LinearLayout", "__version__"]
