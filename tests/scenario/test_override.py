from dataclasses import replace

import pytest

from retrychaos.scenario.override import LIBRARY_ALONE, StackOverride, replay_words, split_name
from retrychaos.world.spec import ModelPolicy, Scenario, Workload

STACK = Scenario(
    name="replans-sdk", workload=Workload(model=ModelPolicy.STUBBORN, sdk_retries=2, max_replans=2)
)


def test_the_library_alone_gets_an_obedient_model_and_no_sdk_layer():
    """LIBRARY_ALONE replaces the model's policy, removes the SDK layer and says so in the name."""
    alone = LIBRARY_ALONE.apply(STACK)
    assert (alone.name, alone.workload) == (
        "replans-sdk+model-obedient+no-sdk",
        replace(STACK.workload, model=ModelPolicy.OBEDIENT, sdk_retries=0),
    )
    assert (LIBRARY_ALONE.flags, LIBRARY_ALONE.describe()) == (
        ["--model", "obedient", "--no-sdk-layer"],
        "model obedient, no SDK layer",
    )


def test_no_override_changes_nothing():
    """Without a model or --no-sdk-layer the scenario is the stack's, name and all."""
    assert not StackOverride()
    assert StackOverride().apply(STACK) is STACK
    assert replay_words("replans-sdk") == ["--scenario", "replans-sdk"]


@pytest.mark.parametrize("policy", list(ModelPolicy))
@pytest.mark.parametrize("no_sdk", [False, True])
def test_an_overridden_name_splits_back_into_name_and_override(policy, no_sdk):
    """Every override said in a name is read back from it, for replay."""
    override = StackOverride(model=policy, no_sdk_layer=no_sdk)
    assert split_name(override.apply(STACK).name) == ("replans-sdk", override)


def test_the_replay_words_give_the_override_as_flags():
    """A reported name becomes the scenario's own name and the flags."""
    assert replay_words("replans-sdk+model-give-up") == [
        "--scenario",
        "replans-sdk",
        "--model",
        "give_up",
    ]
    assert replay_words("replans-sdk+no-sdk") == ["--scenario", "replans-sdk", "--no-sdk-layer"]
