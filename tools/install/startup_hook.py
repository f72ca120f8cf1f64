"""Install or remove the plugin's start-up hook in a Python environment's site-packages.

A wheel installs the hook itself (``build_with_startup_hook.py``); an editable install
(``pip install -e .``, what the Makefile does) cannot, so::

    python tools/install/startup_hook.py install     # the running interpreter's site-packages
    python tools/install/startup_hook.py remove
    python tools/install/startup_hook.py status
"""

import os
import shutil
import sys
import sysconfig

STARTUP_HOOK = "linear_layouts_startup.pth"
HOOK_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), STARTUP_HOOK)


def installed_path() -> str:
    return os.path.join(sysconfig.get_paths()["purelib"], STARTUP_HOOK)


def main(argv) -> int:
    if len(argv) != 1 or argv[0] not in ("install", "remove", "status"):
        print(f"usage: {sys.executable} {__file__} install|remove|status", file=sys.stderr)
        return 1
    path = installed_path()
    if argv[0] == "install":
        shutil.copyfile(HOOK_SOURCE, path)
        print(f"installed {path}")
    elif argv[0] == "remove":
        if os.path.exists(path):
            os.remove(path)
        print(f"removed {path}")
    else:
        print(f"{path}: {'installed' if os.path.exists(path) else 'not installed'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
