"""A fuzz seed of its own for each Triton release the suite runs under.

CI runs the whole suite under two releases (3.9 and 3.6).  A fuzz test drawing the same cases in
both runs does the same work twice wherever what it checks does not depend on the release; with
a seed per release the two runs cover different cases, so each can draw half as many.  The seed
is the base seed with the release appended, and the tests print it with every failure:

    seed_for_this_release(1)          # triton 3.9.x -> 10309, triton 3.6.0 -> 10306

``examples_split_between_releases(n)`` does the same for a hypothesis property: half of ``n``
examples a run, from a hypothesis seed of each release (hypothesis prints it with a failure).
"""

from __future__ import annotations

import zlib


def seed_for_this_release(base: int) -> int:
    """``base`` followed by the installed Triton's major and minor version, two digits each."""
    import triton

    major, minor = (int(part) for part in triton.__version__.split(".")[:2])
    return base * 10_000 + major * 100 + minor


def examples_split_between_releases(max_examples: int):
    """Hypothesis settings for a property whose subject is ours and the same under every release
    (the layout solver, the rewrite's meaning, a count): ``max_examples // 2`` examples (at least
    one) drawn from a seed of the test and the installed release.  Derandomized, CI's two full
    runs tried the same ``max_examples`` examples twice; now each tries half, different ones, and
    together as many as before.  Deterministic for a release (no example database)."""
    from hypothesis import seed, settings

    def decorate(test):
        base = zlib.crc32(test.__qualname__.encode()) % 100_000
        configured = settings(max_examples=max(1, max_examples // 2), deadline=None, derandomize=True)(test)
        return seed(seed_for_this_release(base))(configured)

    return decorate
