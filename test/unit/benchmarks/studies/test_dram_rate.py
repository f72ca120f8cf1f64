"""benchmarks/studies/dram_rate.py without a GPU: the summary, the report and the weight it writes."""

from __future__ import annotations

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "benchmarks", "studies"))
import dram_rate  # noqa: E402

RUN = {"gpu": "NVIDIA H100 80GB HBM3", "sms": 132, "triton": "3.6.0", "torch": "2.11.0",
       "patterns": {"copy": {"bytes": 2 << 30, "ms": 0.8, "tb_per_s": 2.684},
                    "read": {"bytes": 1 << 30, "ms": 0.36, "tb_per_s": 2.983}}}


def test_the_faster_pattern_sets_the_rate():
    summary = dram_rate.summarise(RUN, unit_ns=0.5)
    # 2.983 TB/s = 2983 bytes/ns over 132 SMs = 22.598 bytes/ns/SM; a byte: 1 / (22.598 x 0.5).
    assert summary["bytes_per_ns_per_sm"] == pytest.approx(2983 / 132)
    assert summary["dram_byte"] == pytest.approx(1 / (2983 / 132 * 0.5))
    text = dram_rate.render(RUN, summary)
    assert "| read | 1073741824 | 0.3600 | 2.983 |" in text and "**0.0885**" in text


def test_the_weight_is_written_beside_the_measured_constants(tmp_path):
    path = tmp_path / "weights.json"
    path.write_text(json.dumps({"sm_90": {"source": "calibrate", "weights": {"shuffle": 1.45}}}))
    dram_rate.write_weight(str(path), "sm_90", {"dram_byte": 0.088512}, "dram_rate on an H100")
    data = json.loads(path.read_text())
    assert data["sm_90"]["weights"] == {"shuffle": 1.45, "dram_byte": 0.0885}
    assert data["sm_90"]["source"] == "calibrate" and data["sm_90"]["dram_source"] == "dram_rate on an H100"
