"""ssx for Python.

- ``ssx.Sim(scene, ...)``: a world in this process, loaded as ``ssxd run`` loads it; stepped with
  the GIL released; state, readings and statistics as numpy arrays and dicts; ``reset(seed)``.
- ``ssx.connect(endpoint, prefix)``: the same calls on a running ssxd over Zenoh (``ssx.remote``).
- ``ssx.replay(recording)``: a recorded run as a ``Sim`` at step 0 whose steps are the run's,
  with its inputs and resets (docs/replay.md).
- ``ssx.Worlds(scene, count, ...)``: a batch of worlds of one scene stepped together on every
  core, with (worlds, robots, ...) arrays.
- ``ssx.envs``: PettingZoo, Gymnasium (single and vector), Stable-Baselines3 environments.

See docs/python.md in the repository.
"""

import os as _os

from ._ssx import (  # noqa: F401
    CommandError,
    Error,
    PluginError,
    SceneError,
    Sim,
    Worlds,
    _set_plugin_dir,
    abi_version,
    replay,
)

_HERE = _os.path.dirname(_os.path.abspath(__file__))

# The scenes' plugin libraries ship beside this module: found last, where ssxd looks "next to
# ssxd" (SSX_PLUGIN_PATH and the scene's own directory come first, as for ssxd).
_set_plugin_dir(_os.path.join(_HERE, "plugins"))


def data_dir():
    """The shipped artifacts, scenes and maps (a copy of the repository's ``artifacts/``)."""
    return _os.path.join(_HERE, "data")


def scene(name):
    """The path of a shipped scene: ``ssx.scene("dispersal.json")``."""
    path = _os.path.join(data_dir(), "scenes", name)
    if not _os.path.isfile(path):
        known = sorted(_os.listdir(_os.path.join(data_dir(), "scenes")))
        raise FileNotFoundError(f"no shipped scene '{name}' (shipped: {', '.join(known)})")
    return path


def connect(endpoint="tcp/127.0.0.1:7447", prefix="ssx/lab", timeout=10.0):
    """A running ssxd's world over Zenoh (its scene's Zenoh extension), with Sim's calls."""
    from .remote import Remote

    return Remote(endpoint=endpoint, prefix=prefix, timeout=timeout)


STATE_FIELDS = (
    "x", "y", "z", "qx", "qy", "qz", "qw", "vx", "vy", "vz", "wx", "wy", "wz",
)
"""The columns of ``Sim.states()``."""
