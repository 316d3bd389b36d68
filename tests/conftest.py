"""Test-wide configuration: the markers' meaning and which tests a marker adds automatically.

Markers (declared in ``pyproject.toml``):

* ``slow``: more than a few seconds; the default selection (``python -m pytest``) leaves
  them out, CI runs them (``python -m pytest -m "slow or not slow"``).
* ``needs_shared_data``: reads ``../shared`` (skips with a reason when it is absent).
* ``needs_extra``: needs an optional extra (skips with a reason when it is not installed).
* ``browser``: drives a real headless Chromium.
"""
