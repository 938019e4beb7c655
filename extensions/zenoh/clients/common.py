"""Shared by the stand-in clients: a Zenoh session on one endpoint, nothing else."""

import json
import time

import zenoh


def open_session(endpoint: str, wait: float = 30.0) -> "zenoh.Session":
    """A client session connected to the daemon only (no scouting, no listening), retried for
    `wait` seconds while the daemon starts."""
    deadline = time.monotonic() + wait
    while True:
        conf = zenoh.Config()
        conf.insert_json5("mode", '"client"')
        conf.insert_json5("connect/endpoints", json.dumps([endpoint]))
        conf.insert_json5("scouting/multicast/enabled", "false")
        try:
            return zenoh.open(conf)
        except zenoh.ZError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def control(session: "zenoh.Session", prefix: str, command: str, timeout: float = 5.0) -> dict:
    """Sends one command to the daemon's control queryable and returns its JSON answer."""
    for reply in session.get(f"{prefix}/control", payload=command, timeout=timeout):
        if reply.ok is not None:
            return json.loads(reply.ok.payload.to_string())
        return json.loads(reply.err.payload.to_string())
    raise TimeoutError(f"no answer to '{command}' from {prefix}/control within {timeout} s")
