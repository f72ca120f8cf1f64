"""A module whose one ``ttg.convert_layout`` (a 32x32 transpose across warps) sits under
``depth`` nested ``scf.if`` ops: for the tests that our walks have no depth limit of their own."""

BLOCKED = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
BLOCKED_T = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]}>"


def nested_convert_module(depth: int) -> str:
    lines = [f"#A = {BLOCKED}", f"#B = {BLOCKED_T}",
             'module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", '
             '"ttg.threads-per-warp" = 32 : i32} {',
             "  tt.func public @deep(%p: i1) {",
             "    %c = arith.constant dense<0.0> : tensor<32x32xf32, #A>"]
    # No indentation: 3,000 levels of it would make a 9 MB file.
    lines += ["scf.if %p {"] * depth
    lines.append("%d = ttg.convert_layout %c : tensor<32x32xf32, #A> -> tensor<32x32xf32, #B>")
    lines += ["}"] * depth
    lines += ["    tt.return", "  }", "}", ""]
    return "\n".join(lines)
