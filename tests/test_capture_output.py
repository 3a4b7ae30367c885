"""What `rttlab flows --json` and `rttlab samples -o FILE.parquet` write now that the core writes
them (src/capture/flows_json.rs, src/capture/parquet_file.rs): the same bytes and values as the
Python writers they replace, read back by pyarrow, pandas and DuckDB, with none of NumPy,
pandas, pyarrow or pydantic imported on the way."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import rttlab
from rttlab.trace.capture import read_capture
from test_capture import ACK, SYN, T0, bulk, pcap, run, tcp_frame, transfer, varied


def flows_json_by_python(captures: list[Path]) -> str:
    """`rttlab flows --json` as the Python writer made it before the core wrote the records:
    `json.dumps` of one dict per connection, from the Arrow table of `analyze()`."""

    def clean(v):
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, list):
            return [clean(x) for x in v]
        return None if isinstance(v, float) and not math.isfinite(v) else v

    out = ["[\n"] if len(captures) > 1 else []
    for i, cap in enumerate(captures):
        raw = rttlab.capture.analyze(cap)
        indent = "  " if len(captures) > 1 else ""
        head = {
            "schema": "rttlab.flows/1",
            "capture": str(cap),
            "counters": raw["counters"],
            "warnings": list(raw["warnings"]),
        }
        body = json.dumps(clean(head), indent=2)[:-2]
        out.append(
            "\n".join(indent + line for line in body.splitlines()) + ",\n" + indent + '  "flows": ['
        )
        records = raw["connections"].to_pylist()  # unknown values are nulls: None
        for n, record in enumerate(records):
            out.append(("," if n else "") + "\n" + indent + "    " + json.dumps(clean(record)))
        out.append(("\n" + indent + "  " if records else "") + "]\n" + indent + "}")
        out.append(",\n" if i + 1 < len(captures) else "\n")
    if len(captures) > 1:
        out.append("]\n")
    return "".join(out)


def test_flows_json_is_byte_for_byte_what_pythons_json_module_wrote(write):
    caps = [
        write("varied.pcap", pcap(varied())),
        write("bulk.pcap", pcap(bulk(50))),
        write("t.pcap", pcap(transfer())),
    ]
    for cap in caps:
        out = run("flows", cap, "--json")
        assert out.returncode == 0, out.stderr
        assert out.stdout == flows_json_by_python([cap]), cap.name
    assert "null" in run("flows", caps[0], "--json").stdout
    # Several files (indented objects in a list), a non-ASCII name, a connection with nulls.
    odd = write("é – ✓.pcap", pcap(transfer()))
    hs = write(
        "hs.pcap",
        pcap(
            [
                (T0, tcp_frame(True, 100, 0, SYN)),
                (T0 + 0.4, tcp_frame(True, 100, 0, SYN)),
                (T0 + 0.5, tcp_frame(False, 900, 101, SYN | ACK)),
            ]
        ),
    )
    several = [caps[0], odd, hs]
    out = run("flows", *several, "--json")
    assert out.returncode == 0, out.stderr
    assert out.stdout == flows_json_by_python(several)
    assert "\\u00e9 \\u2013 \\u2713.pcap" in out.stdout


def test_flows_csv_is_the_connections_frame_pandas_writes(write):
    cap = write("varied.pcap", pcap(varied()))
    out = run("flows", cap, "--csv")
    assert out.returncode == 0, out.stderr
    _, conns = read_capture(cap)
    assert out.stdout == conns.to_csv(index=False)
    assert out.stdout.splitlines()[0].split(",") == [
        name for name, *_ in rttlab._core.connection_columns()
    ]


def test_the_parquet_file_reads_back_as_the_api_gives_in_pandas_and_duckdb(write, tmp_path):
    import duckdb

    caps = [
        write("varied.pcap", pcap(varied())),
        write("bulk.pcap", pcap(bulk(400))),
        write("t.pcap", pcap(transfer())),
    ]
    dest = tmp_path / "s.parquet"
    out = run("samples", *caps, "--include-ambiguous", "-o", dest)
    assert out.returncode == 0, out.stderr
    frames = []
    for cap in caps:
        frame, _ = read_capture(cap, include_ambiguous=True)
        frames.append(frame.assign(capture=str(cap))[["capture", *frame.columns]])
    want = pd.concat(frames, ignore_index=True)
    got = pd.read_parquet(dest)
    assert list(got.columns) == list(want.columns) and len(got) == len(want) > 500
    for name in ("direction", "method"):
        # Categories, in the order the values first appear in the file (docs/capture.md).
        assert isinstance(got[name].dtype, pd.CategoricalDtype), name
        got[name], want[name] = got[name].astype(str), want[name].astype(str)
    got["capture"] = got["capture"].astype(object)
    want["capture"] = want["capture"].astype(object)
    pd.testing.assert_frame_equal(got, want)
    db = duckdb.sql(
        f"select count(*), sum(rtt), sum(seq_end), count(distinct method), sum(ambiguous::int) from '{dest}'"
    ).fetchall()[0]
    assert db[0] == len(want) and db[1] == pytest.approx(want["rtt"].sum(), rel=1e-12)
    assert (
        db[2] == want["seq_end"].sum()
        and db[3] == want["method"].nunique()
        and db[4] == want["ambiguous"].sum()
    )


def test_the_parquet_file_keeps_dictionaries_to_the_text_columns_and_deltas_to_the_integers(
    write, tmp_path
):
    import pyarrow.parquet as pq

    dest = tmp_path / "s.parquet"
    assert run("samples", write("t.pcap", pcap(transfer())), "-o", dest).returncode == 0
    meta = pq.ParquetFile(dest).metadata
    group = meta.row_group(0)
    encodings = {
        group.column(i).path_in_schema: group.column(i).encodings for i in range(group.num_columns)
    }
    assert all("RLE_DICTIONARY" in encodings[c] for c in ("direction", "method"))
    assert all("RLE_DICTIONARY" not in encodings[c] for c in ("conn", "time", "rtt", "seq_start"))
    assert all(
        "DELTA_BINARY_PACKED" in encodings[c]
        for c in ("conn", "seq_start", "seq_end", "frame", "ref_frame")
    )
    compression = {
        group.column(i).path_in_schema: group.column(i).compression
        for i in range(group.num_columns)
    }
    # Snappy where it shrinks the pages; the dense bit-packed columns are stored as they are.
    assert all(compression[c] == "SNAPPY" for c in ("time", "rtt", "ambiguous", "idle_echo"))
    assert all(
        compression[c] == "UNCOMPRESSED"
        for c in ("conn", "direction", "method", "seq_start", "seq_end", "frame", "ref_frame")
    )
    assert pq.read_schema(dest).field("direction").type.value_type == "string"


@pytest.mark.parametrize(
    "args",
    [
        ["flows", "--json"],
        ["samples", "-o", "{tmp}/s.parquet"],
        ["samples", "-o", "{tmp}/s.csv"],
        ["samples"],
    ],
    ids=["flows-json", "samples-parquet", "samples-csv", "samples-stdout"],
)
def test_the_capture_commands_import_no_numpy_pandas_pyarrow_or_pydantic(write, tmp_path, args):
    cap = write("t.pcap", pcap(transfer()))
    argv = ["rttlab", *[a.format(tmp=tmp_path) for a in args], str(cap)]
    probe = (
        "import sys, json, contextlib, io\n"
        "from rttlab.cli.main import main\n"
        f"sys.argv = {argv!r}\n"
        "out = io.StringIO()\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(out):\n"
        "    main()\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'pandas', 'pyarrow', 'pydantic', 'rich'})\n"
        "print(json.dumps(heavy), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stderr.strip().splitlines()[-1]) == [], done.stderr


def test_options_converted_without_pydantic_keep_pydantics_values_and_messages(write):
    cap = write("t.pcap", pcap(transfer()))
    out = run("flows", "--threads", "x", cap)
    assert out.returncode == 2
    words = " ".join(out.stderr.replace("│", " ").split())  # the usage box wraps the line
    assert (
        "Invalid value for '--threads': Input should be a valid integer, unable to parse string as an integer"
        in words
    )
    assert (
        run("samples", cap, "--flow", " 0 ", "--threads", "+1").stdout
        == run("samples", cap, "--flow", "0.0").stdout
        == run("samples", cap, "--flow", "0").stdout
    )
    for bad in (
        "1e3",
        "0.5",
        "3.",
        "\u0663",
    ):  # as pydantic: no exponent, fraction or non-ASCII digit
        assert run("samples", cap, "--flow", bad).returncode == 2, bad


def test_flows_shows_the_path_samples_evaluate_replays_beside_every_sample(shared):
    """Issue 42: `flows` said 334 RTT samples where `evaluate` scored 159, and did not say why."""
    import os

    from rttlab.trace.capture import path_samples

    for cap in sorted((shared / "captures").glob("*.pcap*"))[:4]:
        run = [sys.executable, "-m", "rttlab.cli.main", "flows", str(cap)]
        doc = json.loads(subprocess.run([*run, "--json"], capture_output=True, text=True).stdout)
        samples, conns = read_capture(cap)
        want = path_samples(samples, conns).groupby("conn").size()
        for f in doc["flows"]:
            assert f["path_samples"] == int(want.get(f["conn"], 0)) <= f["samples"], cap
    env = {**os.environ, "COLUMNS": "240"}
    text = subprocess.run(run, capture_output=True, text=True, env=env).stdout
    assert "samples all/path" in text and "which `rttlab evaluate` replays" in " ".join(
        text.split()
    )
