"""Test configuration: a hypothesis profile that skips shrinking, for debugging slow failures."""

from hypothesis import Phase, settings

settings.register_profile("no-shrink", phases=[Phase.explicit, Phase.reuse, Phase.generate])
