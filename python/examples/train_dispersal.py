"""PPO with one policy shared by every robot on the batched dispersal task, against random
actions and Stage's hand-written dispersal controller on held-out seeds (docs/python.md,
"Many worlds").

    pip install './python[learn]'
    python3 python/examples/train_dispersal.py --minutes 15 --plot docs/images/train_dispersal.png
    python3 python/examples/train_dispersal.py --smoke      # CI: one minute, the reward must rise

The task: 4 Pioneers a world, K worlds, one action a 0.1 s step (timestep 0.1, one step an
action), episodes of 100 actions (10 s). A robot's reward each step is its distance to the
nearest other robot over 2 m (at most 1), less 1 when its range ring sees something within
0.3 m (``ssx.envs.dispersal_reward``). An episode's score is the mean of that over its robots
and steps.
"""

import argparse
import json
import os
import tempfile
import time

import numpy as np

import ssx
from ssx import envs

AGENTS, CYCLES, TIMESTEP = 4, 100, 0.1
HELD_OUT = 10_000  # evaluation seeds start here; training seeds are below


class _View:
    """What a reward reads, over a raw batch of worlds (the hand-written controller's runs)."""

    def __init__(self, worlds, names):
        self.worlds, self.names = worlds, names

    def look(self):
        self.obs = self.worlds.observe("range", self.names)

    def nearest(self):
        return self.worlds.nearest(self.names)


def score_handwritten(worlds_count, seed):
    """Mean reward of Stage's dispersal controller (the ground driver's own) on seeds
    seed .. seed + worlds_count - 1."""
    with tempfile.TemporaryDirectory() as d:
        scene = envs.dispersal_scene(AGENTS, directory=d, seed=seed, timestep=TIMESTEP, behaviour="dispersal")
        w = ssx.Worlds(scene, worlds_count)
        names = [f"robot_{i}" for i in range(AGENTS)]
        view = _View(w, names)
        w.step(1)  # the settling step the envs take after a reset
        total = 0.0
        for _ in range(CYCLES):
            w.step(1)
            view.look()
            total += envs.dispersal_reward(view).mean()
        w.close()
        return total / CYCLES


def score_policy(act, worlds_count, seed):
    """Mean reward of `act(obs (K, N, obs)) -> actions (K, N, 2)` on held-out seeds."""
    b = envs.dispersal(agents=AGENTS, worlds=worlds_count, seed=seed, timestep=TIMESTEP,
                       steps_per_action=1, max_cycles=CYCLES)
    obs = b.reset(seed=seed)
    total = 0.0
    for _ in range(CYCLES):
        obs, reward, _, _, _ = b.step(act(obs))
        total += reward.mean()
    b.close()
    return total / CYCLES


def plot(curve, scores, path, worlds):
    """The learning curve (the environment's own rewards over each rollout) against the
    held-out scores, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot([c[0] / 1e6 for c in curve], [c[2] for c in curve], linewidth=0.8, label="PPO, training rollouts")
    for (k, v), style in zip(scores.items(), [":", "--", "-."]):
        ax.axhline(v, linestyle=style, color="black" if k == "random" else None, label=f"{k}: {v:+.3f} (held-out seeds)")
    ax.set_xlabel("agent-steps (millions)")
    ax.set_ylabel("mean reward a robot a step")
    minutes = curve[-1][1] / 60
    ax.set_title(f"Batched dispersal, {worlds} worlds x {AGENTS} robots, {minutes:.0f} min on the 2-core VM")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=100)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--minutes", type=float, default=15.0, help="training time (wall)")
    p.add_argument("--worlds", type=int, default=64)
    p.add_argument("--smoke", action="store_true", help="one minute; fail unless the reward rose")
    p.add_argument("--plot", help="write the learning curve to this PNG")
    p.add_argument("--json", help="write the curve and the scores to this file")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--replot", metavar="JSON", help="only draw --plot from a --json of an earlier run")
    o = p.parse_args()
    if o.replot:
        with open(o.replot) as f:
            saved = json.load(f)
        plot(saved["curve"], saved["scores"], o.plot, saved.get("worlds", o.worlds))
        return
    if o.smoke:
        o.minutes, o.worlds = 1.0, 32

    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback

    from ssx.envs.sb3 import SwarmVecEnv

    torch.set_num_threads(1)  # the batch's workers take the cores
    batch = envs.dispersal(agents=AGENTS, worlds=o.worlds, seed=o.seed * 1000, timestep=TIMESTEP,
                           steps_per_action=1, max_cycles=CYCLES)
    env = SwarmVecEnv(batch)
    env.seed(o.seed * 1000)
    n_steps = 64
    model = PPO("MlpPolicy", env, n_steps=n_steps, batch_size=2048, n_epochs=5, learning_rate=3e-4,
                gamma=0.95, gae_lambda=0.9, ent_coef=0.0, seed=o.seed, verbose=0,
                policy_kwargs=dict(net_arch=[64, 64]))

    curve = []  # (agent-steps, seconds, mean reward a robot a step over the last rollout)

    class Curve(BaseCallback):
        """The mean of the environment's own rewards over each rollout (the rollout buffer's
        have the bootstrapped values of truncated episodes added)."""

        total, count = 0.0, 0

        def _on_rollout_end(self):
            curve.append((self.num_timesteps, time.perf_counter() - t0, self.total / max(self.count, 1)))
            self.total, self.count = 0.0, 0
            print(f"{self.num_timesteps:>10,d} agent-steps  {curve[-1][1]:6.0f} s  mean reward {curve[-1][2]:+.4f}",
                  flush=True)

        def _on_step(self):
            r = self.locals["rewards"]
            self.total += float(r.sum())
            self.count += r.size
            return time.perf_counter() - t0 < o.minutes * 60

    t0 = time.perf_counter()
    model.learn(total_timesteps=10**10, callback=Curve())
    trained = time.perf_counter() - t0

    def policy(obs):
        flat = obs.reshape(-1, obs.shape[-1])
        a, _ = model.predict(flat, deterministic=True)
        return a.reshape(obs.shape[0], obs.shape[1], -1)

    high = batch.action_space.high
    rng = np.random.default_rng(1)
    eval_worlds = 32
    scores = {
        "random": score_policy(lambda obs: rng.uniform(-high, high, size=obs.shape[:2] + high.shape),
                               eval_worlds, HELD_OUT),
        "handwritten (Stage's dispersal)": score_handwritten(eval_worlds, HELD_OUT),
        "PPO, shared policy": score_policy(policy, eval_worlds, HELD_OUT),
    }
    print(f"trained {trained:.0f} s, {curve[-1][0]:,d} agent-steps; mean reward a robot a step on "
          f"{eval_worlds} held-out seeds:")
    for k, v in scores.items():
        print(f"  {k:32s} {v:+.4f}")
    if o.json:
        with open(o.json, "w") as f:
            json.dump({"curve": curve, "scores": scores, "seconds": trained, "worlds": o.worlds}, f, indent=1)
    if o.plot:
        plot(curve, scores, o.plot, o.worlds)
    if o.smoke:
        first = np.mean([c[2] for c in curve[:2]])
        last = np.mean([c[2] for c in curve[-2:]])
        assert len(curve) >= 4, f"only {len(curve)} rollouts in a minute"
        assert last > first, f"the reward did not rise: {first:+.4f} -> {last:+.4f}"
        assert scores["PPO, shared policy"] > scores["random"], scores
        print(f"smoke: the reward rose {first:+.4f} -> {last:+.4f}")


if __name__ == "__main__":
    main()
