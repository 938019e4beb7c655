#!/usr/bin/env python3
"""A ROS 2 client of a running ssxd's robot models, written from rmw_zenoh's design document and
ROS 2's conventions (robot_state_publisher, ros2_control's joint_state_broadcaster and
forward_command_controller), not from ssx's code: Zenoh (eclipse-zenoh) for the wire, rosbags for
CDR and RIHS01 type hashes, the URDF read with Python's XML parser. For each robot named, it

1. finds `<robot>/robot_description` (std_msgs/String, latched), `<robot>/joint_states`
   (sensor_msgs/JointState), `<robot>/joint_commands` (std_msgs/Float64MultiArray), /tf and
   /tf_static through liveliness tokens, and checks their type hashes against rosbags';
2. gets the URDF as a late joiner and checks that joint_states names its revolute, continuous and
   prismatic joints in file order, and that /tf and /tf_static place every link of the URDF as
   `<robot>/<link>`, each chain of parents ending in `odom` (what RViz2's RobotModel needs);
3. publishes joint_commands and checks that joint_states reaches them: positions for an arm
   (`--positions`), wheel rates for a mobile robot (`--rates`, then the robot must have moved).

    python3 -m pip install eclipse-zenoh==1.10.2 rosbags==0.11.9
    ./target/release/ssxd run artifacts/scenes/robots-ros2.json --duration 60 &
    python3 extensions/zenoh/clients/ros2_robot_client.py --robot arm --positions 0.3,-0.4,0.2,-1.8,0.1,1.6,0.5,0.02,0.02
    python3 extensions/zenoh/clients/ros2_robot_client.py --robot tb3 --rates 4,4

Exit status 0 and a `summary:` line when every check passed; otherwise 1 and the check that failed.
"""

import argparse
import math
import os
import sys
import time
import xml.etree.ElementTree as ET

import zenoh

sys.path.insert(0, os.path.dirname(__file__))
from ros2_client import TS, Entity, Failed, Topic, attachment, check, ros_type  # noqa: E402


def discover(session, a):
    r = f"/{a.robot}"
    wanted = {("MP", f"{r}/robot_description"), ("MP", f"{r}/joint_states"),
              ("MS", f"{r}/joint_commands"), ("MP", "/tf"), ("MP", "/tf_static")}
    end = time.monotonic() + a.timeout
    while True:
        ents = [Entity(x.ok.key_expr) for x in session.liveliness().get(f"@ros2_lv/{a.domain}/**", timeout=2)
                if x.ok is not None]
        mine = {(e.kind, e.name): e for e in ents if e.kind != "NN" and e.node == a.node}
        if wanted <= set(mine):
            return mine
        if time.monotonic() > end:
            raise Failed(f"missing {sorted(wanted - set(mine))}")
        time.sleep(0.2)


def run(session, a):
    ents = discover(session, a)
    r = a.robot
    for key, e in ents.items():
        if key[1].startswith(f"/{r}/") or key[1] in ("/tf", "/tf_static"):
            t = ros_type(e.dds)
            check(e.hash == TS.hash_rihs01(t), f"{e.name}: type hash {e.hash}, rosbags computes {TS.hash_rihs01(t)}")

    # 2. The URDF, as a late joiner; the joints and frames it names.
    desc = Topic(session, ents[("MP", f"/{r}/robot_description")], latched=True)
    urdf = ET.fromstring(desc.wait(1, a.timeout)[-1][3].data)
    links = [l.get("name") for l in urdf.findall("link") if l.get("name") != "world"]
    movable = [j.get("name") for j in urdf.findall("joint") if j.get("type") in ("revolute", "continuous", "prismatic")]
    check(links and movable, f"the URDF has {len(links)} links and {len(movable)} movable joints")
    states = Topic(session, ents[("MP", f"/{r}/joint_states")])
    js = states.wait(3, a.timeout)[-1][3]
    check(list(js.name) == movable, f"joint_states names {list(js.name)}, the URDF's movable joints are {movable}")
    check(len(js.position) == len(js.name) == len(js.velocity), "joint_states' arrays differ in length")

    statics = Topic(session, ents[("MP", "/tf_static")], latched=True)
    tf = Topic(session, ents[("MP", "/tf")])
    parent = {}
    for m in [s[3] for s in statics.wait(1, a.timeout)] + [s[3] for s in tf.wait(5, a.timeout)]:
        for t in m.transforms:
            parent[t.child_frame_id] = t.header.frame_id
    for link in links:
        frame, hops = f"{r}/{link}", 0
        check(frame in parent, f"link '{link}': no frame '{frame}' in /tf or /tf_static")
        while frame in parent and hops < 64:
            frame, hops = parent[frame], hops + 1
        check(frame in ("odom", "map"), f"link '{link}': its chain of frames ends in '{frame}', not odom")

    # 3. Commands in, joint states out.
    pub = session.declare_publisher(ents[("MS", f"/{r}/joint_commands")].data_key())
    arr_t = "std_msgs/msg/Float64MultiArray"
    layout = TS.types["std_msgs/msg/MultiArrayLayout"](dim=[], data_offset=0)
    values = [float(v) for v in (a.positions or a.rates).split(",")]
    payload = bytes(TS.serialize_cdr(TS.types[arr_t](layout=layout, data=__import__("numpy").array(values)), arr_t))
    root = f"{r}/{links[0]}"

    def where():
        with tf.lock:
            for s in reversed(tf.samples):
                for t in s[3].transforms:
                    if t.child_frame_id == root:
                        return t.transform.translation
        return None

    start = where()
    gid, seq, t0 = os.urandom(16), 0, time.monotonic()
    reached = None
    while time.monotonic() - t0 < a.timeout:
        seq += 1
        pub.put(payload, attachment=attachment(seq, gid))
        time.sleep(0.05)
        js = states.last()
        got = list(js.position if a.positions else js.velocity)
        if all(abs(g - w) <= a.tolerance * max(1.0, abs(w)) for g, w in zip(got, values)) \
                and time.monotonic() - t0 > 1.0:
            reached = got
            break
    check(reached is not None, f"joint_states {got} never reached the commanded {values} (±{a.tolerance})")
    summary = f"robot '{r}': {len(links)} links, {len(movable)} joints, reached {['%.3f' % v for v in reached]}"
    if a.rates:
        time.sleep(1.0)
        end = where()
        moved = math.hypot(end.x - start.x, end.y - start.y)
        check(moved > 0.05, f"{root} moved {moved:.3f} m while its wheels turned")
        summary += f", moved {moved:.2f} m"
    pub.undeclare()
    return summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--connect", default="tcp/127.0.0.1:7447")
    ap.add_argument("--domain", default="0")
    ap.add_argument("--node", default="ssx")
    ap.add_argument("--robot", required=True)
    ap.add_argument("--positions", help="commanded positions, comma-separated, in joint_states' order")
    ap.add_argument("--rates", help="commanded rates, comma-separated, in joint_states' order")
    ap.add_argument("--tolerance", type=float, default=0.03)
    ap.add_argument("--timeout", type=float, default=20.0)
    a = ap.parse_args()
    check(bool(a.positions) != bool(a.rates), "give --positions or --rates")
    conf = zenoh.Config()
    conf.insert_json5("mode", '"client"')
    conf.insert_json5("connect/endpoints", f'["{a.connect}"]')
    conf.insert_json5("scouting/multicast/enabled", "false")
    session = zenoh.open(conf)
    try:
        summary = run(session, a)
    finally:
        session.close()
    print("summary: " + summary)


if __name__ == "__main__":
    try:
        main()
    except Failed as e:
        print(f"FAILED: {e}", file=sys.stderr)
        sys.exit(1)
