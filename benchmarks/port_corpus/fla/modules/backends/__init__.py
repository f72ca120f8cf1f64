# Copyright (c) 2023-2026, Songlin Yang, Yu Zhang, Zhiyuan Li
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.
# For a list of all contributors, visit:
#   https://github.com/fla-org/flash-linear-attention/graphs/contributors

"""Module-level backends for FLA components such as rotary and cross-entropy."""

from fla.modules.backends.triton_ascend import TritonAscendBackend
from fla.ops.backends import BackendRegistry, dispatch

modules_registry = BackendRegistry("modules")

modules_registry.register(TritonAscendBackend())

__all__ = ['dispatch', 'modules_registry']
