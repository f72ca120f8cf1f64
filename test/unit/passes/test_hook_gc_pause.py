"""passes.drop_in.plugin_pipeline.cyclic_gc_paused: Python's cyclic collector is off while our pipeline runs and
exactly as before afterwards, whatever happens inside (an error, a second pipeline at once)."""

import gc
import threading

import pytest

from linear_layouts.passes.drop_in import hook, plugin_pipeline


@pytest.fixture(autouse=True)
def collector_on_again():
    was_on = gc.isenabled()
    yield
    (gc.enable if was_on else gc.disable)()


def test_off_inside_on_after():
    gc.enable()
    with hook.cyclic_gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_back_on_after_an_error():
    gc.enable()
    with pytest.raises(ValueError):
        with hook.cyclic_gc_paused():
            raise ValueError("a pass failed")
    assert gc.isenabled()


def test_left_off_when_it_was_off():
    gc.disable()
    with hook.cyclic_gc_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_two_pipelines_at_once_the_last_one_turns_it_back_on():
    gc.enable()
    first_inside, second_done, first_may_end = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def first():
        with hook.cyclic_gc_paused():
            first_inside.set()
            first_may_end.wait(5)
        seen["after first"] = gc.isenabled()

    thread = threading.Thread(target=first)
    thread.start()
    first_inside.wait(5)
    with hook.cyclic_gc_paused():
        pass
    seen["after second, first still running"] = gc.isenabled()
    first_may_end.set()
    thread.join(5)
    assert seen == {"after second, first still running": False, "after first": True}


def test_the_pipeline_runs_with_the_collector_paused(monkeypatch):
    """run_plugin_pipeline pauses it around the passes (where the snapshot's objects are made)."""
    states = []
    monkeypatch.setattr(plugin_pipeline, "_run_plugin_pipeline", lambda *args: states.append(gc.isenabled()) or "result")
    gc.enable()
    assert hook.run_plugin_pipeline(None, None, {"name": "k"}, text="module {}") == "result"
    assert states == [False] and gc.isenabled()
