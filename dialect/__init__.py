"""The layout algebra and TritonGPU layout attributes, in pure Python (no Triton import here)."""

from . import f2
from .linear_layout import LayoutError, LinearLayout, lstsq, supremum

__all__ = ["f2", "LayoutError", "LinearLayout", "lstsq", "supremum"]

from .attributes import (AmdMfmaEncoding, AmdRotatingSharedEncoding, AmdWmmaEncoding, AttributeSyntaxError,
                         BlockedEncoding, CGALayout, DotOperandEncoding, GenericLinearEncoding, LayoutAttribute,
                         LinearEncoding, NvidiaMmaEncoding, NvmmaSharedEncoding, PaddedSharedEncoding,
                         SharedLinearEncoding, SliceEncoding, SwizzledSharedEncoding)
from .attribute_parser import parse_aliases, parse_attribute
from .encodings import linear_attribute, to_linear_layout

__all__ += ["AmdMfmaEncoding", "AmdRotatingSharedEncoding", "AmdWmmaEncoding", "AttributeSyntaxError",
            "BlockedEncoding", "CGALayout", "DotOperandEncoding", "GenericLinearEncoding", "LayoutAttribute",
            "LinearEncoding", "NvidiaMmaEncoding", "NvmmaSharedEncoding", "PaddedSharedEncoding",
            "SharedLinearEncoding", "SliceEncoding", "SwizzledSharedEncoding", "parse_aliases", "parse_attribute",
            "linear_attribute", "to_linear_layout"]
