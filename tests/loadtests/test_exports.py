"""The loadtests package: a complete, sorted `__all__`, and no Locust in the importing process."""

from __future__ import annotations

import subprocess
import sys

from hookproof import loadtests


def test_all_is_sorted_and_complete() -> None:
    assert list(loadtests.__all__) == sorted(loadtests.__all__)
    for name in loadtests.__all__:
        assert hasattr(loadtests, name), name


def test_importing_loadtests_and_the_storm_command_never_imports_locust() -> None:
    code = ("import sys, loadtests, hookproof.cli, hookproof.commands.storm; "
            "print(sorted(m for m in ('locust', 'gevent') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "[]"
