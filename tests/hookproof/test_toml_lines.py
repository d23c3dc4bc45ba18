"""The line behind a config error: every way TOML lets a key be written."""

from __future__ import annotations

import tomllib

import pytest

from hookproof.toml_lines import TomlLines, key_parts

TEXT = '''\
# a comment
profile_note = "x"
[target]
url = "http://127.0.0.1:8000/webhooks"
start.command = "python app.py"
"quoted key" = 1

[observer]
kind = "sql"
effects = """
SELECT business_key
  url = "not a key, inside a string"
FROM effects"""
state = 'x'

[business_keys]
"charge.succeeded" = "payment:{data.object.payment_intent}"
'invoice.paid' = "renewal:{data.object.id}"

[[replicas]]
name = "a"
'''
DOTTED = '''\
target.profile = "stripe"

target.url = "ftp://x"
observer.kind = "sql"
'''


def test_the_text_is_toml() -> None:
    tomllib.loads(TEXT)
    tomllib.loads(DOTTED)


@pytest.mark.parametrize(("path", "line"), [
    (("target",), 3),
    (("target", "url"), 4),
    (("target", "start", "command"), 5),
    (("target", "start"), 5),
    (("target", "quoted key"), 6),
    (("observer", "kind"), 9),
    (("observer", "effects"), 10),
    (("observer", "state"), 14),
    (("business_keys", "charge.succeeded"), 17),
    (("business_keys", "invoice.paid"), 18),
    (("replicas", "name"), 21),
    (("target", "secret"), 3),  # not set: the table's line
    (("run", "seed"), None),
])
def test_each_key_is_found_on_its_line(path: tuple[str, ...], line: int | None) -> None:
    assert TomlLines(TEXT).line_of(*path) == line


def test_dotted_keys_at_the_top_level() -> None:
    lines = TomlLines(DOTTED)
    assert lines.line_of("target", "url") == 3
    assert lines.line_of("target") == 1
    assert lines.line_of("observer", "kind") == 4
    assert lines.path_at(3) == ("target", "url")


def test_a_line_inside_a_multiline_string_is_no_key() -> None:
    assert TomlLines(TEXT).path_at(12) == ("observer", "effects")
    assert TomlLines(TEXT).path_at(15) == ("observer",)


def test_key_parts_unquote() -> None:
    assert key_parts('a . "b.c" . \'d\'') == ["a", "b.c", "d"]


def test_a_config_error_on_a_dotted_key_names_its_line() -> None:
    from hookproof.config import parse_config
    from hookproof.errors import ConfigError

    text = ('target.profile = "stripe"\ntarget.secret = "whsec_x"\n\ntarget.url = "ftp://x"\n'
            'observer.kind = "sql"\nobserver.url = "sqlite:///r.db"\nobserver.effects = "SELECT business_key FROM e"\n')
    with pytest.raises(ConfigError) as info:
        parse_config(text, "hookproof.toml")
    assert (info.value.field, info.value.line) == ("target.url", 4)
