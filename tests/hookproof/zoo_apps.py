"""Reference receivers as `module:attribute` targets for `hookproof explore` tests.

``zoo_apps:<name>`` is the in-process app of ``examples.receivers.<name>`` on a SQLite
file in a temporary directory (one per test: ``reset`` runs after each, as runs reusing a seed
would otherwise find the keys an earlier test's run stored),
``zoo_apps:observe_<name>`` its python observer; ``zoo_apps:sw_<name>`` the same receiver
verifying the standard-webhooks profile (secret `SW_SECRET`). The apps are made on first use.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Callable

#: The endpoint secret every zoo app here verifies with (test-only).
SECRET = "whsec_hookproof_zoo_apps_test_only"
#: The standard-webhooks secret of the ``sw_`` apps (base64 after ``whsec_``; test-only).
SW_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
#: Attribute prefix of the apps verifying the standard-webhooks profile.
SW_PREFIX = "sw_"

_apps: dict[str, Any] = {}
#: The folder of the apps' SQLite files, made on first use and removed when the process exits.
_dir: tempfile.TemporaryDirectory[str] | None = None


def _db_dir() -> Path:
    global _dir
    if _dir is None:
        _dir = tempfile.TemporaryDirectory(prefix="hookproof-zoo-apps-")
    return Path(_dir.name)


def reset() -> None:
    """Forget the apps and remove their SQLite files: the next use makes fresh ones."""
    global _dir
    _apps.clear()
    if _dir is not None:
        _dir.cleanup()
        _dir = None


def app_for(name: str) -> Any:
    """The app of reference receiver `name` (made once per process)."""
    if name not in _apps:
        import importlib

        from hookproof.receivers.config import ReceiverConfig
        from hookproof.scenarios.statemachine import PROVIDER_API_BASE
        from hookproof.simulator.server.state import DEFAULT_API_KEY

        standard = name.startswith(SW_PREFIX)
        module = importlib.import_module(f"examples.receivers.{name.removeprefix(SW_PREFIX)}")
        config = ReceiverConfig(db_url=f"sqlite:///{_db_dir() / name}.db", secrets=(SW_SECRET if standard else SECRET,),
                                profile="standard-webhooks" if standard else "stripe", api_base=PROVIDER_API_BASE,
                                api_key=DEFAULT_API_KEY, sink_url=PROVIDER_API_BASE)
        _apps[name] = module.create_app(config)
    return _apps[name]


def _observer(name: str) -> Callable[[], Any]:
    from hookproof.receivers.web import receiver_of

    receiver = receiver_of(app_for(name))
    return receiver.observe


def __getattr__(attr: str) -> Any:
    if attr.startswith("__"):
        raise AttributeError(attr)
    if attr.startswith("observe_"):
        return _observer(attr.removeprefix("observe_"))
    try:
        return app_for(attr)
    except ModuleNotFoundError:
        raise AttributeError(attr) from None


def config_text(name: str, *, seed: int | None = None) -> str:
    """A hookproof.toml for reference receiver `name` through this module (``sw_<name>``:
    under the standard-webhooks profile)."""
    run = f"\n[run]\nseed = {seed}\n" if seed is not None else ""
    profile, secret = ("standard-webhooks", SW_SECRET) if name.startswith(SW_PREFIX) else ("stripe", SECRET)
    return (
        f'[target]\napp = "tests.hookproof.zoo_apps:{name}"\nprofile = "{profile}"\nsecret = "{secret}"\n\n'
        f'[observer]\nkind = "python"\ncallable = "tests.hookproof.zoo_apps:observe_{name}"\n{run}'
    )
