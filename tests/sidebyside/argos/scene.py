#!/usr/bin/env python3
"""An ARGoS 3 experiment file of ssx's dispersal scene (artifacts/scenes/dispersal*.json).

The same robots on the same start grid, the same walls as 1 m sections (static boxes), the same
step (10 ms), seed and length, 2 threads: foot-bots (0.085 m radius) stand in for ssx's
Pioneer-sized boxes, dynamics2d (Chipmunk) for ssx's kinematic engine. Usage:

    scene.py SSX_SCENE.json CONTROLLER.so SECONDS THREADS [INDEX [ITERATIONS]] > out.argos

INDEX is dynamics2d's shape index: "bbtree" (Chipmunk's bounding-box tree, ARGoS's default) or
"hash" (the spatial hash its documentation advises for thousands of identical robots: cells the
size of a foot-bot's bounding box, ten times as many cells as bodies). ITERATIONS is how many
physics steps dynamics2d takes in a tick (its default, 10, when not given; ssx's kinematic engine
takes one).
"""
import json
import sys


def main() -> None:
    scene_path, library, seconds, threads = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
    index = sys.argv[5] if len(sys.argv) > 5 else "bbtree"
    if index not in ("bbtree", "hash"):
        sys.exit(f"scene.py: the index is 'bbtree' or 'hash', not {index!r}")
    iterations = f' iterations="{int(sys.argv[6])}"' if len(sys.argv) > 6 else ""
    scene = json.load(open(scene_path))
    tps = round(1.0 / scene["timestep"])
    boxes, bots, extent = [], [], 1.0
    for a in scene["artifacts"]:
        grid = a.get("replicate", {}).get("grid")
        pose = a.get("pose", {})
        x0, y0 = pose.get("position", [0, 0, 0])[:2]
        if a["artifact"].endswith("pioneer.json"):
            cols, (sx, sy) = grid["columns"], grid["spacing"]
            for i in range(grid["count"]):
                x, y = x0 + sx * (i % cols), y0 + sy * (i // cols)
                bots.append(f'<foot-bot id="fb{i}"><body position="{x:.4f},{y:.4f},0" orientation="0,0,0"/>'
                            f'<controller config="disp"/></foot-bot>')
        elif a["artifact"].endswith("wall.json"):
            turned = abs(pose.get("rpy", [0, 0, 0])[2]) > 1.0
            size = "0.1,1,0.5" if turned else "1,0.1,0.5"
            for i in range(grid["count"]):
                x, y = (x0, y0 + i) if turned else (x0 + i, y0)
                extent = max(extent, abs(x) + 1, abs(y) + 1)
                boxes.append(f'<box id="{a["name"]}_{i}" size="{size}" movable="false">'
                             f'<body position="{x:.4f},{y:.4f},0" orientation="0,0,0"/></box>')
    side = 2 * extent + 2
    hashed = (f'<spatial_hash cell_size="0.17" cell_num="{10 * (len(bots) + len(boxes))}"/>'
              if index == "hash" else "")
    print(f"""<?xml version="1.0" ?>
<argos-configuration>
  <framework>
    <system threads="{threads}" />
    <experiment length="{seconds:g}" ticks_per_second="{tps}" random_seed="{scene.get('seed', 1)}" />
  </framework>
  <controllers>
    <ssx_dispersal_controller id="disp" library="{library}">
      <actuators><differential_steering implementation="default" /></actuators>
      <sensors><footbot_proximity implementation="default" show_rays="false" /></sensors>
      <params />
    </ssx_dispersal_controller>
  </controllers>
  <arena size="{side:g}, {side:g}, 1" center="0,0,0.5">
    {chr(10).join(boxes)}
    {chr(10).join(bots)}
  </arena>
  <physics_engines><dynamics2d id="dyn2d"{iterations}>{hashed}</dynamics2d></physics_engines>
  <media />
</argos-configuration>""")


if __name__ == "__main__":
    main()
