"""The loopback guard every command that sends traffic shares (certify, explore, replay,
storm, send, the pytest plugin): a target off this machine is refused unless ``--allow-remote`` is given,
with one line naming the URL, what the command sends and the flag, before anything is
sent or any connection is opened."""

from __future__ import annotations

from hookproof.errors import UsageError


def check_loopback_url(url: str | None, allow_remote: bool, *, field: str = "target.url", command: str = "certify",
                       sends: str = "duplicate bursts and mass redelivery", flag: str = "--allow-remote") -> None:
    """Refuse `url` off this machine unless `allow_remote` (`command` sends `sends`; `flag`
    is what allows it: the pytest plugin's is ``--hookproof-allow-remote``).

    Loopback is `simulator.delivery.transports.Target.is_loopback`: a loopback address
    or ``localhost``; None (an in-process app) always passes. No name is resolved and no
    connection is made. Raises UsageError naming `field`, the URL and `flag`
    (a URL that is no target at all is left to the command's own check: `is_remote`).
    """
    if allow_remote or not is_remote(url):
        return
    raise UsageError(f"{field}: {url} is not a loopback address; {command} sends {sends}, "
                     f"so a remote receiver needs {flag}")


def is_remote(url: str | None) -> bool:
    """True when `url` is off this machine: not a loopback address nor ``localhost``
    (`simulator.delivery.transports.Target.is_loopback`); None (an in-process app) is not,
    nor a URL that is no delivery target at all (`url_problem`), which the command's own
    check of its URL refuses, naming its flag or field, before anything is sent."""
    from hookproof.simulator.delivery.transports import Target, url_problem

    return url is not None and url_problem(url) is None and not Target(url=url).is_loopback()
