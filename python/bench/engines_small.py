"""A 4-agent world with a box (transport) and navigation's 8 bodies with lidar: the batch's step on
Rapier 3D (planar bodies) against the planar engine, 1024 worlds, 1 worker, random actions."""
import time, numpy as np, ssx
from ssx.envs import vmas as V
from ssx.envs.taskbatch import TaskBatch
import tempfile
rng = np.random.default_rng(0)
for task, make_scene, objects, lidar in [("transport", V.transport_scene, ["goal_0","package_0"], None), ("navigation", V.navigation_scene, [f"goal_{i}" for i in range(4)], "lidar")]:
    d = tempfile.mkdtemp(); scene = make_scene(4, seed=0, directory=d)
    for engine in ("rapier", "planar"):
        b = TaskBatch(ssx.Worlds(scene, 1024, engine=engine, workers=1), ssx._ssx.Task(task, 4, {}), objects=objects, lidar=lidar)
        b.reset(seed=0)
        acts = [rng.uniform(-1,1,(1024,4,2)) for _ in range(8)]
        for i in range(10): b.step(acts[i%8])
        ts=[]
        for r in range(3):
            t=time.perf_counter()
            for i in range(50): b.step(acts[i%8])
            ts.append((time.perf_counter()-t)/50/1024*1e6)
        print(f"{task:10s} {engine:7s} {np.median(ts):6.2f} us a world-step (runs {', '.join(f'{x:.2f}' for x in ts)})", flush=True)
        b.close()
