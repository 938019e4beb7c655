"""From the batch to the real-time daemon (docs/learning.md, "Into the lab"): PPO (Stable-Baselines3)
with one policy shared by every agent on VMAS's navigation, batched, then the policy exported as
an ONNX file (``ssx.policy.export``) and the task's scene written with every agent driven by it
(the policy driver, ``drivers/policy``), for ``ssxd run``.

    pip install './python[learn]'
    python3 python/examples/train_navigation_policy.py --frames 300000 --out target/lab
    target/release/ssxd run target/lab/scene/navigation.json --view --duration 30

It prints the mean return a world of held-out seeds gets with the trained policy and with no
action at all, each over one episode of 100 actions.
"""

import argparse
import os
import time

import numpy as np
import torch
from stable_baselines3 import PPO

from ssx import envs, policy
from ssx.envs.sb3 import SwarmVecEnv

AGENTS = 4
HELD_OUT = 10_000  # evaluation and the scene's seeds start here; training seeds are below


def score(act, worlds=32):
    """Mean return a world over one episode on seeds HELD_OUT.., ``act(obs)`` -> actions."""
    batch = envs.navigation(agents=AGENTS, worlds=worlds, seed=HELD_OUT)
    obs = batch.reset(seed=HELD_OUT)
    total = np.zeros(worlds)
    for _ in range(batch.max_cycles):
        obs, reward, *_ = batch.step(act(obs))
        total += reward.sum(axis=1)
    batch.close()
    return float(total.mean())


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--frames", type=int, default=300_000, help="agent-steps of training")
    p.add_argument("--worlds", type=int, default=32)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="target/lab", help="directory for policy.onnx and scene/")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(args.seed)
    batch = envs.navigation(agents=AGENTS, worlds=args.worlds, seed=args.seed)
    vec = SwarmVecEnv(batch)
    model = PPO(
        "MlpPolicy", vec, n_steps=100, batch_size=vec.num_envs * 10, n_epochs=4, learning_rate=3e-4, gamma=0.99,
        policy_kwargs=dict(net_arch=[64, 64]), seed=args.seed, device="cpu", verbose=0,
    )
    started = time.perf_counter()
    model.learn(total_timesteps=args.frames)
    print(f"trained {args.frames} agent-steps in {time.perf_counter() - started:.0f} s")
    actor = policy.sb3_actor(model)
    path = policy.export(actor, os.path.join(args.out, "policy.onnx"), batch, notes="PPO on navigation")
    batch.close()

    def trained(obs):
        with torch.no_grad():
            a = actor(torch.as_tensor(obs.reshape(-1, obs.shape[-1]), dtype=torch.float32))
        return a.numpy().astype(np.float64).reshape(obs.shape[0], AGENTS, 2)

    print(f"held-out return a world: trained {score(trained):.3f}, no action {score(lambda o: np.zeros(o.shape[:2] + (2,))):.3f}")
    scene = envs.navigation_scene(AGENTS, seed=HELD_OUT, directory=os.path.join(args.out, "scene"), policy=path)
    print(f"policy: {path}\nscene: {scene}")


if __name__ == "__main__":
    main()
