"""One secret reference type for flags and config: its forms, its errors, and that it never shows a value."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.secret_ref import SecretRef, SecretRefError

SECRET = "whsec_never_shown_0123456789"


def test_each_form_resolves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOOKPROOF_TEST_SECRET", SECRET)
    (tmp_path / "secret.txt").write_text(SECRET + "\n")
    assert SecretRef.parse(SECRET).resolve() == SECRET
    assert SecretRef.parse("env:HOOKPROOF_TEST_SECRET").resolve() == SECRET
    assert SecretRef.parse("file:secret.txt").resolve(tmp_path) == SECRET
    assert SecretRef.parse(f"file:{tmp_path / 'secret.txt'}").resolve() == SECRET


@pytest.mark.parametrize(("value", "message"), [
    ("", "the secret is empty or blank"),
    ("   ", "the secret is empty or blank"),
    ("env:", "the environment variable's name is missing (write env:NAME)"),
    ("file: ", "the secret file's path is missing (write file:PATH)"),
])
def test_a_malformed_reference_is_refused(value: str, message: str) -> None:
    with pytest.raises(SecretRefError, match=message.replace("(", r"\(").replace(")", r"\)")):
        SecretRef.parse(value)


def test_an_unresolvable_reference_names_its_source_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HOOKPROOF_TEST_MISSING", raising=False)
    with pytest.raises(SecretRefError, match="environment variable HOOKPROOF_TEST_MISSING is not set or empty"):
        SecretRef.parse("env:HOOKPROOF_TEST_MISSING").resolve()
    (tmp_path / "empty.txt").write_text("\n")
    with pytest.raises(SecretRefError, match="is empty"):
        SecretRef.parse("file:empty.txt").resolve(tmp_path)
    with pytest.raises(SecretRefError, match=r"cannot read secret file .*nowhere.txt \(FileNotFoundError\)"):
        SecretRef.parse("file:nowhere.txt").resolve(tmp_path)


def test_the_repr_shows_the_source_never_the_value() -> None:
    literal = SecretRef.parse(SECRET)
    assert SECRET not in repr(literal) and SECRET not in str(literal) and literal.source == "literal"
    assert repr(SecretRef.parse("env:NAME")) == "SecretRef(env:NAME)"
