"""Bad input, table by table: every entry point answers with one clear message.

The promise (docs/reliability.md, "Bad input"): malformed IR, unsupported or invalid layouts, sizes beyond a
limit, unknown passes or options, unreadable or binary files get a message that names what is
wrong and where; a command-line tool exits with status 1, prints no traceback and finishes in
seconds; no output file is left behind by a failed run, and devices, FIFOs and symlinks given
to ``-o`` stay what they were.  The Python API raises a ``ValueError`` subclass
(``LayoutError``, ``PipelineError``, ``PluginError``) naming the argument.

Each row is (id, arguments, what stderr must contain).  Command-line rows run the installed
entry points' modules in a subprocess (``python -m linear_layouts.tools.ll_opt`` is ``ll-opt``).
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from dataclasses import dataclass, field

import pytest

from linear_layouts.dialect import LayoutError, LinearLayout, parse_attribute, to_linear_layout

# A run of a tool on bad input must end within this many seconds (the slowest rows parse a
# module with Triton: well under one second each on the CI machine).
TIME_LIMIT_S = 15
# Legal but large inputs (a 1M-element convert, a 256x256 picture) must not hang either; they do
# real work (about 5 s for the picture on an idle CI machine, 15 to 30 s on a loaded 2-core one),
# and what this guards against, a quadratic blow-up, takes many minutes.
VALID_INPUT_TIME_LIMIT_S = 60

BLOCKED = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
BLOCKED_T = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]}>"
SHARED = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"
HEADER = ('module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", '
          '"ttg.threads-per-warp" = 32 : i32} {')


def convert_module(shape="32x32", src=BLOCKED, dst=BLOCKED_T, element="f32", header=HEADER, extra="",
                   name="@k") -> str:
    """A kernel with one ttg.convert_layout of a constant (the smallest module with a convert)."""
    return f"""#A = {src}
#B = {dst}
{header}
  tt.func public {name}() {{
    %c = arith.constant {extra}dense<0.0> : tensor<{shape}x{element}, #A>
    %d = ttg.convert_layout %c : tensor<{shape}x{element}, #A> -> tensor<{shape}x{element}, #B>
    tt.return
  }}
}}
"""


GOOD = convert_module()
BOM = b"\xef\xbb\xbf"   # UTF-8's byte-order mark, which some editors put at the start of a file


@dataclass
class Row:
    id: str
    argv: list[str]                   # {dir} is the test's temporary directory
    message: str                      # must appear in stderr (case-insensitive)
    files: dict[str, bytes | str] = field(default_factory=dict)   # written into {dir} first
    stdin: bytes = b""
    env: dict[str, str] = field(default_factory=dict)
    output: str | None = None         # a path given to -o: must not exist after the failed run


LL_OPT = [sys.executable, "-m", "linear_layouts.tools.ll_opt"]
LL_VIZ = [sys.executable, "-m", "linear_layouts.tools.viewers.viz"]
LL_DEMO = [sys.executable, "-m", "linear_layouts.tools.demo"]
RUNNER = [sys.executable, "-m", "linear_layouts"]

# ------------------------------------------------------------------------------------ ll-opt

LL_OPT_ROWS = [
    # the pipeline and its options
    Row("unknown-pass", LL_OPT + ["{dir}/k.mlir", "-p", "ll-nonsense"], "unknown pass 'll-nonsense'", {"k.mlir": GOOD}),
    Row("empty-pass-name", LL_OPT + ["{dir}/k.mlir", "-p", "ll-attach-layouts,,ll-classify-conversions"],
        "empty pass name", {"k.mlir": GOOD}),
    Row("unknown-option", LL_OPT + ["{dir}/k.mlir", "-p", "ll-lower-conversions{speed=max}"],
        "has no option 'speed'", {"k.mlir": GOOD}),
    Row("repeated-option", LL_OPT + ["{dir}/k.mlir", "-p", "ll-lower-conversions{only=shuffle only=shared}"],
        "option 'only' of pass 'll-lower-conversions' is given twice", {"k.mlir": GOOD}),
    Row("unknown-lowering", LL_OPT + ["{dir}/k.mlir", "-p", "ll-lower-conversions{only=magic}"],
        "unknown lowering 'magic'", {"k.mlir": GOOD}),
    Row("injected-pass", LL_OPT + ["{dir}/k.mlir", "-p", "ll-lower-conversions{only=shuffle},ll-attach-layouts{x"],
        "unclosed brace", {"k.mlir": GOOD}),
    Row("bool-option-value", LL_OPT + ["{dir}/k.mlir", "-p", "ll-classify-conversions{report=maybe}"],
        "report", {"k.mlir": GOOD}),
    Row("unknown-mode", LL_OPT + ["{dir}/k.mlir", "-p", "ll-lower-conversions{mode=fast}"], "mode", {"k.mlir": GOOD}),
    Row("unknown-verify", LL_OPT + ["{dir}/k.mlir", "-p", "ll-lower-conversions{verify=never}"], "verify",
        {"k.mlir": GOOD}),
    Row("option-target-bogus", LL_OPT + ["{dir}/k.mlir", "-p", "ll-lower-conversions{target=bogus}"], "target",
        {"k.mlir": GOOD}),
    Row("option-target-unsupported", LL_OPT + ["{dir}/k.mlir", "-p", "ll-lower-conversions{target=cuda:70}"],
        "cuda:70", {"k.mlir": GOOD}),
    Row("unbalanced-braces", LL_OPT + ["{dir}/k.mlir", "-p", "ll-lower-conversions{only=shuffle"], "unclosed brace",
        {"k.mlir": GOOD}),
    Row("flag-target-bogus", LL_OPT + ["{dir}/k.mlir", "--target", "sm_1000"], "sm_1000", {"k.mlir": GOOD}),
    Row("unknown-flag", LL_OPT + ["{dir}/k.mlir", "--frobnicate"], "--frobnicate", {"k.mlir": GOOD}),
    Row("bad-emit", LL_OPT + ["{dir}/k.mlir", "--emit", "sass"], "sass", {"k.mlir": GOOD}),
    Row("emit-without-target", LL_OPT + ["{dir}/k.mlir", "--emit", "ptx"], "needs a target",
        {"k.mlir": GOOD.replace(' ttg.target = "cuda:90",', "")}),
    # files
    Row("missing-file", LL_OPT + ["{dir}/absent.mlir"], "No such file"),
    Row("directory-input", LL_OPT + ["{dir}"], "directory"),
    Row("binary-file", LL_OPT + ["{dir}/k.bin"], "not UTF-8 text", {"k.bin": bytes(range(256))}),
    Row("binary-stdin", LL_OPT + ["-p", "ll-attach-layouts"], "not UTF-8 text", stdin=b"\xff\xfe\x00junk"),
    # the offset counts the byte-order mark: it is the file's own
    Row("binary-after-byte-order-mark", LL_OPT + ["{dir}/k.mlir"], "k.mlir:2: not UTF-8 text (byte 0xff at offset 12)",
        {"k.mlir": BOM + b"module {\n\xff\n}\n"}),
    Row("output-dir-missing", LL_OPT + ["{dir}/k.mlir", "-o", "{dir}/nowhere/out.mlir"], "cannot write",
        {"k.mlir": GOOD}, output="{dir}/nowhere/out.mlir"),
    Row("output-is-directory", LL_OPT + ["{dir}/k.mlir", "-o", "{dir}"], "cannot write", {"k.mlir": GOOD}),
    Row("no-partial-output", LL_OPT + ["{dir}/k.mlir", "-o", "{dir}/out.mlir"], "undeclared",
        {"k.mlir": GOOD.replace("%d = ttg.convert_layout %c", "%d = ttg.convert_layout %nothing")},
        output="{dir}/out.mlir"),
    # malformed IR
    Row("english", LL_OPT + ["{dir}/k.mlir"], "error", {"k.mlir": "Please convert my layouts.\n"}),
    Row("undeclared-value", LL_OPT + ["{dir}/k.mlir"], "k.mlir:6:29: use of undeclared",
        {"k.mlir": GOOD.replace("%d = ttg.convert_layout %c", "%d = ttg.convert_layout %nothing")}),
    Row("truncated-module", LL_OPT + ["{dir}/k.mlir"], "k.mlir", {"k.mlir": GOOD[: len(GOOD) // 2]}),
    Row("trailing-garbage", LL_OPT + ["{dir}/k.mlir"], "k.mlir", {"k.mlir": GOOD + "}}}\n"}),
    Row("unknown-dialect-op", LL_OPT + ["{dir}/k.mlir"], "k.mlir",
        {"k.mlir": GOOD.replace("tt.return", "tt.frobnicate")}),
    Row("type-mismatch", LL_OPT + ["{dir}/k.mlir"], "k.mlir",
        {"k.mlir": GOOD.replace("-> tensor<32x32xf32, #B>", "-> tensor<32x16xf32, #B>")}),
    Row("non-power-of-two-blocked", LL_OPT + ["{dir}/k.mlir", "-p", "ll-attach-layouts"], "k.mlir",
        {"k.mlir": convert_module(src=BLOCKED.replace("threadsPerWarp = [4, 8]", "threadsPerWarp = [3, 8]"))}),
    Row("blocked-rank-mismatch", LL_OPT + ["{dir}/k.mlir"], "k.mlir",
        {"k.mlir": convert_module(src=BLOCKED.replace("sizePerThread = [1, 1]", "sizePerThread = [1]"))}),
    Row("unknown-encoding", LL_OPT + ["{dir}/k.mlir"], "k.mlir",
        {"k.mlir": convert_module(src="#ttg.zigzag<{n = 1}>")}),
    Row("reserved-island", LL_OPT + ["{dir}/k.mlir", "-p", "ll-lower-conversions"], "reserved",
        {"k.mlir": GOOD.replace("%d = ttg.convert_layout %c", "%d = ttg.convert_layout %c {ll.island = 0 : i32}")
         .replace("-> tensor<32x32xf32, #B>\n", "-> tensor<32x32xf32, #B>\n", 1)}),
    Row("reserved-op-id", LL_OPT + ["{dir}/k.mlir"], "reserved",
        {"k.mlir": GOOD.replace("tt.return", "tt.return {ll.op_id = 0 : i32}")}),
    Row("parser-abort", LL_OPT + ["{dir}/k.mlir", "-p", "ll-attach-layouts"], "Triton aborted",
        {"k.mlir": HEADER + "\n  tt.func public @f(%x: tensor<64xf32, #ttg.linear<{register = [[64]], lane = [[1], "
                   "[2], [4], [8], [16]], warp = [], block = []}>>) {\n    tt.return\n  }\n}\n"}),
    Row("split-input-one-bad", LL_OPT + ["{dir}/k.mlir", "--split-input-file"], "k.mlir:2:",
        {"k.mlir": "module {\n  %x = \n}\n// -----\n" + GOOD}),
    Row("ttir-to-lowering", LL_OPT + ["{dir}/k.mlir", "-p", "ll-attach-layouts"], "encoding",
        {"k.mlir": 'module {\n  tt.func @f() {\n    %c = arith.constant dense<0.0> : tensor<32xf32>\n'
                   '    tt.return\n  }\n}\n'}),
]

# Rows that must succeed (exit 0): input a careful user would expect to work.
LL_OPT_GOOD_ROWS = [
    Row("backslash-file-name", LL_OPT + ["{dir}/back\\slash.mlir", "-p", "ll-attach-layouts,ll-lower-conversions"],
        "", {"back\\slash.mlir": GOOD}),
    Row("quote-unicode-file-name", LL_OPT + ['{dir}/q"ü.mlir', "-p", "ll-attach-layouts", "--mlir-print-debuginfo"],
        "", {'q"ü.mlir': GOOD}),
    Row("unicode-function-name", LL_OPT + ["{dir}/k.mlir", "-p", "ll-attach-layouts,ll-classify-conversions"], "",
        {"k.mlir": convert_module(name='@"tränspose ünï"')}),
    Row("million-element-convert", LL_OPT + ["{dir}/k.mlir", "-p", "ll-lower-conversions", "--remarks"],
        "limited to 1024 per thread", {"k.mlir": convert_module(shape="1024x1024")}),
    Row("empty-pipeline", LL_OPT + ["{dir}/k.mlir", "-p", ""], "", {"k.mlir": GOOD}),
    Row("stdin", LL_OPT + ["-p", "ll-attach-layouts"], "", stdin=GOOD.encode()),
    Row("byte-order-mark", LL_OPT + ["{dir}/k.mlir", "-p", "ll-classify-conversions"], "",
        {"k.mlir": BOM + GOOD.encode()}),
    Row("byte-order-mark-stdin", LL_OPT + ["-p", "ll-classify-conversions"], "", stdin=BOM + GOOD.encode()),
]

# ------------------------------------------------------------------------------------ ll-viz

HUGE_WARPS = BLOCKED.replace("warpsPerCTA = [4, 1]", "warpsPerCTA = [4611686018427387904, 1]")
NESTED = BLOCKED
for _ in range(300):
    NESTED = f"#ttg.slice<{{dim = 0, parent = {NESTED}}}>"

LL_VIZ_ROWS = [
    Row("nothing", LL_VIZ, "give a layout attribute"),
    Row("shape-not-power-of-two", LL_VIZ + [BLOCKED, "--shape", "48,16"], "power of two"),
    Row("shape-zero", LL_VIZ + [BLOCKED, "--shape", "0,16"], "power of two"),
    Row("shape-negative", LL_VIZ + [BLOCKED, "--shape=-16,16"], "power of two"),
    Row("shape-words", LL_VIZ + [BLOCKED, "--shape", "big"], "expected sizes"),
    Row("shape-too-large", LL_VIZ + [BLOCKED, "--shape", "65536,65536"], "at most 1048576"),
    Row("too-many-positions", LL_VIZ + [BLOCKED, "--shape", "1024,1024"], "hardware positions"),
    Row("huge-warps", LL_VIZ + [HUGE_WARPS, "--shape", "16,16"], "hardware positions"),
    Row("grid-too-large", LL_VIZ + [BLOCKED.replace("[1, 1]", "[4, 4]", 1), "--shape", "512,512"], "grid"),
    Row("no-shape", LL_VIZ + [BLOCKED], "needs --shape"),
    Row("shape-rank-mismatch", LL_VIZ + [BLOCKED, "--shape", "64"], "rank"),
    Row("max-copies-negative", LL_VIZ + [BLOCKED, "--shape", "16,16", "--max-copies", "-1"], "--max-copies -1"),
    Row("max-copies-zero", LL_VIZ + [BLOCKED, "--shape", "16,16", "--max-copies", "0"], "--max-copies 0"),
    Row("max-copies-word", LL_VIZ + [BLOCKED, "--shape", "16,16", "--max-copies", "all"], "--max-copies"),
    Row("bits-odd", LL_VIZ + [SHARED, "--shape", "16,16", "--bits", "7"], "--bits 7"),
    Row("garbage-attribute", LL_VIZ + ["#ttg.nope<{}>", "--shape", "16,16"], "nope"),
    Row("not-an-attribute", LL_VIZ + ["hello", "--shape", "16,16"], "hello"),
    Row("unbalanced-attribute", LL_VIZ + [BLOCKED[:-3], "--shape", "16,16"], "error"),
    Row("unknown-key", LL_VIZ + [BLOCKED.replace("order", "ordre"), "--shape", "16,16"], "ordre"),
    Row("non-power-of-two-threads", LL_VIZ + [BLOCKED.replace("[4, 8]", "[3, 8]"), "--shape", "16,16"], "power of two"),
    Row("negative-size", LL_VIZ + [BLOCKED.replace("sizePerThread = [1, 1]", "sizePerThread = [-1, 1]"),
                                   "--shape", "16,16"], "sizePerThread"),
    Row("order-not-permutation", LL_VIZ + [BLOCKED.replace("order = [1, 0]", "order = [1, 1]"), "--shape", "16,16"],
        "order"),
    Row("linear-bad-basis", LL_VIZ + ["#ttg.linear<{register = [[0, 3]], lane = [], warp = [], block = []}>",
                                      "--shape", "4,4"], "error"),
    Row("nested-slices", LL_VIZ + [NESTED, "--shape", "16"], "nest"),
    Row("mma-bad-version", LL_VIZ + ["#ttg.nvidia_mma<{versionMajor = 7, versionMinor = 0, warpsPerCTA = [4, 1], "
                                     "instrShape = [16, 8]}>", "--shape", "64,64"], "version"),
    Row("compare-mixed-kinds", LL_VIZ + ["--compare", BLOCKED, SHARED, "--shape", "16,16"], "one kind"),
    Row("compare-and-attribute", LL_VIZ + [BLOCKED, "--compare", BLOCKED, BLOCKED_T, "--shape", "16,16"],
        "give no other layout"),
    Row("compare-ranks-differ", LL_VIZ + ["--compare", BLOCKED,
                                          "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], "
                                          "warpsPerCTA = [4], order = [0]}>", "--shape", "16,16"], "error"),
    Row("plan-shared", LL_VIZ + ["--plan", BLOCKED, SHARED, "--shape", "16,16"], "shared-memory layout"),
    Row("plan-target", LL_VIZ + ["--plan", BLOCKED, BLOCKED_T, "--shape", "16,16", "--target", "sm_70"], "--target"),
    Row("plan-picture-suffix", LL_VIZ + ["--plan", BLOCKED, BLOCKED_T, "--shape", "16,16", "-o", "{dir}/p.txt"],
        ".png, .svg or .pdf", output="{dir}/p.txt"),
    Row("plan-huge", LL_VIZ + ["--plan", BLOCKED, HUGE_WARPS, "--shape", "16,16"], "hardware positions"),
    Row("picture-suffix", LL_VIZ + [BLOCKED, "--shape", "16,16", "-o", "{dir}/x.txt"], ".png, .svg or .pdf",
        output="{dir}/x.txt"),
    Row("picture-dir-missing", LL_VIZ + [BLOCKED, "--shape", "16,16", "-o", "{dir}/nowhere/x.png"], "nowhere",
        output="{dir}/nowhere/x.png"),
    Row("file-missing", LL_VIZ + ["--file", "{dir}/absent.mlir", "--value", "%c"], "absent.mlir"),
    Row("file-binary", LL_VIZ + ["--file", "{dir}/k.bin", "--value", "%5"], "not a text file",
        {"k.bin": bytes(range(256))}),
    Row("file-without-value", LL_VIZ + ["--file", "{dir}/k.mlir"], "needs --value", {"k.mlir": GOOD}),
    Row("file-value-absent", LL_VIZ + ["--file", "{dir}/k.mlir", "--value", "%zz"], "no value %zz",
        {"k.mlir": GOOD}),
    Row("file-malformed-encoding", LL_VIZ + ["--file", "{dir}/k.mlir", "--value", "%c"],
        "k.mlir:5: the type of %c has a malformed layout encoding '#'",
        {"k.mlir": GOOD.replace(": tensor<32x32xf32, #A>\n", ": tensor<32x32xf32, #>\n", 1)}),
    Row("file-encoding-space-after-hash", LL_VIZ + ["--file", "{dir}/k.mlir", "--value", "%c"],
        "malformed layout encoding '# A'",
        {"k.mlir": GOOD.replace(": tensor<32x32xf32, #A>\n", ": tensor<32x32xf32, # A>\n", 1)}),
    Row("file-alias-cycle", LL_VIZ + ["--file", "{dir}/k.mlir", "--value", "%c"], "error",
        {"k.mlir": GOOD.replace(f"#A = {BLOCKED}", "#A = #A")}),
    Row("access-on-distributed", LL_VIZ + [BLOCKED, "--shape", "16,16", "--access", BLOCKED_T], "shared layouts only"),
    Row("access-is-shared", LL_VIZ + [SHARED, "--shape", "16,16", "--access", SHARED], "distributed layout"),
]

LL_VIZ_GOOD_ROWS = [
    Row("compare-two-shared", LL_VIZ + ["--compare", SHARED, SHARED.replace("maxPhase = 1", "maxPhase = 8"),
                                        "--shape", "8,8"], ""),
    Row("largest-grid", LL_VIZ + [BLOCKED, "--shape", "256,256"], ""),
    Row("largest-picture", LL_VIZ + [BLOCKED, "--shape", "256,256", "-o", "{dir}/big.png"], ""),
    Row("file-byte-order-mark", LL_VIZ + ["--file", "{dir}/k.mlir", "--value", "%c"], "",
        {"k.mlir": BOM + GOOD.encode()}),
]

# ------------------------------------------------------------------- ll-demo, python -m linear_layouts

OTHER_ROWS = [
    Row("demo-unknown-kernel", LL_DEMO + ["--kernel", "nonexistent", "--no-compare", "--no-pictures"], "nonexistent"),
    Row("demo-unknown-target", LL_DEMO + ["--target", "sm_70"], "sm_70"),
    Row("demo-out-under-file", LL_DEMO + ["--kernel", "softmax", "--no-compare", "--out", "{dir}/f/x"], "f/x",
        {"f": "a file"}),
    Row("runner-no-arguments", RUNNER, "usage"),
    Row("runner-unknown-command", RUNNER + ["walk", "x.py"], "usage"),
    Row("runner-missing-program", RUNNER + ["run", "{dir}/absent.py"], "no such program"),
    Row("runner-garbage-environment", RUNNER + ["run", "{dir}/p.py"], "LINEAR_LAYOUTS", {"p.py": "print(1)\n"},
        env={"LINEAR_LAYOUTS": "garbage"}),
]


def _materialize(row: Row, tmp_path) -> tuple[list[str], dict[str, str], str | None]:
    for name, content in row.files.items():
        path = tmp_path / name
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            path.write_bytes(content)
    argv = [a.replace("{dir}", str(tmp_path)) for a in row.argv]
    env = dict(os.environ, **row.env)
    env.pop("LL_OPT_TRACEBACK", None)
    output = row.output.replace("{dir}", str(tmp_path)) if row.output else None
    return argv, env, output


def _run(row: Row, tmp_path, limit_s: float = TIME_LIMIT_S):
    argv, env, output = _materialize(row, tmp_path)
    start = time.monotonic()
    result = subprocess.run(argv, input=row.stdin, capture_output=True, env=env, timeout=limit_s * 2,
                            cwd=tmp_path)
    elapsed = time.monotonic() - start
    return result, elapsed, output


@pytest.mark.parametrize("row", LL_OPT_ROWS + LL_VIZ_ROWS + OTHER_ROWS, ids=lambda r: r.id)
def test_bad_input_gets_one_clear_error(row, tmp_path):
    result, elapsed, output = _run(row, tmp_path)
    out, err = result.stdout.decode(errors="replace"), result.stderr.decode(errors="replace")
    assert result.returncode == 1, f"exit {result.returncode}\nstdout: {out[-2000:]}\nstderr: {err[-2000:]}"
    assert "Traceback" not in err and "Traceback" not in out, err
    assert "internal error" not in err, err
    assert row.message.lower() in err.lower(), err
    assert "error" in err.lower(), err
    assert elapsed < TIME_LIMIT_S, f"took {elapsed:.1f} s"
    if output is not None:
        assert not os.path.exists(output), f"a failed run left {output}"


@pytest.mark.parametrize("row", LL_OPT_GOOD_ROWS + LL_VIZ_GOOD_ROWS, ids=lambda r: r.id)
def test_unusual_but_valid_input_is_accepted(row, tmp_path):
    result, elapsed, _ = _run(row, tmp_path, VALID_INPUT_TIME_LIMIT_S)
    err = result.stderr.decode(errors="replace")
    assert result.returncode == 0, err[-3000:]
    assert "Traceback" not in err
    assert row.message in err
    assert elapsed < VALID_INPUT_TIME_LIMIT_S, f"took {elapsed:.1f} s"


def test_unicode_function_keeps_its_name_and_gets_its_attributes(tmp_path):
    (tmp_path / "k.mlir").write_text(convert_module(name='@"tränspose ünï"'), encoding="utf-8")
    result = subprocess.run(LL_OPT + [str(tmp_path / "k.mlir"), "-p", "ll-attach-layouts,ll-classify-conversions"],
                            capture_output=True, text=True, timeout=TIME_LIMIT_S * 2)
    assert result.returncode == 0, result.stderr
    assert 'tt.func public @"tr\\C3\\A4nspose \\C3\\BCn\\C3\\AF"()' in result.stdout
    assert "ll.scope" in result.stdout


def test_backslash_file_name_is_kept_in_locations(tmp_path):
    path = tmp_path / "back\\slash.mlir"
    path.write_text(GOOD, encoding="utf-8")
    result = subprocess.run(LL_OPT + [str(path), "-p", "ll-attach-layouts", "--mlir-print-debuginfo"],
                            capture_output=True, text=True, timeout=TIME_LIMIT_S * 2)
    assert result.returncode == 0, result.stderr
    assert f'loc("{str(path).replace(chr(92), chr(92) * 2)}":' in result.stdout


# ----------------------------------------------------------------- output targets stay intact

def test_output_to_a_fifo_is_written_in_place(tmp_path):
    (tmp_path / "k.mlir").write_text(GOOD)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    result = subprocess.run(LL_OPT + [str(tmp_path / "k.mlir"), "-o", str(fifo)], capture_output=True,
                            timeout=TIME_LIMIT_S * 2)
    text = reader.communicate(timeout=TIME_LIMIT_S)[0].decode()
    assert result.returncode == 0, result.stderr
    assert "ttg.convert_layout" in text
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_output_through_a_symlink_writes_its_target(tmp_path):
    (tmp_path / "k.mlir").write_text(GOOD)
    (tmp_path / "real.mlir").write_text("old")
    link = tmp_path / "link.mlir"
    link.symlink_to(tmp_path / "real.mlir")
    result = subprocess.run(LL_OPT + [str(tmp_path / "k.mlir"), "-o", str(link)], capture_output=True,
                            timeout=TIME_LIMIT_S * 2)
    assert result.returncode == 0, result.stderr
    assert link.is_symlink()
    assert "ttg.convert_layout" in (tmp_path / "real.mlir").read_text()


def test_output_to_dev_null_leaves_the_device(tmp_path):
    (tmp_path / "k.mlir").write_text(GOOD)
    result = subprocess.run(LL_OPT + [str(tmp_path / "k.mlir"), "-o", "/dev/null"], capture_output=True,
                            timeout=TIME_LIMIT_S * 2)
    assert result.returncode == 0, result.stderr
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_failed_run_keeps_an_existing_output_file(tmp_path):
    (tmp_path / "k.mlir").write_text("not mlir")
    (tmp_path / "out.mlir").write_text("precious")
    result = subprocess.run(LL_OPT + [str(tmp_path / "k.mlir"), "-o", str(tmp_path / "out.mlir")],
                            capture_output=True, timeout=TIME_LIMIT_S * 2)
    assert result.returncode == 1
    assert (tmp_path / "out.mlir").read_text() == "precious"


def test_import_with_garbage_environment_warns_and_imports(tmp_path):
    result = subprocess.run([sys.executable, "-c", "import linear_layouts; print('imported')"], capture_output=True,
                            text=True, env=dict(os.environ, LINEAR_LAYOUTS="garbage"), timeout=TIME_LIMIT_S * 2)
    assert result.returncode == 0, result.stderr
    assert "imported" in result.stdout
    assert "LINEAR_LAYOUTS" in result.stderr and "Traceback" not in result.stderr


# ---------------------------------------------------------------------- the Python API

def _layout():
    return LinearLayout.from_bases({"register": [[1]], "lane": [[2], [4]]}, {"dim0": 8})


API_ROWS = [
    ("from_bases-int-bases", lambda: LinearLayout.from_bases({"r": 5}, ["o"]), "bases"),
    ("from_bases-basis-not-list", lambda: LinearLayout.from_bases({"r": [1]}, {"o": 2}), "list of lists"),
    ("from_bases-bool-basis", lambda: LinearLayout.from_bases({"r": [[True]]}, {"o": 2}), "non-negative integer"),
    ("from_bases-negative-basis", lambda: LinearLayout.from_bases({"r": [[-1]]}, {"o": 2}), "-1"),
    ("from_bases-basis-too-big", lambda: LinearLayout.from_bases({"r": [[4]]}, {"o": 4}), "4"),
    ("from_bases-basis-wrong-rank", lambda: LinearLayout.from_bases({"r": [[1, 0]]}, {"o": 2}), "basis"),
    ("from_bases-out-not-pow2", lambda: LinearLayout.from_bases({"r": [[1]]}, {"o": 3}), "powers of 2"),
    ("from_bases-out-bool", lambda: LinearLayout.from_bases({"r": [[1]]}, {"o": True}), "o"),
    ("from_bases-none-name", lambda: LinearLayout.from_bases({None: [[1]]}, {"o": 2}), "name"),
    ("from_bases-empty-name", lambda: LinearLayout.from_bases({"": [[1]]}, {"o": 2}), "name"),
    ("from_bases-out-duplicate", lambda: LinearLayout.from_bases({"r": [[1, 0]]}, [("o", 2), ("o", 2)]), "o"),
    ("identity-size-3", lambda: LinearLayout.identity_1d(3, "r", "o"), "powers of 2"),
    ("identity-size-bool", lambda: LinearLayout.identity_1d(True, "r", "o"), "integers"),
    ("identity-size-negative", lambda: LinearLayout.identity_1d(-2, "r", "o"), "powers of 2"),
    ("strided-size-float", lambda: LinearLayout.strided_1d(4.0, 1, "r", "o"), "4.0"),
    ("zeros-negative", lambda: LinearLayout.zeros_1d(-4, "r", "o"), "-4"),
    ("get_basis-out-of-range", lambda: _layout().get_basis("register", 10), "10"),
    ("get_basis-unknown-dim", lambda: _layout().get_basis("warp", 0), "warp"),
    ("transpose_outs-none", lambda: _layout().transpose_outs(None), "list of names"),
    ("transpose_outs-missing", lambda: _layout().transpose_outs(["dim1"]), "dim"),
    ("transpose_ins-partial", lambda: _layout().transpose_ins(["lane"]), "register"),
    ("reshape_outs-duplicate", lambda: _layout().reshape_outs([("a", 2), ("a", 4)]), "a"),
    ("reshape_outs-wrong-total", lambda: _layout().reshape_outs([("a", 4)]), "8"),
    ("reshape_ins-bool", lambda: _layout().reshape_ins([("x", True), ("y", 8)]), "size true"),
    ("rename-missing", lambda: _layout().rename_in_dim("warp", "x"), "warp"),
    ("rename-collision", lambda: _layout().rename_in_dim("register", "lane"), "lane"),
    ("apply-negative", lambda: _layout().apply({"register": -1, "lane": 0}), "-1"),
    ("apply-float", lambda: _layout().apply({"register": 1.0, "lane": 0}), "1.0"),
    ("apply-unknown-dim", lambda: _layout().apply({"warp": 0}), "warp"),
    ("apply-not-int", lambda: _layout().apply({"register": "0", "lane": 0}), "register"),
    ("apply_flat-negative", lambda: _layout().apply_flat(-1), "-1"),
    ("compose-mismatch", lambda: _layout().compose(_layout()), "dim"),
    ("compose-not-layout", lambda: _layout().compose("layout"), "LinearLayout"),
    ("invert-not-invertible", lambda: LinearLayout.zeros_1d(4, "r", "o", 4).invert(), "invert"),
    ("invert_and_compose-not-layout", lambda: _layout().invert_and_compose(None), "LinearLayout"),
    ("divide_left-not-layout", lambda: _layout().divide_left(3), "LinearLayout"),
    ("sublayout-unknown", lambda: _layout().sublayout(["warp"], ["dim0"]), "warp"),
    ("resize-not-pow2", lambda: _layout().resize_in_dim("register", 3), "3"),
    ("mul-not-layout", lambda: _layout() * 2, "LinearLayout"),
    # attribute parsing and translation
    ("attr-empty", lambda: parse_attribute(""), "attribute"),
    ("attr-alias-cycle", lambda: parse_attribute("#a", {"a": "#a"}), "a"),
    ("attr-alias-missing", lambda: parse_attribute("#nowhere", {}), "nowhere"),
    ("attr-nested-300", lambda: parse_attribute(NESTED), "nest"),
    ("attr-unknown-kind", lambda: parse_attribute("#ttg.zigzag<{}>"), "zigzag"),
    ("attr-missing-field", lambda: parse_attribute("#ttg.blocked<{sizePerThread = [1, 1]}>"), "threadsPerWarp"),
    ("attr-list-not-ints", lambda: parse_attribute(BLOCKED.replace("[1, 1]", "[a, b]", 1)), "sizePerThread"),
    ("attr-huge-number", lambda: to_linear_layout(BLOCKED.replace("[4, 1]", "[3, 1]"), [16, 16]), "warpsPerCTA"),
    ("layout-shape-not-pow2", lambda: to_linear_layout(BLOCKED, [48, 16]), "48"),
    ("layout-shape-rank", lambda: to_linear_layout(BLOCKED, [16]), "rank"),
    ("layout-shape-bool", lambda: to_linear_layout(BLOCKED, [True, 16]), "shape"),
    ("layout-shape-negative", lambda: to_linear_layout(BLOCKED, [-16, 16]), "-16"),
    ("layout-mma-bad-warps", lambda: to_linear_layout(
        "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [3, 1], instrShape = [16, 8]}>",
        [64, 64]), "warpsPerCTA"),
]


@pytest.mark.parametrize("call, message", [(c, m) for _, c, m in API_ROWS], ids=[r[0] for r in API_ROWS])
def test_api_rejects_bad_input_with_layout_error(call, message):
    with pytest.raises(LayoutError) as info:
        call()
    assert message.lower() in str(info.value).lower()


ENABLE_ROWS = [
    ("mode", {"mode": "fast"}, "fast"),
    ("only-nonsense", {"only": "nonsense"}, "nonsense"),
    ("only-injection", {"only": "shuffle},ll-attach-layouts{"}, "only"),
    ("only-not-string", {"only": 3}, "only"),
    ("pipeline-int", {"pipeline": 123}, "pipeline"),
    ("pipeline-unknown-pass", {"pipeline": "ll-nonsense"}, "ll-nonsense"),
    ("pipeline-bad-target", {"pipeline": "ll-lower-conversions{target=bogus}"}, "target"),
    ("pipeline-repeated-option", {"pipeline": "ll-lower-conversions{only=shuffle only=shared}"}, "twice"),
    ("verify", {"verify": "sometimes"}, "sometimes"),
    ("report-not-bool", {"report": "yes"}, "report"),
    ("remarks-not-bool", {"remarks": 1}, "remarks"),
]


@pytest.mark.parametrize("kwargs, message", [(k, m) for _, k, m in ENABLE_ROWS], ids=[r[0] for r in ENABLE_ROWS])
def test_enable_rejects_bad_options_when_given(kwargs, message):
    import linear_layouts
    from linear_layouts.passes.drop_in.hook import PluginError

    mode = kwargs.pop("mode", "linear")
    with pytest.raises(PluginError) as info:
        linear_layouts.enable(mode, **kwargs)
    assert isinstance(info.value, ValueError)
    assert message.lower() in str(info.value).lower()
    assert linear_layouts.stats() is not None
    from linear_layouts.passes.drop_in import hook
    assert hook.active_config() is None, "a rejected enable() must leave the plugin off"


def test_the_suite_is_large():
    """The issue's bar: at least 100 bad inputs across the entry points."""
    assert len(LL_OPT_ROWS) + len(LL_VIZ_ROWS) + len(OTHER_ROWS) + len(API_ROWS) + len(ENABLE_ROWS) >= 100


@pytest.mark.parametrize("tool, arguments", [
    (LL_OPT, ["-p", "ll-classify-conversions"]),
    (LL_VIZ, ["--value", "%c", "--file"]),
], ids=["ll-opt", "ll-viz"])
def test_a_byte_order_mark_changes_nothing(tool, arguments, tmp_path):
    """A file that starts with UTF-8's byte-order mark reads as the same file without it."""
    outputs = []
    for name, content in (("plain.mlir", GOOD.encode()), ("marked.mlir", BOM + GOOD.encode())):
        (tmp_path / name).write_bytes(content)
        result = subprocess.run(tool + arguments + [str(tmp_path / name)], capture_output=True, text=True,
                                timeout=TIME_LIMIT_S * 2)
        assert result.returncode == 0, result.stderr
        outputs.append(result.stdout.replace(str(tmp_path / name), "FILE"))
    assert outputs[0] == outputs[1] and ("ll.scope" in outputs[0] or "w0:t0:r0" in outputs[0])
