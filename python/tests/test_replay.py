"""ssx.replay: a run recorded from Python, driven by commands and reset with another seed,
stepped through again from its recording alone, equal to the bit."""

import numpy as np
import pytest

import ssx


def _drive(sim, steps, linear, angular):
    for _ in range(steps):
        sim.command("rover", {"linear": linear, "angular": angular})
        sim.step(1)


def test_a_recorded_run_is_stepped_through_again_with_its_commands_and_reset(tmp_path):
    path = tmp_path / "run.mcap"
    with ssx.Sim(ssx.scene("lockstep.json"), workers=1, record=str(path)) as sim:
        start = sim.states(["rover"]).copy()
        sim.step(1)
        _drive(sim, 100, 0.5, 0.2)
        _drive(sim, 50, -0.3, 0.0)
        at_reset = sim.states().copy()
        sim.reset(seed=7)
        sim.step(1)
        _drive(sim, 50, 0.4, -0.1)
        final = sim.states().copy()
        assert sim.steps == 51
    # The commands moved the rover: a replay that ignored them would not get there.
    assert abs(at_reset[0, 0] - start[0, 0]) > 0.1 or abs(at_reset[0, 1] - start[0, 1]) > 0.1

    run = ssx.replay(str(path), verify=True)
    assert run.steps == 0
    run.step(151)
    assert run.steps == 151
    assert run.states().view(np.uint64).tolist() == at_reset.view(np.uint64).tolist()
    # The run's reset comes within the next step: the new world's first step.
    run.step(1)
    assert run.steps == 1 and run.seed == 7
    run.step(50)
    assert run.states().view(np.uint64).tolist() == final.view(np.uint64).tolist()
    with pytest.raises(ssx.Error) as e:
        run.step(1)
    assert str(e.value) == "the recording has nothing past step 51 of episode 1: the replay is over"
    with pytest.raises(ssx.Error) as e:
        run.reset()
    assert str(e.value) == "a replay resets where the run did, within step(): it cannot be reset"
    # On two workers, the same.
    two = ssx.replay(str(path), workers=2, verify=True)
    two.step(202)
    assert two.states().view(np.uint64).tolist() == final.view(np.uint64).tolist()


def test_a_file_that_is_not_a_recording_is_refused(tmp_path):
    text = tmp_path / "notes.mcap"
    text.write_text("not a recording")
    with pytest.raises(ssx.SceneError) as e:
        ssx.replay(str(text))
    assert str(e.value) == (
        f"cannot replay '{text}': not an MCAP file (its first bytes are not MCAP's magic)"
    )
