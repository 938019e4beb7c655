"""A running ssxd's world over Zenoh, with ``Sim``'s calls (``ssx.connect``).

The daemon's scene must have the Zenoh extension (docs/zenoh.md); this client speaks its control
protocol on ``P/control/in`` and ``P/control/out`` (one message each way a command) and sends
commands on the drivers' keys (``P/artifacts/<name>/cmd``). States and readings come with each
``step``'s answer, in the binary layout (docs/zenoh.md "Lockstep"), for the artifacts and sensors
given to ``observe``. The transport is the package's own (Rust, ``ssx._ssx.Link``): no other
package is needed.
"""

from __future__ import annotations

import json
import struct
import time as _time

import numpy as np

from ._ssx import CommandError, Error, Link

_HEAD = struct.Struct("<QdII")
_READING = struct.Struct("<QII")


class Remote:
    """A daemon's world. ``pause=True`` pauses it on connect (lockstep: it moves only on
    ``step``); ``observe``: the artifacts (and ``artifact/sensor`` readings) each step answers
    with, at most 64."""

    def __init__(self, endpoint="tcp/127.0.0.1:7447", prefix="ssx/lab", timeout=10.0, pause=True, observe=()):
        self.prefix = prefix.rstrip("/")
        self.timeout = float(timeout)
        self._link = Link(endpoint, self.prefix, self.timeout)
        self._last = {}
        self.steps = 0
        self.time = 0.0
        self.observe(observe)
        # The first question is a query (its reply is its own): once it is answered, the daemon
        # knows the subscription to its answers, and commands and answers pair up in order.
        deadline = _time.monotonic() + self.timeout
        while (reply := self._link.query("list", 0.5)) is None:
            if _time.monotonic() > deadline:
                raise TimeoutError(f"no ssxd answered on '{self.prefix}/control' at {endpoint} within {self.timeout} s")
        listing = json.loads(reply)
        if not listing.get("ok"):
            raise Error(listing.get("error", str(listing)))
        self.artifact_names = [a["name"] for a in listing["artifacts"]]
        if pause:
            self._state(self._ask("pause"))

    def _ask(self, command, wait=None):
        text = command if isinstance(command, str) else json.dumps(command)
        payload, binary = self._link.ask(text, wait or self.timeout)
        if binary:
            return payload
        answer = json.loads(payload)
        if not answer.get("ok"):
            raise Error(answer.get("error", str(answer)))
        return answer

    def _state(self, answer):
        self.steps = answer.get("step", self.steps)
        self.time = answer.get("time", self.time)
        return answer

    def observe(self, names):
        """What each ``step`` answers with from now on: artifact names (their first body's
        state) and ``artifact/sensor`` names (the newest reading)."""
        self._observe = list(names)
        self._step_cmd = {}

    def step(self, n=1):
        """Runs ``n`` steps on the paused daemon and waits for them (lockstep)."""
        cmd = self._step_cmd.get(n)
        if cmd is None:
            cmd = self._step_cmd[n] = json.dumps(
                {"cmd": "step", "n": int(n), "observe": self._observe, "encoding": "binary"})
        self._decode(self._ask(cmd))

    def _decode(self, b):
        step, t, count, _remaining = _HEAD.unpack_from(b, 0)
        self.steps, self.time = step, t
        at, last = _HEAD.size, {}
        for name in self._observe[:count]:
            if "/" in name:
                taken, k, _ = _READING.unpack_from(b, at)
                at += _READING.size
                last[name] = np.frombuffer(b, np.float64, k, at)
                at += 8 * k
            else:
                s = np.frombuffer(b, np.float64, 13, at)
                # (w, x, y, z) on the wire; (x, y, z, w) in rows, as Sim.states.
                last[name] = np.concatenate([s[0:3], s[4:7], s[3:4], s[7:13]])
                at += 104
        self._last = last

    def pause(self):
        self._state(self._ask("pause"))

    def resume(self):
        self._state(self._ask("resume"))

    def reset(self, seed=None):
        """The daemon's world from step 0 (with ``seed`` as the scene's seed, if given)."""
        self._state(self._ask({"cmd": "reset", "seed": seed} if seed is not None else "reset"))
        self._last = {}

    def stats(self):
        return self._ask("stats")

    def states(self, artifacts=None, out=None):
        """The observed artifacts' states as of the last ``step`` (rows as ``Sim.states``)."""
        names = artifacts if artifacts is not None else [n for n in self._observe if "/" not in n]
        try:
            rows = [self._last[n] for n in names]
        except KeyError as e:
            raise KeyError(f"{e.args[0]} is not observed: call observe([...]) and step first") from None
        a = np.array(rows, dtype=np.float64).reshape(len(names), 13)
        if out is not None:
            out[...] = a
            return out
        return a

    def reading(self, artifact, sensor):
        try:
            return np.array(self._last[f"{artifact}/{sensor}"])
        except KeyError:
            raise KeyError(f"'{artifact}/{sensor}' is not observed: call observe([...]) and step first") from None

    def readings(self, sensor, artifacts):
        rows = [self.reading(a, sensor) for a in artifacts]
        width = max((len(r) for r in rows), default=0)
        out = np.full((len(rows), width), np.nan)
        for i, r in enumerate(rows):
            out[i, : len(r)] = r
        return out

    def command(self, artifact, command, key=None):
        """Publishes a driver's command (a dict, or JSON text) on ``P/artifacts/<name>/cmd``; the
        daemon checks it (a malformed one is dropped and counted there, not raised here)."""
        if artifact not in self.artifact_names:
            raise KeyError(f"no artifact named '{artifact}'")
        if isinstance(command, dict):
            command = json.dumps(command)
        if isinstance(command, str):
            command = command.encode()
        self._link.put(key or f"artifacts/{artifact}/cmd", command)
        return True

    def command_many(self, artifacts, values, fields=("linear", "angular")):
        values = np.asarray(values, dtype=np.float64)
        if values.shape != (len(artifacts), len(fields)):
            raise ValueError(f"values has shape {values.shape}; expected ({len(artifacts)}, {len(fields)})")
        if not np.isfinite(values).all():
            raise CommandError("a command value is not finite")
        for name, row in zip(artifacts, values):
            self.command(name, dict(zip(fields, row.tolist())))
        return len(artifacts)

    def close(self):
        self._link.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
