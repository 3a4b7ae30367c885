"""The simulator's result tables leave Rust as Arrow, in schemas defined once (src/sim/tables.rs)."""

from __future__ import annotations

import math
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import rttlab
from rttlab import _core
from rttlab.sim.run import PER_PACKET_TRACES, TRACES, conform, schema

ROOT = Path(__file__).resolve().parent.parent
RED10 = ROOT / "examples" / "scenarios" / "dumbbell-n10-red.toml"
SHORT = {"simulation.duration": "4s"}


@pytest.fixture(scope="module")
def result():
    return rttlab.simulate(RED10, set=SHORT, traces=TRACES)


def test_every_table_of_a_run_is_arrow_in_the_schema_the_core_defines(result):
    assert set(result.tables) == {"flows", "channels", *TRACES}
    for name, table in result.tables.items():
        assert isinstance(table, pa.Table)
        assert table.schema.equals(schema(name), check_metadata=True), name
        assert table.schema.metadata[b"table"] == name.encode()
    assert [n for n, _ in _core.result_schemas()] == [
        "flows",
        "channels",
        *TRACES,
        *PER_PACKET_TRACES,
    ]


def test_the_per_arrival_traces_are_kept_only_when_asked_for_by_name():
    threshold = {
        **SHORT,
        "topology.bottleneck.queue": {"kind": "threshold", "limit": "100p", "tau": 30},
    }
    assert not {"arrival", "quench"} & set(rttlab.simulate(RED10, set=threshold).traces)
    r = rttlab.simulate(RED10, set=threshold, traces="all,arrival,quench")
    arrival, quench = r.traces["arrival"], r.traces["quench"]
    channels = r.channels.set_index("channel")
    per_channel = arrival.groupby("channel", observed=True).size()
    assert {channels.loc[c, "name"] for c in per_channel.index} == {"bottleneck>", "bottleneck<"}
    assert all(per_channel[c] == channels.loc[c, "arrivals"] for c in per_channel.index)
    data = arrival[(arrival["channel"] == 0) & (arrival["kind"] == "data")]
    assert (
        len(quench)
        == channels.loc[0, "quench"]
        == int(((data["queue"] >= 30) | data["dropped"]).sum())
        > 0
    )
    assert (quench["queue"] >= 30).all()


def test_the_pandas_views_hold_the_same_values_as_the_arrow_tables(result):
    flows = result.tables["flows"]
    assert result.flows["goodput_bps"].tolist() == flows.column("goodput_bps").to_pylist()
    # No warm-up: the aggregate is every byte delivered over the whole run (docs/schema.md).
    assert sum(result.flows["bytes_delivered"]) * 8 / result.duration == pytest.approx(
        result.aggregate_goodput_bps, rel=1e-12
    )
    rtt = result.traces["rtt"]
    # A flow's first sample has no prediction: null in Arrow, NaN in pandas.
    assert result.tables["rtt"].column("prediction").null_count == 10
    assert int(rtt["prediction"].isna().sum()) == 10
    assert str(result.traces["drops"]["cause"].dtype) == "category"


def test_a_table_crosses_into_pyarrow_without_copying_its_buffers():
    raw = _core.simulate(RED10.read_text(), ["simulation.duration=2s"], "rtt")
    core_table = raw["traces"]["rtt"]
    a, b = pa.table(core_table), pa.table(core_table)
    # Both imports of the stream see the core's buffers, not copies of them.
    assert (
        a.column("sample").chunk(0).buffers()[1].address
        == b.column("sample").chunk(0).buffers()[1].address
    )
    assert len(core_table) == a.num_rows > 0


def test_duckdb_queries_a_core_table_directly(result):
    flows = result.tables["flows"]  # noqa: F841 - DuckDB finds it by name
    ((n, total),) = duckdb.sql("SELECT count(*), sum(bytes_delivered) FROM flows").fetchall()
    assert n == 10
    assert total * 8 / result.duration == pytest.approx(result.aggregate_goodput_bps, rel=1e-12)


def test_written_parquet_files_keep_the_schema(result, tmp_path):
    result.write(tmp_path)
    for name in ("flows", "queue"):
        assert pq.read_schema(tmp_path / f"{name}.parquet").equals(
            schema(name), check_metadata=False
        ), name
    assert (
        pq.read_table(tmp_path / "queue.parquet").column("average").null_count == 0
    )  # RED reports its average


def test_every_column_says_its_unit_and_meaning():
    for name, _ in _core.result_schemas():
        for field in schema(name):
            assert b"unit" in field.metadata and field.metadata[b"doc"], (name, field.name)
    assert schema("rtt").field("sample").metadata[b"unit"] == b"s"


def test_a_peer_simulator_s_missing_columns_are_null_not_zero():
    t = conform("flows", {"flow": [0, 1], "goodput_bps": [1.0, math.nan]})
    assert t.schema.equals(schema("flows"))
    assert t.column("retransmissions").null_count == 2
    assert t.column("goodput_bps").null_count == 1  # NaN from a peer is "not reported"
    with pytest.raises(ValueError, match="no column"):
        conform("flows", {"cwnd_at_noon": [1]})
    with pytest.raises(ValueError, match="no result table"):
        schema("packets")
