"""Which store a process opens (``COMPOZY_STORE``, ``serve --store``): SQLite in the home when
none is named, PostgreSQL for a postgresql:// URL, a clear error for anything else."""

from __future__ import annotations

from pathlib import Path

import pytest

from compozy_mcp.config import Settings
from compozy_mcp.errors import ConfigError
from compozy_mcp.store import SQLiteStore
from compozy_mcp.store.open import check_spec, open_store


@pytest.mark.parametrize("spec", [None, "", "  "])
def test_without_a_store_named_it_is_the_sqlite_file_in_the_home(
    tmp_path: Path, spec: str | None
) -> None:
    with open_store(spec, tmp_path, busy_timeout_ms=1000) as store:
        assert isinstance(store, SQLiteStore)
        assert Path(store.path) == tmp_path / "compozy.db"


@pytest.mark.parametrize(
    "spec", ["mysql://db/compozy", "/var/lib/compozy.db", "sqlite:///x.db", "postgresql:"]
)
def test_a_store_that_is_no_postgresql_url_is_refused_saying_what_is_taken(
    tmp_path: Path, spec: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        open_store(spec, tmp_path, busy_timeout_ms=1000)
    assert "postgresql://" in refused.value.message
    assert not (tmp_path / "compozy.db").exists()


def test_both_url_schemes_of_postgresql_are_taken() -> None:
    assert check_spec(" postgresql://u@h/db ") == "postgresql://u@h/db"
    assert check_spec("postgres://u@h/db") == "postgres://u@h/db"


def test_the_environment_names_the_store(tmp_path: Path) -> None:
    env = {"COMPOZY_HOME": str(tmp_path), "COMPOZY_STORE": "postgresql://u@h/db"}
    assert Settings.from_env(env).store == "postgresql://u@h/db"
    assert Settings.from_env({"COMPOZY_HOME": str(tmp_path)}).store is None
