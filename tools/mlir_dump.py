"""Reading one module out of an MLIR pass dump (``MLIR_ENABLE_DUMP=1``'s stderr) for ``ll-opt``.

With ``MLIR_ENABLE_DUMP=1`` Triton prints the whole module before every pass of its pipeline
(MLIR's IR printing), each copy under a header line; the spelling of the header depends on the
MLIR inside the Triton release (both seen in real dumps):

    // -----// IR Dump Before ConvertTritonGPUToLLVM: convert-triton-gpu-to-llvm{compute-capability=90 ptx-version=94} ('builtin.module' operation) //----- //
    // -----// IR Dump Before ConvertTritonGPUToLLVM (convert-triton-gpu-to-llvm) ('builtin.module' operation) //----- //

(triton 3.9, then 3.6).  ``--mlir-print-ir-after-all`` writes ``IR Dump After`` headers the same
way, and ``ll-opt --print-ir-after-all`` writes ``// -----// IR Dump After ll-attach-layouts
//----- //``.  A dump also holds what is no whole module: copies of a single function (``('tt.func'
operation: @k)``, a pass scheduled on functions), the software pipeliner's own dumps, Python's
warnings.  Each module copy defines its own ``#loc`` aliases, which is why the whole file does
not parse as one module (``redefinition of attribute alias id 'loc'``).

The module ``ll-opt`` takes from a dump: by default the last one that is still TTGIR (it has
``ttg.num-warps`` and ``tt.func``; once ConvertTritonGPUToLLVM ran, functions are ``llvm.func``);
or the one right before or right after a named pass.  A pass is named by its class name
(``TritonGPURemoveLayoutConversions``) or its command-line argument
(``tritongpu-remove-layout-conversions``); a pass that ran several times is taken at its last run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

# The start of every header line of MLIR's IR printing.
_HEADER_START = "// -----// IR Dump "
# `// -----// IR Dump Before NAME: argument{options} ('op' operation: @symbol) //----- //` (newer MLIR),
# `// -----// IR Dump Before NAME (argument) ('op' operation) //----- //` (older), and without
# the operation part (ll-opt's own --print-ir-after-all).
_HEADER = re.compile(
    r"^// -----// IR Dump (?P<when>Before|After) (?P<name>[^\s:(]+)"
    r"(?::\s*(?P<argument>[^\s{(]+)(?:\{.*?\})?|\s+\((?P<old_argument>[^)]*)\))?"
    r"(?:\s+(?P<failed>Failed))?"
    r"(?:\s+\('(?P<operation>[^']+)' operation(?::.*?)?\))?\s*//----- //\s*$")


class DumpError(ValueError):
    """The dump holds no module that was asked for; the message says which ones it holds.
    ``line``: the line of the dump the message is about, where there is one."""

    def __init__(self, message: str, line: Optional[int] = None):
        super().__init__(message)
        self.line = line


@dataclass(frozen=True)
class DumpedModule:
    """One module printed in a dump: the pass it was printed before or after, and its text."""

    when: str          # "Before" or "After"
    pass_name: str     # "ConvertTritonGPUToLLVM"
    pass_argument: str  # "convert-triton-gpu-to-llvm" ("" where the header has none)
    printed: str       # everything under the header, up to the next one
    first_line: int    # the line of the dump file where it starts (for error locations)

    @property
    def text(self) -> str:
        """The module and its ``#`` alias lines, without what the process printed after it (a
        Python warning, the next stage's own output) that the MLIR parser would reject."""
        lines = self.printed.splitlines(keepends=True)
        last = len(lines)
        while last > 0 and not _is_module_line(lines[last - 1]):
            last -= 1
        return "".join(lines[:last])

    def names(self) -> tuple[str, ...]:
        return (self.pass_name, self.pass_argument) if self.pass_argument else (self.pass_name,)

    @property
    def is_llvm(self) -> bool:
        """Lowered to the LLVM dialect already (ConvertTritonGPUToLLVM ran): no longer ours to read."""
        return "llvm.func" in self.printed

    @property
    def is_ttgir(self) -> bool:
        """Still TritonGPU IR: layouts on the tensors (``ttg.num-warps`` set) and not yet
        lowered to the LLVM dialect (functions are ``tt.func``)."""
        return '"ttg.num-warps"' in self.printed and "tt.func" in self.printed and not self.is_llvm


def is_dump(text: str) -> bool:
    """True for the text of an IR dump (a header line of MLIR's IR printing at a line start)."""
    return text.startswith(_HEADER_START) or ("\n" + _HEADER_START) in text


def dumped_modules(text: str) -> list[DumpedModule]:
    """Every whole module of a dump, in the order printed (function-only copies and the
    software pipeliner's own dumps left out)."""
    modules = []
    lines = text.splitlines(keepends=True)
    header: Optional[re.Match] = None
    body: list[str] = []
    body_start = 0

    def finish():
        if header is not None and header.group("operation") in (None, "builtin.module"):
            printed = "".join(body)
            if printed.strip():
                modules.append(DumpedModule(header.group("when"), header.group("name"),
                                            header.group("argument") or header.group("old_argument") or "",
                                            printed, body_start))

    for number, line in enumerate(lines, start=1):
        if line.startswith("// -----//"):   # every header, ours or not, ends the copy before it
            finish()
            header = _HEADER.match(line.rstrip("\n"))
            body, body_start = [], number + 1
        else:
            body.append(line)
    finish()
    return modules


def _is_module_line(line: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(("#", "}", "module")) and not stripped.startswith("#!")


def pick_module(modules: list[DumpedModule], before: Optional[str] = None,
                after: Optional[str] = None) -> DumpedModule:
    """The module ``ll-opt`` reads from a dump: the one printed right before pass ``before``,
    the one right after pass ``after`` (the copy printed after it, else the copy printed before
    the next pass), or by default the last TTGIR one.  A pass that ran several times: its last run."""
    if not modules:
        raise DumpError("the dump holds no whole module (only headers, or copies of single functions)")
    wanted = before or after
    if wanted is None:
        ttgir = [m for m in modules if m.is_ttgir]
        if not ttgir:
            raise DumpError("the dump holds no TTGIR module (none has ttg.num-warps and tt.func); "
                            "name one with --from-dump-before or --from-dump-after")
        return ttgir[-1]
    runs = [i for i, m in enumerate(modules) if wanted in m.names()]
    if not runs:
        raise DumpError(f"no pass '{wanted}' in the dump; its passes: {', '.join(passes_in(modules))}")
    chosen = _module_around(modules, runs[-1], wanted, before is not None)
    if chosen.is_llvm:
        where = "before" if before is not None else "after"
        raise DumpError(f"the module {where} pass '{wanted}' is in the LLVM dialect (ConvertTritonGPUToLLVM "
                        "ran before it); ll-opt reads TTGIR: name an earlier pass, or leave out "
                        "--from-dump-before/--from-dump-after for the last TTGIR module", chosen.first_line)
    return chosen


def _module_around(modules: list[DumpedModule], index: int, wanted: str, before: bool) -> DumpedModule:
    """The module before (``before``) or after pass ``wanted``, whose last run printed modules[index]."""
    if before:
        if modules[index].when == "Before":
            return modules[index]
        if index > 0:   # a dump of "After" copies: what the pass before it left
            return modules[index - 1]
        raise DumpError(f"the dump has no module printed before pass '{wanted}'")
    if modules[index].when == "After":
        return modules[index]
    if index + 1 < len(modules):   # a dump of "Before" copies: what the next pass was given
        return modules[index + 1]
    raise DumpError(f"the dump ends with pass '{wanted}': it holds the module before it, not after "
                    f"(use --from-dump-before {wanted})")


def passes_in(modules: list[DumpedModule]) -> list[str]:
    """The passes of a dump, each once, in the order they first ran (class names)."""
    return list(dict.fromkeys(m.pass_name for m in modules))
