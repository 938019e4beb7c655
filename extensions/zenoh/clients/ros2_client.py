#!/usr/bin/env python3
"""A ROS 2 client of a running ssxd, written from rmw_zenoh's design document (docs/design.md in
ros2/rmw_zenoh) and nothing of ssx's code: Zenoh (eclipse-zenoh) for the wire, rosbags for CDR and
RIHS01 type hashes. It does what a ROS 2 node with rmw_zenoh does, and checks what it gets:

1. finds the node and its topics and services through liveliness tokens alone
   (`@ros2_lv/<domain>/<zid>/<nid>/<eid>/<kind>/<enclave>/<namespace>/<node>[/<name>/<type>/<hash>/<qos>]`),
   and checks every type hash against rosbags';
2. receives /clock, /tf, the robot's odom and scan, decodes them and checks the 33-byte attachment
   (sequence number, source timestamp, GID length 16, GID);
3. publishes cmd_vel and measures the robot's speed from odom;
4. pauses, steps one step, steps N with step_n, resets and resumes through the node's services and topic,
   following /clock (which a paused node sends again twice a second);
5. gets the latched /map and /tf_static as a late joiner (an advanced subscriber with history, as
   rmw_zenoh's TRANSIENT_LOCAL subscriptions are).

    python3 -m pip install eclipse-zenoh==1.10.2 rosbags==0.11.9
    ./target/release/ssxd run artifacts/scenes/ros2.json --duration 60 &
    python3 extensions/zenoh/clients/ros2_client.py --map artifacts/maps/office.png

Exit status 0 and a `summary:` line when every check passed; otherwise 1 and the check that failed.
"""

import argparse
import math
import os
import struct
import sys
import threading
import time

import numpy as np
import zenoh
import zenoh.ext
from rosbags.typesys import Stores, get_typestore, get_types_from_msg

TS = get_typestore(Stores.ROS2_JAZZY)
# rosbags has no service types: the request and response are plain messages for CDR.
TS.register(get_types_from_msg("", "std_srvs/msg/Trigger_Request"))
TS.register(get_types_from_msg("bool success\nstring message\n", "std_srvs/msg/Trigger_Response"))

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "ros2", "fixtures"))
from generate import service_hash  # noqa: E402  (rosbags' REP-2016 hash, for services)


class Failed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failed(what)


def ros_type(dds):
    """`pkg::msg::dds_::Name_` -> `pkg/msg/Name` (the design document's type names)."""
    parts = dds.split("::")
    return f"{parts[0]}/{parts[1]}/{parts[-1][:-1]}"


def demangle(s):
    return s.replace("%", "/")


class Entity:
    def __init__(self, key):
        p = str(key).split("/")
        check(p[0] == "@ros2_lv" and len(p) in (9, 13), f"malformed liveliness token {key}")
        self.domain, self.zid, self.nid, self.eid, self.kind = p[1], p[2], p[3], p[4], p[5]
        self.namespace = "" if p[7] == "%" else demangle(p[7])
        self.node = p[8]
        if len(p) == 13:
            self.name, self.dds, self.hash, self.qos = demangle(p[9]), p[10], p[11], p[12]

    def data_key(self):
        return f"{self.domain}/{self.name.lstrip('/')}/{self.dds}/{self.hash}"


def attachment(seq, gid):
    """rmw_zenoh's attachment: int64 sequence number, int64 source timestamp, 16 as one byte,
    then the 16-byte GID (docs/design.md, "Publishers")."""
    return struct.pack("<qqB", seq, time.time_ns(), 16) + gid


def read_attachment(sample):
    b = sample.attachment.to_bytes() if sample.attachment is not None else b""
    check(len(b) == 33 and b[16] == 16, f"attachment of {len(b)} bytes on {sample.key_expr}: expected 33")
    seq, ts = struct.unpack_from("<qq", b)
    return seq, ts, b[17:]


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    check(head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG")
    return struct.unpack(">II", head[16:24])


class Topic:
    """A subscription that decodes every sample and keeps them with their attachments."""

    def __init__(self, session, entity, latched=False):
        self.entity = entity
        self.type = ros_type(entity.dds)
        self.samples = []
        self.lock = threading.Lock()
        if latched:
            self.sub = zenoh.ext.declare_advanced_subscriber(
                session, entity.data_key(), self.on,
                history=zenoh.ext.HistoryConfig(detect_late_publishers=True))
        else:
            self.sub = session.declare_subscriber(entity.data_key(), self.on)

    def on(self, sample):
        msg = TS.deserialize_cdr(sample.payload.to_bytes(), self.type)
        seq, _, gid = read_attachment(sample)
        with self.lock:
            self.samples.append((time.monotonic(), seq, gid, msg))

    def wait(self, n, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self.lock:
                if len(self.samples) >= n:
                    return list(self.samples)
            time.sleep(0.01)
        raise Failed(f"{self.entity.name}: {len(self.samples)} messages in {timeout} s, expected {n}")

    def last(self):
        with self.lock:
            return self.samples[-1][3] if self.samples else None


def clock_s(msg):
    return msg.clock.sec + msg.clock.nanosec * 1e-9


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--connect", default="tcp/127.0.0.1:7447")
    ap.add_argument("--config", help="a Zenoh client configuration (JSON5) to start from, e.g. "
                    "artifacts/zenoh/client.json5 for a daemon behind mutual TLS (docs/zenoh.md "
                    "\"Security\"); --connect overrides its endpoints")
    ap.add_argument("--domain", default="0")
    ap.add_argument("--node", default="ssx")
    ap.add_argument("--robot", default="rover")
    ap.add_argument("--laser", default="laser", help="the robot's scanner sensor (its frame)")
    ap.add_argument("--camera", default="", help="the robot's camera sensor, to check its image, depth and "
                    "camera_info (none by default)")
    ap.add_argument("--speed", type=float, default=0.3, help="commanded linear speed (m/s)")
    ap.add_argument("--timestep", type=float, default=0.01)
    ap.add_argument("--map", help="the scene's map image (PNG), to check /map's size against")
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--churn", type=float, default=0.0, metavar="SECONDS",
                    help="instead of the check: for this long, every --period a new session finds the "
                    "node, reads /clock, sends one cmd_vel and leaves (the soak's ROS 2 visitor); "
                    "prints 'churn: N sessions, M failed'")
    ap.add_argument("--period", type=float, default=0.2)
    a = ap.parse_args()

    conf = zenoh.Config.from_file(a.config) if a.config else zenoh.Config()
    conf.insert_json5("mode", '"client"')
    conf.insert_json5("connect/endpoints", f'["{a.connect}"]')
    conf.insert_json5("scouting/multicast/enabled", "false")
    if a.churn > 0:
        churn(conf, a)
        return
    session = zenoh.open(conf)
    try:
        summary = run(session, a)
    finally:
        session.close()
    print("summary: " + summary)


def churn(conf, a):
    """Sessions that come and go: each finds the node, reads /clock and sends one cmd_vel."""
    ok = failed = 0
    end = time.monotonic() + a.churn
    nxt = time.monotonic()
    twist_t = "geometry_msgs/msg/Twist"
    vec = TS.types["geometry_msgs/msg/Vector3"]
    payload = bytes(TS.serialize_cdr(TS.types[twist_t](linear=vec(x=0.1, y=0.0, z=0.0),
                                                 angular=vec(x=0.0, y=0.0, z=0.0)), twist_t))
    while time.monotonic() < end:
        session = None
        try:
            session = zenoh.open(conf)
            ents = [Entity(r.ok.key_expr) for r in session.liveliness().get(f"@ros2_lv/{a.domain}/**", timeout=2)
                    if r.ok is not None]
            mine = {(e.kind, e.name): e for e in ents if e.kind != "NN" and e.node == a.node}
            check(("MP", "/clock") in mine, f"node '{a.node}' has no /clock")
            clock = Topic(session, mine[("MP", "/clock")])
            clock.wait(1, 2.0)
            key = mine.get(("MS", f"/{a.robot}/cmd_vel"))
            if key is not None:
                session.put(key.data_key(), payload, attachment=attachment(1, os.urandom(16)))
            clock.sub.undeclare()
            ok += 1
        except Exception as e:  # counted, and the first few said
            failed += 1
            if failed <= 3:
                print(f"churn: a session failed: {e}", file=sys.stderr)
        finally:
            if session is not None:
                session.close()
        nxt += a.period
        time.sleep(max(0.0, nxt - time.monotonic()))
        nxt = max(nxt, time.monotonic())
    print(f"churn: {ok} sessions, {failed} failed")


def discover(session, a):
    """The node's entities, from liveliness tokens only, once the robot's topics are there."""
    wanted = {("MP", "/clock"), ("MP", "/tf"), ("MP", "/tf_static"), ("MP", f"/{a.robot}/odom"),
              ("MP", f"/{a.robot}/scan"), ("MS", f"/{a.robot}/cmd_vel"), ("SS", f"/{a.node}/pause"),
              ("SS", f"/{a.node}/resume"), ("SS", f"/{a.node}/step"), ("SS", f"/{a.node}/reset"),
              ("MS", f"/{a.node}/step_n")}
    if a.map:
        wanted.add(("MP", "/map"))
    if a.camera:
        wanted |= {("MP", f"/{a.robot}/{a.camera}/{t}") for t in ("image", "depth", "camera_info")}
    end = time.monotonic() + a.timeout
    while True:
        ents = [Entity(r.ok.key_expr) for r in session.liveliness().get(f"@ros2_lv/{a.domain}/**", timeout=2)
                if r.ok is not None]
        node = [e for e in ents if e.kind == "NN" and e.node == a.node]
        mine = {(e.kind, e.name): e for e in ents if e.kind != "NN" and e.node == a.node}
        if node and wanted <= set(mine):
            return node[0], mine
        if time.monotonic() > end:
            missing = sorted(wanted - set(mine))
            raise Failed(f"node '{a.node}' {'found' if node else 'not found'}; missing {missing}")
        time.sleep(0.2)


def run(session, a):
    node, ents = discover(session, a)
    for e in ents.values():
        check(e.zid == node.zid and e.nid == node.nid, f"{e.name} is not on the node's session")
        t = ros_type(e.dds)
        if t.split("/")[1] == "srv":
            pkg, _, name = t.split("/")
            expected = service_hash(pkg, name, "", "bool success\nstring message\n")
        else:
            expected = TS.hash_rihs01(t)
        check(e.hash == expected, f"{e.name}: type hash {e.hash}, rosbags computes {expected}")

    # 2. Topics in, decoded.
    clock = Topic(session, ents[("MP", "/clock")])
    tf = Topic(session, ents[("MP", "/tf")])
    odom = Topic(session, ents[("MP", f"/{a.robot}/odom")])
    scan = Topic(session, ents[("MP", f"/{a.robot}/scan")])
    ticks = clock.wait(20, a.timeout)
    times = [clock_s(m) for _, _, _, m in ticks]
    check(all(t2 > t1 for t1, t2 in zip(times, times[1:])), "/clock does not advance")
    seqs = [s for _, s, _, _ in ticks]
    # /clock is best effort (rclcpp's ClockQoS): a message may be lost under load, never reordered
    # or repeated.
    check(all(s2 > s1 for s1, s2 in zip(seqs, seqs[1:])), f"/clock sequence numbers do not increase: {seqs}")
    check(len({g for _, _, g, _ in ticks}) == 1 and ticks[0][2] != bytes(16), "/clock's GID changes or is zero")
    frames = {t.child_frame_id: t.header.frame_id for t in tf.wait(3, a.timeout)[-1][3].transforms}
    check(frames.get(f"{a.robot}/base_link") == "odom", f"/tf: {frames}")
    o = odom.wait(3, a.timeout)[-1][3]
    check(o.header.frame_id == "odom" and o.child_frame_id == f"{a.robot}/base_link",
          f"odom frames {o.header.frame_id} -> {o.child_frame_id}")
    s = scan.wait(2, a.timeout)[-1][3]
    check(s.header.frame_id == f"{a.robot}/{a.laser}", f"scan frame {s.header.frame_id}")
    check(len(s.ranges) > 0 and math.isclose(s.angle_min + (len(s.ranges) - 1) * s.angle_increment,
                                             s.angle_max, abs_tol=1e-4), "scan angles and ranges disagree")
    finite = [r for r in s.ranges if np.isfinite(r)]
    check(all(s.range_min <= r <= s.range_max for r in finite), "scan ranges beyond their limits")

    seen = camera(session, ents, a) if a.camera else ""

    # 3. cmd_vel: drive at the commanded speed, measured from odom over the last second.
    cmd = session.declare_publisher(ents[("MS", f"/{a.robot}/cmd_vel")].data_key())
    twist_t = "geometry_msgs/msg/Twist"
    vec = TS.types["geometry_msgs/msg/Vector3"]
    gid = os.urandom(16)
    payload = bytes(TS.serialize_cdr(TS.types[twist_t](linear=vec(x=a.speed, y=0.0, z=0.0),
                                                 angular=vec(x=0.0, y=0.0, z=0.0)), twist_t))
    start = len(odom.samples)
    t0 = time.monotonic()
    seq = 0
    while time.monotonic() - t0 < 2.5:
        seq += 1
        cmd.put(payload, attachment=attachment(seq, gid))
        time.sleep(0.05)
    with odom.lock:
        run_odom = [(m.header.stamp.sec + m.header.stamp.nanosec * 1e-9, m) for _, _, _, m in odom.samples[start:]]
    last = [(t, m) for t, m in run_odom if t >= run_odom[-1][0] - 1.0]
    check(len(last) >= 10, f"{len(last)} odom messages in the last second of driving")
    speed = np.mean([m.twist.twist.linear.x for _, m in last])
    (ta, ma), (tb, mb) = last[0], last[-1]
    travelled = math.hypot(mb.pose.pose.position.x - ma.pose.pose.position.x,
                           mb.pose.pose.position.y - ma.pose.pose.position.y) / (tb - ta)
    for what, v in (("odom twist", speed), ("odom positions", travelled)):
        check(abs(v - a.speed) <= 0.05 * a.speed, f"{what}: {v:.4f} m/s, commanded {a.speed} (5%)")
    cmd.undeclare()

    # 4. pause, step, step_n, resume.
    def call(service):
        e = ents[("SS", f"/{a.node}/{service}")]
        request = bytes(TS.serialize_cdr(
            TS.types["std_srvs/msg/Trigger_Request"](structure_needs_at_least_one_member=0),
            "std_srvs/msg/Trigger_Request"))
        n = call.seq = getattr(call, "seq", 0) + 1
        replies = list(session.get(e.data_key(), payload=request, attachment=attachment(n, gid),
                                   target=zenoh.QueryTarget.ALL_COMPLETE, timeout=5))
        check(len(replies) == 1 and replies[0].ok is not None, f"/{a.node}/{service}: {len(replies)} replies")
        r = replies[0].ok
        rseq, _, rgid = read_attachment(r)
        check(rseq == n and rgid == gid, f"/{a.node}/{service}: the reply's attachment is not the request's")
        return TS.deserialize_cdr(r.payload.to_bytes(), "std_srvs/msg/Trigger_Response")

    def settled_clock():
        time.sleep(0.3)
        return clock_s(clock.last())

    def clock_reaching(want):
        # /clock is best effort: the last message of a burst may be lost, and a paused node sends
        # its time again (at once, then twice a second). Wait up to 5 s for `want` (the caller
        # checks what came).
        got, end = settled_clock(), time.monotonic() + 5
        while time.monotonic() < end and not math.isclose(got, want, abs_tol=1e-6):
            got = settled_clock()
        return got

    r = call("pause")
    check(r.success and r.message.startswith("paused at step"), f"pause: {r.success} {r.message!r}")
    paused_at = settled_clock()
    check(settled_clock() == paused_at, "/clock advanced while paused")
    # Paused, the node sends its time again twice a second: two or more in 1.2 s, all the same.
    with clock.lock:
        before = len(clock.samples)
    time.sleep(1.2)
    with clock.lock:
        again = [clock_s(m) for _, _, _, m in clock.samples[before:]]
    check(len(again) >= 2 and set(again) == {paused_at}, f"/clock while paused: {again}, paused at {paused_at}")
    r = call("step")
    check(r.success, f"step: {r.message}")
    one = clock_reaching(paused_at + a.timestep)
    check(math.isclose(one - paused_at, a.timestep, abs_tol=1e-6), f"step: the clock moved {one - paused_at} s")
    step_n = session.declare_publisher(ents[("MS", f"/{a.node}/step_n")].data_key())
    u32 = "std_msgs/msg/UInt32"
    step_n.put(bytes(TS.serialize_cdr(TS.types[u32](data=10), u32)), attachment=attachment(1, gid))
    ten = clock_reaching(one + 10 * a.timestep)
    check(math.isclose(ten - one, 10 * a.timestep, abs_tol=1e-6), f"step_n 10: the clock moved {ten - one} s")
    # reset: step 0, still paused; the next step's /clock is one timestep.
    r = call("reset")
    check(r.success and r.message.startswith("reset to step 0 (t = 0 s)") and r.message.endswith("paused"),
          f"reset: {r.success} {r.message!r}")
    r = call("step")
    check(r.success, f"step after reset: {r.message}")
    first = clock_reaching(a.timestep)
    check(math.isclose(first, a.timestep, abs_tol=1e-9), f"/clock after reset and a step: {first} s")
    r = call("resume")
    check(r.success and r.message.startswith("running"), f"resume: {r.message!r}")
    check(settled_clock() > first, "/clock did not advance after resume")

    # 5. Latched topics, joined late.
    static = Topic(session, ents[("MP", "/tf_static")], latched=True)
    tfs = {(t.header.frame_id, t.child_frame_id): t for t in static.wait(1, a.timeout)[0][3].transforms}
    check(("map", "odom") in tfs, f"/tf_static: {sorted(tfs)}")
    laser = tfs.get((f"{a.robot}/base_link", f"{a.robot}/{a.laser}"))
    check(laser is not None, f"/tf_static has no {a.robot}/{a.laser}: {sorted(tfs)}")
    done = f"tf_static {len(tfs)} transforms"
    if a.camera:
        optical = tfs.get((f"{a.robot}/base_link", f"{a.robot}/{a.camera}_optical"))
        check(optical is not None, f"/tf_static has no {a.robot}/{a.camera}_optical: {sorted(tfs)}")
        # The optical z axis (ahead) in base_link: q (0, 0, 1) q*, from the quaternion alone.
        q = optical.transform.rotation
        ahead = (2 * (q.x * q.z + q.w * q.y), 2 * (q.y * q.z - q.w * q.x), 1 - 2 * (q.x * q.x + q.y * q.y))
        check(ahead[0] > 0.9 and abs(ahead[1]) < 1e-9, f"the camera's optical z is {ahead} in base_link")
        done += f", camera looking along {tuple(round(x, 4) for x in ahead)}"
    if a.map:
        grid = Topic(session, ents[("MP", "/map")], latched=True).wait(1, a.timeout)[0][3]
        w, h = png_size(a.map)
        check((grid.info.width, grid.info.height) == (w, h), f"/map is {grid.info.width}x{grid.info.height}, the image {w}x{h}")
        occupied = int(np.count_nonzero(grid.data == 100))
        check(0 < occupied < w * h and set(np.unique(grid.data)) <= {0, 100}, "/map cells")
        done += f", map {w}x{h} with {occupied} occupied cells"
    return (f"node '{a.node}' with {len(ents)} topics and services; clock {len(ticks)}+ msgs; "
            f"odom {speed:.4f} m/s (positions {travelled:.4f}) for {a.speed} commanded; "
            f"pause/step/step_n/reset/resume ok; {seen}{done}")


def camera(session, ents, a):
    """The camera's three topics: sizes, encodings and frames agree; depths are metres within the
    clip range or +inf; the calibration's principal point is the image centre."""
    cam = f"/{a.robot}/{a.camera}"
    image, depth, info = (Topic(session, ents[("MP", f"{cam}/{t}")]) for t in ("image", "depth", "camera_info"))
    frame = f"{a.robot}/{a.camera}_optical"
    im = image.wait(2, a.timeout)[-1][3]
    w, h = im.width, im.height
    check(im.encoding == "rgb8" and im.step == 3 * w and len(im.data) == 3 * w * h and w * h > 0,
          f"{cam}/image: {w}x{h} {im.encoding}, step {im.step}, {len(im.data)} bytes")
    check(im.header.frame_id == frame, f"{cam}/image frame {im.header.frame_id}")
    dm = depth.wait(2, a.timeout)[-1][3]
    check((dm.width, dm.height, dm.encoding, dm.step, len(dm.data)) == (w, h, "32FC1", 4 * w, 4 * w * h),
          f"{cam}/depth: {dm.width}x{dm.height} {dm.encoding}, step {dm.step}, {len(dm.data)} bytes")
    d = np.frombuffer(bytes(dm.data), dtype="<f4")
    seen = d[np.isfinite(d)]
    check(len(seen) > 0 and np.all(seen >= 0.0), f"{cam}/depth: {len(seen)} finite depths, least {seen.min(initial=0)}")
    check(np.all(np.isfinite(d) | (d == np.inf) | np.isnan(d)), f"{cam}/depth has -inf")
    ci = info.wait(1, a.timeout)[-1][3]
    check((ci.width, ci.height, ci.header.frame_id) == (w, h, frame), f"{cam}/camera_info {ci.width}x{ci.height} {ci.header.frame_id}")
    check(ci.k[0] > 0 and ci.k[4] > 0 and (ci.k[2], ci.k[5], ci.k[8]) == ((w - 1) / 2, (h - 1) / 2, 1.0),
          f"{cam}/camera_info K {list(ci.k)}")
    return f"camera {w}x{h} rgb8 + 32FC1 ({len(seen)} pixels see something) fx {ci.k[0]:.1f}; "


if __name__ == "__main__":
    try:
        main()
    except Failed as e:
        print(f"FAILED: {e}", file=sys.stderr)
        sys.exit(1)
