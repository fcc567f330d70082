"""Test settings: the oracle helpers next to the tests, and Hypothesis profiles.

In CI (``CI`` set) Hypothesis is derandomized, so a failure reproduces and a
run cannot turn red by the luck of the draw; locally it explores new examples.
"""

import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).parent))

settings.register_profile("ci", derandomize=True, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
