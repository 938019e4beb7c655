"""The package's build backend: maturin's, after two copies into the package.

- The workspace's plugin libraries (``cargo build --release --workspace``, the README's build:
  nothing to do when it ran already) go to ``ssx/plugins``, without their debug info, where the
  module finds a scene's libraries last, in place of "next to ssxd".
- The shipped artifacts, scenes and maps (``artifacts/``) go to ``ssx/data``, for ``ssx.scene``.
"""

import glob
import os
import shutil
import subprocess

from maturin import *  # noqa: F401,F403  (the PEP 517 hooks)
from maturin import build_editable as _build_editable
from maturin import build_wheel as _build_wheel

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _copy_into_package():
    if os.environ.get("SSX_SKIP_CARGO") != "1":
        subprocess.run(["cargo", "build", "--release", "--workspace"], cwd=ROOT, check=True)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    plugins = os.path.join(HERE, "ssx", "plugins")
    shutil.rmtree(plugins, ignore_errors=True)
    os.makedirs(plugins)
    found = 0
    for lib in sorted(glob.glob(os.path.join(target, "release", "libssx_*.so"))):
        if os.path.basename(lib).startswith("libssx_test_"):
            continue
        copy = shutil.copy2(lib, plugins)
        # No debug info in the wheel (the Zenoh extension alone is 118 MB with it): the
        # dynamic symbols the loader looks up stay.
        if shutil.which("strip"):
            subprocess.run(["strip", "--strip-debug", copy], check=True)
        found += 1
    if found == 0:
        raise RuntimeError(f"no plugin library (libssx_*.so) in {target}/release")
    data = os.path.join(HERE, "ssx", "data")
    shutil.rmtree(data, ignore_errors=True)
    for part in ("library", "scenes", "maps", "robots"):
        shutil.copytree(os.path.join(ROOT, "artifacts", part), os.path.join(data, part))


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _copy_into_package()
    return _build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    _copy_into_package()
    return _build_editable(wheel_directory, config_settings, metadata_directory)
