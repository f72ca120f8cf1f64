"""The layout algebra and TritonGPU layout attributes, in pure Python (no Triton import here)."""

from . import f2
from .linear_layout import LayoutError, LinearLayout, lstsq, supremum

__all__ = ["f2", "LayoutError", "LinearLayout", "lstsq", "supremum"]
