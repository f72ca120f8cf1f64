"""A TTGIR file compiled for sm_90 in this process, by Triton alone or with the plugin enabled
for that one compile, and how many islands the plugin built for it."""

import linear_layouts


def compiled_for_sm90(path, with_plugin: bool):
    """(Triton's compiled kernel, the islands the plugin built while compiling it)."""
    import triton
    from triton.backends.compiler import GPUTarget

    before = linear_layouts.stats().islands
    if with_plugin:
        linear_layouts.enable()
    try:
        kernel = triton.compile(str(path), target=GPUTarget("cuda", 90, 32))
    finally:
        linear_layouts.disable()
    return kernel, linear_layouts.stats().islands - before
