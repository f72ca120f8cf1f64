"""A fuzz seed of its own for each Triton release the suite runs under.

CI runs the whole suite under two releases (3.9 and 3.6).  A fuzz test drawing the same cases in
both runs does the same work twice wherever what it checks does not depend on the release; with
a seed per release the two runs cover different cases, so each can draw half as many.  The seed
is the base seed with the release appended, and the tests print it with every failure:

    seed_for_this_release(1)          # triton 3.9.x -> 10309, triton 3.6.0 -> 10306
"""

from __future__ import annotations


def seed_for_this_release(base: int) -> int:
    """``base`` followed by the installed Triton's major and minor version, two digits each."""
    import triton

    major, minor = (int(part) for part in triton.__version__.split(".")[:2])
    return base * 10_000 + major * 100 + minor
