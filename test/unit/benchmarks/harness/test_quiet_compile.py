"""benchmarks/harness/quiet_compile.py: a failed sm_90 compile comes back (not raised) with what
MLIR printed on fd 2, and reads as one table cell (a failed launch likewise); what a kernel's PTX does with memory."""

import os
import sys

import pytest

from support import REPO

sys.path.insert(0, os.path.join(str(REPO), "benchmarks"))
from harness import quiet_compile  # noqa: E402


def test_the_first_specific_diagnostic_is_the_cell():
    stderr = ("loc(\"k.py\":3:5): error: 'tt.make_range' op Failed to infer return type\n"
              "error: Failures have been detected while processing an MLIR pass pipeline\n")
    assert quiet_compile.first_line(RuntimeError("PassManager::run failed"), stderr) == \
        "'tt.make_range' op Failed to infer return type"
    assert quiet_compile.first_line(RuntimeError("PassManager::run failed"), "") == "PassManager::run failed"


def test_a_crash_names_its_pass_and_an_assertion_says_what_failed():
    crash = "Pipeline failed while executing [`TritonGPUCoalesce` on 'builtin.module' operation]"
    assert quiet_compile.first_line(RuntimeError("boom"), crash) == "crash in TritonGPUCoalesce"
    asserted = crash + "\npython: Foo.cpp:12: void f(): Assertion `rank == 2 && \"a|b\"' failed."
    assert quiet_compile.first_line(RuntimeError("boom"), asserted) == \
        "assertion `rank == 2 && \"a/b\"` failed in TritonGPUCoalesce"


def test_a_frontend_error_reads_as_its_cause():
    error = RuntimeError("at 8:4:\n    x = gl.load(p)\n    ^")
    error.__cause__ = ValueError("the layout of x is unknown")
    assert quiet_compile.first_line(error) == "the layout of x is unknown"


def test_a_failed_compile_comes_back_with_its_error():
    pytest.importorskip("triton")
    result = quiet_compile.compile_for_sm90("not a source")
    assert result.compiled is None and isinstance(result.error, Exception) and isinstance(result.stderr, str)


def test_a_failed_launch_comes_back_with_what_it_printed_and_a_good_one_waits_for_the_gpu():
    waits = []
    torch = type("FakeTorch", (), {"cuda": type("FakeCuda", (), {"synchronize": staticmethod(lambda: waits.append(1))})})

    def failing():
        os.write(2, b"loc(\"k.py\":3:5): error: 'tt.make_range' op Failed to infer return type\n")
        raise RuntimeError("PassManager::run failed")
    result = quiet_compile.launch_quietly(failing, torch)
    assert isinstance(result.error, RuntimeError) and waits == []
    assert quiet_compile.first_line(result.error, result.stderr) == "'tt.make_range' op Failed to infer return type"
    result = quiet_compile.launch_quietly(lambda: None, torch)
    assert result.error is None and result.stderr == "" and waits == [1]


def test_access_text_counts_global_shared_and_cp_async_widths():
    ptx = "\n".join(["\tld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd1];", "\t@%p1 st.global.v4.b32 [%rd2], {%r1};",
                     "\tst.global.b32 [%rd3], %r5;", "\tst.shared.v4.b32 [%r6], {%r1, %r2, %r3, %r4};",
                     "\tst.shared.v4.b32 [%r7], {%r1, %r2, %r3, %r4};", "\tld.shared.b32 %r8, [%r6];",
                     "\tldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r9];",
                     "\tcp.async.cg.shared.global [ %r1 + 0 ], [ %rd1 + 0 ], 0x10, %r2;",
                     "\t@!%p2 cp.async.ca.shared.global [ %r1 + 0 ], [ %rd1 + 0 ], 0x4, %r2;",
                     "\tcp.async.cg.shared.global [ %r3 + 0 ], [ %rd2 + 0 ], 0x10, %r4;",
                     "\tcp.async.commit_group;"])
    assert quiet_compile.access_text(ptx) == ("16-byte global loads 1, stores 1; shared st.shared.v4 2, ld.shared 1, "
                                              "ldmatrix 1; cp.async 16-byte 2, 4-byte 1")
    assert quiet_compile.access_text("\tld.global.b32 %r1, [%rd1];") == "16-byte global loads 0, stores 0"
