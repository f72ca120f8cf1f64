"""Jobs run in other processes (torch.compile's compile workers, multiprocessing's workers) to
ask whether the plugin is on there; importable by name, as those processes need."""

import os


def plugin_state():
    """(process id, the plugin's mode or None, its remarks flag) in the process that runs this."""
    import triton  # noqa: F401  (the start-up hook turns the plugin on right after this import)
    from linear_layouts.passes.drop_in import hook

    config = hook.active_config()
    return os.getpid(), (config.mode.value if config else None), bool(config and config.remarks)
