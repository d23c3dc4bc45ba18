"""`simulator.delivery.transports`: the one check of a receiver URL (`url_problem`, `Target`)."""

from __future__ import annotations

import pytest

from hookproof.simulator.delivery import Target, url_problem
from hookproof.simulator.errors import TargetError


@pytest.mark.parametrize("url, problem", [
    ("http://127.0.0.1:8000/webhooks", None),
    ("https://hooks.example.com/w", None),
    ("http://[::1]:8080/w", None),
    ("http://user:pw@127.0.0.1:65535/w", None),
    ("http://127.0.0.1:abc/w", "the port in 'http://127.0.0.1:abc/w' is not a number from 1 to 65535"),
    ("http://127.0.0.1:0/w", "the port in 'http://127.0.0.1:0/w' is not a number from 1 to 65535"),
    ("http://127.0.0.1:99999/w", "the port in 'http://127.0.0.1:99999/w' is not a number from 1 to 65535"),
    ("http://127.0.0.1:-1/w", "the port in 'http://127.0.0.1:-1/w' is not a number from 1 to 65535"),
    ("http://h:80:90/w", "the port in 'http://h:80:90/w' is not a number from 1 to 65535"),
    ("ftp://h/w", "must be an absolute http(s) URL, got 'ftp://h/w'"),
    ("http:/h/w", "must be an absolute http(s) URL, got 'http:/h/w'"),
    ("http://user@/w", "must be an absolute http(s) URL, got 'http://user@/w'"),
    ("http://[::1/w", "must be an absolute http(s) URL, got 'http://[::1/w'"),
    ("http://exa mple.com/w", "the host part of 'http://exa mple.com/w' has a blank or a control character"),
])
def test_url_problem_says_what_is_wrong(url: str, problem: str | None) -> None:
    assert url_problem(url) == problem


@pytest.mark.parametrize("url", ["http://127.0.0.1:abc/w", "http://127.0.0.1:0/w", "http://127.0.0.1:99999/w"])
def test_a_target_refuses_a_url_httpx_could_not_send_to(url: str) -> None:
    with pytest.raises(TargetError, match="port"):
        Target(url=url)
