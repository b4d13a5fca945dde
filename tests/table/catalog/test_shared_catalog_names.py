"""Tables of a shared catalog are named by ``name=``, by default the last component of their location, and
open by that name alone or by their location (whatever name they were given)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import fieldshift as fs

SCHEMA = pa.schema([("id", pa.int64())])


def test_the_default_name_is_the_last_component_of_the_location(tmp_path: Path) -> None:
    catalog = str(tmp_path / "shared.db")
    t = fs.Table.create(tmp_path / "lake" / "events", SCHEMA, catalog=catalog)
    assert t.name == "events"
    t.append({"id": [1]})
    by_name = fs.Table.open(catalog=catalog, name="events")  # no location: the catalog says where it lives
    assert by_name.location == tmp_path / "lake" / "events" and by_name.to_arrow().num_rows == 1
    assert fs.Table.open(tmp_path / "lake" / "events", catalog=catalog).name == "events"
    assert fs.Table.open(tmp_path / "lake" / "events").name == "events"  # through the directory's marker
    with pytest.raises(fs.TableError, match="named 'events' already exists"):
        fs.Table.create(tmp_path / "other" / "events", SCHEMA, catalog=catalog)
    fs.Table.create(tmp_path / "other" / "events", SCHEMA, catalog=catalog, name="events_2")
    assert fs.Table.open(tmp_path / "other" / "events", catalog=catalog).name == "events_2"


def test_a_table_named_by_its_full_path_still_opens_by_its_location(tmp_path: Path) -> None:
    catalog = str(tmp_path / "shared.db")
    home = tmp_path / "t"
    fs.Table.create(home, SCHEMA, catalog=catalog, name=str(home))  # as older fieldshift named it
    assert fs.Table.open(home, catalog=catalog).name == str(home)


def test_opening_without_location_needs_catalog_and_name(tmp_path: Path) -> None:
    with pytest.raises(fs.TableError, match="catalog= and name="):
        fs.Table.open(catalog=str(tmp_path / "shared.db"))
    with pytest.raises(fs.TableError, match="no fieldshift catalog"):
        fs.Table.open(catalog=str(tmp_path / "none.db"), name="x")
    fs.Table.create(tmp_path / "a", SCHEMA, catalog=str(tmp_path / "shared.db"))
    with pytest.raises(fs.TableError, match=r"no table of catalog .* lives at .*elsewhere.*--table NAME"):
        fs.Table.open(tmp_path / "elsewhere", catalog=str(tmp_path / "shared.db"))
