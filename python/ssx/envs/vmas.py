"""VMAS's tasks under their names, on ssx's planar engine: ``ssx.envs.navigation(agents=4,
worlds=K, **options)`` (and ``transport``, ``dispersion``, ``wheel``, ``balance``, ``sampling``,
``give_way``, ``passage``, ``flocking``, ``discovery``) is a ``TaskBatch`` of K worlds (world k seeded
``seed + k``), and ``ssx.envs.navigation_scene(...)`` writes the task's scene file, which
``ssxd run`` runs too.

Each task's rules, defaults, observation terms (in VMAS's order) and reward terms are VMAS
1.5's (``vmas/scenarios/<task>.py``, cited in the Rust module that computes them,
``tasks/src/<task>.rs``). Its physics is ssx's: rigid contacts on rapier2d where VMAS pushes
bodies apart with penalty forces, and VMAS's drag (the velocity times 1 − 0.25 once a 0.1 s step)
as a damping of the same factor a step (docs/learning.md says what differs).

Every task and scene function also takes ``drive="diffdrive"`` (ssx's, not VMAS's): the agents on
ssx's differential drive, their action (v, ω) within the task's ±u_range, in place of VMAS's
holonomic agent.
"""

from __future__ import annotations

import tempfile

from .vmas_parts import (
    LINE_MIN_DIST,
    VMAS_DT,
    _agent,
    _ball,
    _batch,
    _ghost_agent,
    _landmark,
    _line,
    _movable,
    _options,
    _slab,
    _task,
    _task_scene,
    _walls,
    _write,
    _write_agent,
)


def navigation_scene(agents=4, seed=0, directory=None, **options):
    """The scene file of VMAS's navigation for ``agents`` agents (options: ``agent_radius``,
    ``n_lidar_rays``, ``lidar_range``, as ``navigation``'s): agents and goals drawn in [-1, 1]²
    from the seed, no two nearer than 2·radius + 0.05. Returns its path."""
    task = _task("navigation", agents, options)  # checks the options
    radius = options.get("agent_radius", 0.1)
    rays = task.lidar_rays
    lidar_range = options.get("lidar_range", 0.35)
    directory = directory or tempfile.mkdtemp(prefix="ssx-task-")
    _write_agent(directory, _agent(radius, rays, lidar_range), options, _policy_team("navigation", agents, options))
    _write(directory, "goal.json", _landmark(radius=0.05))
    apart = 2 * radius + 0.05
    box = {"min": [-1.0, -1.0, 0.0], "max": [1.0, 1.0, 0.0], "clearance": apart}
    scene = _task_scene(f"navigation-{agents}", seed, [
            {"name": "agent", "artifact": "agent.json", "replicate": {"random": dict(count=agents, **box)}},
            {
                "name": "goal",
                "artifact": "goal.json",
                "replicate": {"random": dict(count=agents, apart_from=["agent"], **box)},
            },
    ])
    return _write(directory, "navigation.json", scene)


def navigation(agents=4, worlds=None, seed=0, workers=None, max_steps=100, actions="continuous", **options):
    """VMAS's navigation (see ``navigation_scene``): a ``TaskBatch`` of ``worlds`` worlds (one
    without ``worlds``). ``max_steps``: BenchMARL's navigation episode (100 actions of 0.1 s).
    ``options``: VMAS's keyword arguments (``shared_rew``, ``pos_shaping_factor``,
    ``final_reward``, ``agent_collision_penalty``, ``lidar_range``, ``n_lidar_rays``,
    ``agent_radius``, ``observe_all_goals``); an unknown one raises ValueError naming it."""
    return _batch(
        navigation, "navigation",
        lambda d: navigation_scene(agents, seed=seed, directory=d, **options),
        agents, *_team("navigation", agents, options),
        worlds, seed, workers, max_steps, actions, options,
    )


def _package(length, width, mass):
    """VMAS's transport package: a movable box that nothing holds but the floor's drag."""
    return {
        "description": f"a package of {length} x {width} m and {mass} kg",
        "bodies": [
            _movable("box", mass, {"box": {"size": [length, width, 0.1]}}, (0.9, 0.1, 0.1, 1.0))
        ],
    }


def transport_scene(agents=4, seed=0, directory=None, **options):
    """The scene file of VMAS's transport (options as ``transport``'s): agents of radius 0.03
    whose forces are 0.6 of their actions, packages of 0.15 × 0.15 m and 50 kg and a goal of
    radius 0.15, drawn in [-1, 1]² (agents no nearer each other than 0.06, the goal and the
    packages no nearer than 0.266 to anything drawn before them), walls where VMAS's semidims
    (1 + 2·0.03 + 0.15) stop an agent's centre. Returns its path."""
    _task("transport", agents, options)  # checks the options
    radius = 0.03
    length = options.get("package_length", 0.15)
    width = options.get("package_width", 0.15)
    packages = int(options.get("n_packages", 1))
    directory = directory or tempfile.mkdtemp(prefix="ssx-task-")
    _write_agent(directory, _agent(radius, 0, 0.0, u_multiplier=0.6), options, _policy_team("transport", agents, options))
    _write(directory, "goal.json", _landmark(radius=0.15))
    _write(directory, "package.json", _package(length, width, options.get("package_mass", 50.0)))
    _write(directory, "walls.json", _walls(1.0 + 2 * radius + max(length, width) + radius))
    apart = 0.5 * (length**2 + width**2) ** 0.5 + 0.15 + 0.01
    box = {"min": [-1.0, -1.0, 0.0], "max": [1.0, 1.0, 0.0]}
    scene = _task_scene(f"transport-{agents}", seed, [
            {"name": "walls", "artifact": "walls.json"},
            {"name": "agent", "artifact": "agent.json", "replicate": {"random": dict(count=agents, clearance=2 * radius, **box)}},
            {"name": "goal", "artifact": "goal.json", "replicate": {"random": dict(count=1, clearance=apart, apart_from=["agent"], **box)}},
            {
                "name": "package",
                "artifact": "package.json",
                "replicate": {"random": dict(count=packages, clearance=apart, apart_from=["agent", "goal"], **box)},
            },
    ])
    return _write(directory, "transport.json", scene)


def transport(agents=4, worlds=None, seed=0, workers=None, max_steps=100, actions="continuous", **options):
    """VMAS's transport (see ``transport_scene``): a ``TaskBatch``. ``max_steps``: BenchMARL's
    transport episode (100 actions). ``options``: VMAS's ``n_packages``, ``package_width``,
    ``package_length``, ``package_mass``."""
    return _batch(
        transport, "transport",
        lambda d: transport_scene(agents, seed=seed, directory=d, **options),
        agents, *_team("transport", agents, options),
        worlds, seed, workers, max_steps, actions, options,
    )


def dispersion_scene(agents=4, seed=0, directory=None, **options):
    """The scene file of VMAS's dispersion (options as ``dispersion``'s): agents of radius 0.035
    that touch nothing, all at the origin, and ``n_food`` items (one an agent) drawn uniformly in
    [-pos_range, pos_range]². Returns its path."""
    _task("dispersion", agents, options)  # checks the options
    food = int(options.get("n_food", agents))
    r = options.get("pos_range", 1.0)
    directory = directory or tempfile.mkdtemp(prefix="ssx-task-")
    _write_agent(directory, _ghost_agent(0.035), options, _policy_team("dispersion", agents, options))
    _write(directory, "food.json", _landmark(radius=options.get("food_radius", 0.05)))
    scene = _task_scene(f"dispersion-{agents}", seed, [
            {"name": "agent", "artifact": "agent.json", "replicate": {"random": {"count": agents, "min": [0.0, 0.0, 0.0], "max": [0.0, 0.0, 0.0]}}},
            {"name": "food", "artifact": "food.json", "replicate": {"random": {"count": food, "min": [-r, -r, 0.0], "max": [r, r, 0.0]}}},
    ])
    return _write(directory, "dispersion.json", scene)


def dispersion(agents=4, worlds=None, seed=0, workers=None, max_steps=100, actions="continuous", **options):
    """VMAS's dispersion (see ``dispersion_scene``): a ``TaskBatch``. ``max_steps``: BenchMARL's
    dispersion episode (100 actions). ``options``: VMAS's ``n_food``, ``food_radius``,
    ``pos_range``, ``share_reward``, ``penalise_by_time``."""
    return _batch(
        dispersion, "dispersion",
        lambda d: dispersion_scene(agents, seed=seed, directory=d, **options),
        agents, *_team("dispersion", agents, options),
        worlds, seed, workers, max_steps, actions, options,
    )


def _pinned_bar(length, mass):
    """VMAS's wheel: a bar that turns about its centre and does not move (a revolute joint about
    the vertical to a fixed pivot). The bar is the artifact's first body, the one a task reads."""
    return {
        "description": f"a bar of {length} m and {mass} kg pinned at its centre",
        "bodies": [
            _movable("bar", mass, {"box": {"size": [length, 2 * LINE_MIN_DIST, 0.05]}}, (0.1, 0.1, 0.1, 1.0)),
            {"name": "pivot", "parent": "bar", "kind": "static"},
        ],
        "joints": [{"name": "pin", "kind": "revolute", "parent": "pivot", "child": "bar", "axis": [0, 0, 1]}],
    }


def wheel_scene(agents=4, seed=0, directory=None, **options):
    """The scene file of VMAS's wheel (options as ``wheel``'s): agents of radius 0.03 whose
    forces are 0.6 of their actions, drawn in [-1, 1]² (no two nearer than 0.06), and a bar of
    ``line_length`` and ``line_mass`` pinned at the origin at a random heading. Returns its
    path."""
    _task("wheel", agents, options)  # checks the options
    directory = directory or tempfile.mkdtemp(prefix="ssx-task-")
    _write_agent(directory, _agent(0.03, 0, 0.0, u_multiplier=0.6), options, _policy_team("wheel", agents, options))
    _write(directory, "bar.json", _pinned_bar(options.get("line_length", 2.0), options.get("line_mass", 30.0)))
    scene = _task_scene(f"wheel-{agents}", seed, [
            {"name": "wheel", "artifact": "bar.json", "replicate": {"random": {"count": 1, "min": [0.0, 0.0, 0.0], "max": [0.0, 0.0, 0.0], "random_yaw": True}}},
            {"name": "agent", "artifact": "agent.json", "replicate": {"random": {"count": agents, "min": [-1.0, -1.0, 0.0], "max": [1.0, 1.0, 0.0], "clearance": 0.06}}},
    ])
    return _write(directory, "wheel.json", scene)


def wheel(agents=4, worlds=None, seed=0, workers=None, max_steps=100, actions="continuous", **options):
    """VMAS's wheel (see ``wheel_scene``): a ``TaskBatch``. ``max_steps``: BenchMARL's wheel
    episode (100 actions). ``options``: VMAS's ``line_length``, ``line_mass``,
    ``desired_velocity``."""
    return _batch(
        wheel, "wheel",
        lambda d: wheel_scene(agents, seed=seed, directory=d, **options),
        agents, *_team("wheel", agents, options),
        worlds, seed, workers, max_steps, actions, options,
    )


# VMAS's balance (vmas/scenarios/balance.py): its line, radii, y semidim and gravity.
BALANCE_LINE = 0.8
BALANCE_RADIUS = 0.03
BALANCE_BALL = 0.05
BALANCE_GRAVITY = (0.0, -0.05)


def balance_scene(agents=3, seed=0, directory=None, **options):
    """The scene file of VMAS's balance (options as ``balance``'s), gravity (0, −0.05) in the
    plane: a line of 0.8 m and 5 kg whose centre is drawn at x in [−0.6, 0.6], y = −0.94; the
    agents (radius 0.03, force × 0.7) evenly under it, resting on the floor (a 10 × 1 m box whose
    top is at y = −1.03); on the line a ball of radius 0.05 and ``package_mass`` (anywhere along
    it with ``random_package_pos_on_line``, else at its middle), standing on the line's upper face
    (VMAS's line has no thickness); the goal drawn in [−1, 1] × [0, 1]; a ceiling where VMAS's y
    semidim (1) stops an agent's centre. Returns its path."""
    task = _task("balance", agents, options)  # checks the options
    agents = task.agents
    mass = options.get("package_mass", 5.0)
    anywhere = bool(options.get("random_package_pos_on_line", True))
    r, half = BALANCE_RADIUS, BALANCE_LINE / 2
    directory = directory or tempfile.mkdtemp(prefix="ssx-task-")
    _write_agent(directory, _agent(r, 0, 0.0, u_multiplier=0.7), options, _policy_team("balance", agents, options))
    _write(directory, "goal.json", _landmark(radius=BALANCE_BALL))
    _write(directory, "package.json", _ball(BALANCE_BALL, mass))
    _write(directory, "line.json", _line(BALANCE_LINE, 5.0))
    floor_top = -1.0 - r
    _write(directory, "floor.json", {
        "description": "VMAS's balance floor (10 × 1 m) and a ceiling at its y semidim",
        "bodies": [_slab("floor", (0.0, floor_top - 0.5), (10.0, 1.0)), _slab("ceiling", (0.0, 1.0 + r + 0.05), (10.0, 0.1))],
    })
    spread = half - BALANCE_BALL if anywhere else 0.0
    space = (BALANCE_LINE - r) / (agents - 1)
    ball_y = BALANCE_BALL + LINE_MIN_DIST
    scene = _task_scene(f"balance-{agents}", seed, [
        {"name": "floor", "artifact": "floor.json"},
        {"name": "line", "artifact": "line.json", "replicate": {"random": {"count": 1, "min": [-1.0 + half, -1.0 + 2 * r, 0.0], "max": [1.0 - half, -1.0 + 2 * r, 0.0]}}},
        {
            "name": "agent",
            "artifact": "agent.json",
            "relative_to": "line",
            "pose": {"position": [-(BALANCE_LINE - r) / 2, -2 * r, 0.0]},
            "replicate": {"grid": {"count": agents, "columns": agents, "spacing": [space, 1.0]}},
        },
        {"name": "package", "artifact": "package.json", "relative_to": "line", "replicate": {"random": {"count": 1, "min": [-spread, ball_y, 0.0], "max": [spread, ball_y, 0.0]}}},
        {"name": "goal", "artifact": "goal.json", "replicate": {"random": {"count": 1, "min": [-1.0, 0.0, 0.0], "max": [1.0, 1.0, 0.0]}}},
    ], gravity=BALANCE_GRAVITY)
    return _write(directory, "balance.json", scene)


def balance(agents=3, worlds=None, seed=0, workers=None, max_steps=100, actions="continuous", **options):
    """VMAS's balance (see ``balance_scene``): a ``TaskBatch``. ``max_steps``: BenchMARL's
    balance episode (100 actions). ``options``: VMAS's ``package_mass``,
    ``random_package_pos_on_line``. At least 2 agents."""
    return _batch(
        balance, "balance",
        lambda d: balance_scene(agents, seed=seed, directory=d, **options),
        agents, *_team("balance", agents, options),
        worlds, seed, workers, max_steps, actions, options,
    )


def sampling_scene(agents=3, seed=0, directory=None, **options):
    """The scene file of VMAS's sampling (options as ``sampling``'s): agents of radius
    ``agent_radius`` drawn uniformly in [−xdim, xdim] × [−ydim, ydim] (no two nearer than
    2·radius, where VMAS lets them overlap: rigid contacts would throw them apart; all at the
    origin with ``spawn_same_pos``), touching nothing without ``collisions``; ``n_gaussians``
    landmarks, the Gaussians' centres, drawn in the same box; walls where VMAS's semidims
    (xdim − radius) stop an agent's centre. Returns its path."""
    task = _task("sampling", agents, options)  # checks the options
    agents = task.agents
    r = options.get("agent_radius", 0.025)
    xdim, ydim = options.get("xdim", 1.0), options.get("ydim", 1.0)
    collide = bool(options.get("collisions", True))
    same = bool(options.get("spawn_same_pos", False))
    directory = directory or tempfile.mkdtemp(prefix="ssx-task-")
    _write_agent(directory, _agent(r, 0, 0.0) if collide else _ghost_agent(r), options, _policy_team("sampling", agents, options))
    _write(directory, "gaussian.json", _landmark((0.9, 0.6, 0.1, 1.0), radius=0.03))
    _write(directory, "walls.json", _walls(xdim, ydim))
    box = {"min": [-xdim, -ydim, 0.0], "max": [xdim, ydim, 0.0]}
    spawn = {"min": [0.0, 0.0, 0.0], "max": [0.0, 0.0, 0.0]} if same else dict(box, **({"clearance": 2 * r} if collide else {}))
    scene = _task_scene(f"sampling-{agents}", seed, [
        {"name": "walls", "artifact": "walls.json"},
        {"name": "agent", "artifact": "agent.json", "replicate": {"random": dict(count=agents, **spawn)}},
        {"name": "gaussian", "artifact": "gaussian.json", "replicate": {"random": dict(count=task.objects, **box)}},
    ])
    return _write(directory, "sampling.json", scene)


def sampling(agents=3, worlds=None, seed=0, workers=None, max_steps=100, actions="continuous", **options):
    """VMAS's sampling (see ``sampling_scene``): a ``TaskBatch``. ``max_steps``: BenchMARL's
    sampling episode (100 actions). ``options``: VMAS's ``shared_rew``, ``lidar_range``,
    ``agent_radius``, ``xdim``, ``ydim``, ``grid_spacing``, ``n_gaussians``, ``cov``,
    ``collisions``, ``spawn_same_pos``, ``norm`` (``comms_range`` at 0 only)."""
    return _batch(
        sampling, "sampling",
        lambda d: sampling_scene(agents, seed=seed, directory=d, **options),
        agents, *_team("sampling", agents, options),
        worlds, seed, workers, max_steps, actions, options,
    )


# VMAS's give_way (vmas/scenarios/give_way.py): its corridor, agents and step.
GIVE_WAY_RADIUS = 0.16
GIVE_WAY_DT = 0.05


def give_way_scene(agents=2, seed=0, directory=None, **options):
    """The scene file of VMAS's give_way (options as ``give_way``'s), its 0.05 s step: a corridor
    from x = −2.5 to 2.5 and y = −0.2 to 0.2, with a nook 0.4 wide and 0.48 deep above its middle
    (boxes 4/600 m thick each side of VMAS's lines); agent_0 at (−2, 0) and agent_1 at (2, 0),
    each ±0.02 m at random (an invisible mark drawn there that the agent stands relative_to),
    driven by velocity within ±``v_range`` (0.5 m/s), no drag; their goals at (2.29, 0) and
    (−2.29, 0). Returns its path."""
    _task("give_way", agents, options)  # checks the options
    v = options.get("v_range", 0.5)
    directory = directory or tempfile.mkdtemp(prefix="ssx-task-")
    agent = _agent(GIVE_WAY_RADIUS, 0, 0.0, u_range=v)
    body = agent["bodies"][0]
    body["linear_damping"] = body["angular_damping"] = 0.0
    agent["driver"]["descriptor"]["mode"] = "velocity"
    agent["description"] = f"VMAS's give_way agent: a disc of radius {GIVE_WAY_RADIUS} m driven by velocity"
    _write_agent(directory, agent, options, _policy_team("give_way", agents, options))
    _write(directory, "goal.json", _landmark(radius=GIVE_WAY_RADIUS / 2))
    _write(directory, "mark.json", {"description": "where an agent starts", "bodies": [{"name": "mark", "kind": "static"}]})
    t = 2 * LINE_MIN_DIST
    walls = [
        ("w", (-2.5, 0.0), (t, 0.4)), ("e", (2.5, 0.0), (t, 0.4)),
        ("ceiling_w", (-1.35, 0.2), (2.3, t)), ("ceiling_e", (1.35, 0.2), (2.3, t)),
        ("nook_w", (-0.2, 0.44), (t, 0.48)), ("nook_e", (0.2, 0.44), (t, 0.48)),
        ("nook_top", (0.0, 0.68), (0.4, t)), ("floor", (0.0, -0.2), (5.0, t)),
    ]
    _write(directory, "corridor.json", {
        "description": "VMAS's give_way corridor and its nook",
        "bodies": [_slab(name, c, size) for name, c, size in walls],
    })
    noise = 0.02
    arts = [{"name": "corridor", "artifact": "corridor.json"}]
    for i, x in enumerate((-2.0, 2.0)):
        box = {"count": 1, "min": [x - noise, -noise, 0.0], "max": [x + noise, noise, 0.0]}
        arts.append({"name": f"start{i}", "artifact": "mark.json", "replicate": {"random": box}})
        arts.append({"name": f"agent_{i}", "artifact": "agent.json", "relative_to": f"start{i}"})
    for i, x in enumerate((2.29, -2.29)):
        arts.append({"name": f"goal_{i}", "artifact": "goal.json", "pose": {"position": [x, 0.0, 0.0]}})
    scene = _task_scene(f"give_way-{agents}", seed, arts, dt=GIVE_WAY_DT)
    return _write(directory, "give_way.json", scene)


def give_way(agents=2, worlds=None, seed=0, workers=None, max_steps=100, actions="continuous", **options):
    """VMAS's give_way (see ``give_way_scene``): a ``TaskBatch`` of two agents whose actions are
    velocities within ±``v_range``. ``max_steps``: BenchMARL's give_way episode (100 actions).
    ``options``: VMAS's ``pos_shaping_factor``, ``final_reward``, ``agent_collision_penalty``,
    ``observe_rel_pos``, ``done_on_completion``, ``v_range`` (and, at VMAS's defaults only,
    ``mirror_passage``, ``box_agents``, ``use_velocity_controller``, ``energy_rew_coeff``,
    ``passage_collision_penalty``, ``obstacle_collision_penalty``, ``obs_noise``, ``dt_delay``)."""
    return _batch(
        give_way, "give_way",
        lambda d: give_way_scene(agents, seed=seed, directory=d, **options),
        agents, *_team("give_way", agents, options),
        worlds, seed, workers, max_steps, actions, options, u_range=options.get("v_range", 0.5),
    )


# VMAS's passage (vmas/scenarios/passage.py): its agents, cross and wall.
PASSAGE_RADIUS = 0.03333
PASSAGE_SPACING = 0.1
PASSAGE_SLOT = (0.103, 0.2)
PASSAGE_SLOTS = 20
# The cross's places: VMAS's order (+x, +y, −x, −y), then the centre.
PASSAGE_CROSS = ((PASSAGE_SPACING, 0.0), (0.0, PASSAGE_SPACING), (-PASSAGE_SPACING, 0.0), (0.0, -PASSAGE_SPACING), (0.0, 0.0))


def _cross(name, centre):
    """Five instances ``name_0`` .. ``name_4`` of ``name``.json at the cross's places about the
    instance ``centre``."""
    return [
        {"name": f"{name}_{i}", "artifact": f"{name}.json", "relative_to": centre, "pose": {"position": [x, y, 0.0]}}
        for i, (x, y) in enumerate(PASSAGE_CROSS)
    ]


def passage_scene(agents=5, seed=0, directory=None, **options):
    """The scene file of VMAS's passage (options as ``passage``'s): 5 agents of radius 0.03333
    whose forces are 0.7 of their actions, in a cross (a centre, and 0.1 m along +x, +y, −x, −y:
    agent i at place i) about a centre drawn in [−0.8, 0.8] × [−0.8, −0.3]; their goals in the
    same cross about a centre drawn in [−0.8, 0.8] × [0.3, 0.8]; a wall along y = 0 of 20 boxes
    of 0.103 × 0.2 m from x = −1.0333, ``n_passages`` of them left out where the seed draws;
    walls where VMAS's semidims (1) stop an agent's centre. Returns its path."""
    _task("passage", agents, options)  # checks the options
    opened = int(options.get("n_passages", 1))
    r = PASSAGE_RADIUS
    edge = 3 * r + PASSAGE_SPACING
    directory = directory or tempfile.mkdtemp(prefix="ssx-task-")
    _write_agent(directory, _agent(r, 0, 0.0, u_multiplier=0.7), options, _policy_team("passage", agents, options))
    _write(directory, "goal.json", _landmark(radius=PASSAGE_RADIUS))
    _write(directory, "mark.json", {"description": "a cross's centre", "bodies": [{"name": "mark", "kind": "static"}]})
    _write(directory, "box.json", {"description": "a box of VMAS's passage wall", "bodies": [_slab("box", (0.0, 0.0), PASSAGE_SLOT)]})
    _write(directory, "walls.json", _walls(1.0 + r))
    first = -1.0 - r + PASSAGE_SLOT[0] / 2
    mark = lambda name, y0, y1: {  # noqa: E731
        "name": name,
        "artifact": "mark.json",
        "replicate": {"random": {"count": 1, "min": [-1.0 + edge, y0, 0.0], "max": [1.0 - edge, y1, 0.0]}},
    }
    scene = _task_scene(f"passage-{opened}", seed, [
        {"name": "walls", "artifact": "walls.json"},
        mark("start", -1.0 + edge, -edge - PASSAGE_SLOT[1] / 2),
        mark("finish", edge + PASSAGE_SLOT[1] / 2, 1.0 - edge),
        *_cross("agent", "start"),
        *_cross("goal", "finish"),
        {
            "name": "passage",
            "artifact": "box.json",
            "pose": {"position": [first, 0.0, 0.0]},
            "replicate": {"grid": {"count": PASSAGE_SLOTS, "columns": PASSAGE_SLOTS, "spacing": [PASSAGE_SLOT[0], 1.0], "leave_out": opened}},
        },
    ])
    return _write(directory, "passage.json", scene)


def passage(agents=5, worlds=None, seed=0, workers=None, max_steps=500, actions="continuous", **options):
    """VMAS's passage (see ``passage_scene``): a ``TaskBatch`` of 5 agents. ``max_steps``:
    BenchMARL's passage episode (500 actions). ``options``: VMAS's ``n_passages``,
    ``shared_reward``."""
    return _batch(
        passage, "passage",
        lambda d: passage_scene(agents, seed=seed, directory=d, **options),
        agents, *_team("passage", agents, options),
        worlds, seed, workers, max_steps, actions, options,
    )


# VMAS's flocking (vmas/scenarios/flocking.py): its agents, obstacles and target.
FLOCKING_RADIUS = 0.05
FLOCKING_OBSTACLE = 0.1
# The target's action turns 1/30 rad each step of VMAS's 0.1 s.
FLOCKING_TURN = 1.0 / 30.0 / VMAS_DT


def flocking_scene(agents=4, seed=0, directory=None, **options):
    """The scene file of VMAS's flocking (options as ``flocking``'s): a target at (0, −1), an
    agent of radius 0.05 that collides and drives itself (force (cos θ, sin θ), θ turning 1/30
    rad a step from the first action on: the ``turning`` holonomic driver); ``n_obstacles``
    static discs of radius 0.1 and ``agents`` agents of radius 0.05 drawn in [−1, 1]², no two
    nearer than ``min_dist_between_entities`` (0.15) and none that near the target. No walls
    (VMAS's flocking has no semidims). Returns its path."""
    task = _task("flocking", agents, options)  # checks the options
    obstacles = task.objects - 1
    apart = options.get("min_dist_between_entities", 0.15)
    directory = directory or tempfile.mkdtemp(prefix="ssx-task-")
    _write_agent(directory, _agent(FLOCKING_RADIUS, 0, 0.0), options, _policy_team("flocking", agents, options))
    target = _agent(FLOCKING_RADIUS, 0, 0.0, color=(0.3, 0.69, 0.29, 1.0))
    target["driver"]["descriptor"] = {"mode": "force", "turning": {"rate": FLOCKING_TURN, "after": VMAS_DT}}
    target["description"] = "VMAS's flocking target: an agent whose action turns 1/30 rad a step"
    _write(directory, "target.json", target)
    _write(directory, "obstacle.json", {
        "description": f"an obstacle: a static disc of radius {FLOCKING_OBSTACLE} m",
        "bodies": [{
            "name": "obstacle",
            "kind": "static",
            "color": [0.9, 0.1, 0.1, 1.0],
            "colliders": [{"shape": {"sphere": {"radius": FLOCKING_OBSTACLE}}, "friction": 0.0, "restitution": 0.0}],
        }],
    })
    box = {"min": [-1.0, -1.0, 0.0], "max": [1.0, 1.0, 0.0], "clearance": apart}
    arts = [{"name": "target", "artifact": "target.json", "pose": {"position": [0.0, -1.0, 0.0]}}]
    if obstacles:
        arts.append({"name": "obstacle", "artifact": "obstacle.json", "replicate": {"random": dict(count=obstacles, apart_from=["target"], **box)}})
    arts.append({
        "name": "agent",
        "artifact": "agent.json",
        "replicate": {"random": dict(count=task.agents, apart_from=["target"] + (["obstacle"] if obstacles else []), **box)},
    })
    return _write(directory, "flocking.json", _task_scene(f"flocking-{agents}", seed, arts))


def flocking(agents=4, worlds=None, seed=0, workers=None, max_steps=100, actions="continuous", **options):
    """VMAS's flocking (see ``flocking_scene``): a ``TaskBatch``. ``max_steps``: BenchMARL's
    flocking episode (100 actions). ``options``: VMAS's ``n_obstacles``,
    ``min_dist_between_entities``, ``n_lidar_rays``, ``collision_reward``,
    ``dist_shaping_factor``."""
    return _batch(
        flocking, "flocking",
        lambda d: flocking_scene(agents, seed=seed, directory=d, **options),
        agents, *_team("flocking", agents, options),
        worlds, seed, workers, max_steps, actions, options,
    )


# VMAS's discovery (vmas/scenarios/discovery.py): its agents' and targets' radius.
DISCOVERY_RADIUS = 0.05


def discovery_scene(agents=5, seed=0, directory=None, **options):
    """The scene file of VMAS's discovery (options as ``discovery``'s): ``n_targets`` targets
    (marks: the task keeps where they are, and moves them) and ``agents`` agents of radius 0.05
    drawn in [−x_semidim, x_semidim] × [−y_semidim, y_semidim], no two nearer than
    ``min_dist_between_entities`` (0.2); walls where the semidims stop an agent's centre.
    Returns its path."""
    task = _task("discovery", agents, options)  # checks the options
    xs, ys = options.get("x_semidim", 1.0), options.get("y_semidim", 1.0)
    apart = options.get("min_dist_between_entities", 0.2)
    r = DISCOVERY_RADIUS
    directory = directory or tempfile.mkdtemp(prefix="ssx-task-")
    _write_agent(directory, _agent(r, 0, 0.0), options, _policy_team("discovery", agents, options))
    _write(directory, "target.json", _landmark())
    _write(directory, "walls.json", _walls(xs + r, ys + r))
    box = {"min": [-xs, -ys, 0.0], "max": [xs, ys, 0.0], "clearance": apart}
    scene = _task_scene(f"discovery-{agents}", seed, [
        {"name": "walls", "artifact": "walls.json"},
        {"name": "target", "artifact": "target.json", "replicate": {"random": dict(count=task.objects, **box)}},
        {"name": "agent", "artifact": "agent.json", "replicate": {"random": dict(count=task.agents, apart_from=["target"], **box)}},
    ])
    return _write(directory, "discovery.json", scene)


def discovery(agents=5, worlds=None, seed=0, workers=None, max_steps=100, actions="continuous", **options):
    """VMAS's discovery (see ``discovery_scene``): a ``TaskBatch``. ``max_steps``: BenchMARL's
    discovery episode (100 actions). ``options``: VMAS's ``n_targets``, ``x_semidim``,
    ``y_semidim``, ``min_dist_between_entities``, ``lidar_range``, ``covering_range``,
    ``use_agent_lidar``, ``n_lidar_rays_entities``, ``n_lidar_rays_agents``,
    ``agents_per_target``, ``targets_respawn``, ``shared_reward``, ``agent_collision_penalty``,
    ``covering_rew_coeff``, ``time_penalty``."""
    return _batch(
        discovery, "discovery",
        lambda d: discovery_scene(agents, seed=seed, directory=d, **options),
        agents, *_team("discovery", agents, options),
        worlds, seed, workers, max_steps, actions, options,
    )


def _team(name, agents, options):
    """The task ``name``'s own bodies (artifact names, in its order) and its agents' lidar sensor
    (None: none), for ``agents`` agents with ``options``: what its ``TaskBatch`` reads, and what
    a policy driving its agents reads (``policy=``)."""
    o = options
    objects = {
        "navigation": lambda: [f"goal_{i}" for i in range(agents)],
        "transport": lambda: ["goal_0"] + [f"package_{i}" for i in range(int(o.get("n_packages", 1)))],
        "dispersion": lambda: [f"food_{i}" for i in range(int(o.get("n_food", agents)))],
        "wheel": lambda: ["wheel_0"],
        "balance": lambda: ["goal_0", "package_0", "line_0"],
        "sampling": lambda: [f"gaussian_{i}" for i in range(int(o.get("n_gaussians", 3)))],
        "give_way": lambda: ["goal_0", "goal_1"],
        "passage": lambda: [f"goal_{i}" for i in range(5)]
        + [f"passage_{i}" for i in range(PASSAGE_SLOTS - int(o.get("n_passages", 1)))],
        "flocking": lambda: ["target"] + [f"obstacle_{i}" for i in range(int(o.get("n_obstacles", 5)))],
        "discovery": lambda: [f"target_{i}" for i in range(int(o.get("n_targets", 7)))],
    }[name]()
    return objects, ("lidar" if name == "navigation" else None)


def _policy_team(name, agents, options):
    """What a policy driving task ``name``'s agents reads (the policy driver's descriptor, less
    the model and the drive): the task, its options, its agents' and bodies' artifact names and
    the lidar."""
    objects, lidar = _team(name, agents, options)
    return {
        "task": name,
        "options": {k: float(v) for k, v in _options(options).items()},
        "agents": [f"agent_{i}" for i in range(agents)],
        "objects": objects,
        "lidar": lidar,
    }


TASKS = {
    "navigation": navigation, "transport": transport, "dispersion": dispersion, "wheel": wheel,
    "balance": balance, "sampling": sampling, "give_way": give_way, "passage": passage,
    "flocking": flocking, "discovery": discovery,
}
"""VMAS's tasks ssx has, by name."""

DEFAULT_AGENTS = {"navigation": 4, "transport": 4, "dispersion": 4, "wheel": 4, "balance": 3, "sampling": 3, "give_way": 2,
                  "passage": 5, "flocking": 4, "discovery": 5}
"""Each task's agents by default (VMAS's ``n_agents``)."""
