"""`rttlab evaluate` and `rttlab estimators` as a user runs them: a real subprocess each time."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

RTTLAB = [sys.executable, "-m", "rttlab.cli.main"]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*RTTLAB, *map(str, args)], capture_output=True, text=True, timeout=120)


def test_the_sample_evaluation_prints_every_estimator():
    out = run("evaluate", "--sample")
    assert out.returncode == 0, out.stderr
    for name in (
        "rfc6298",
        "linux",
        "freebsd",
        "eifel",
        "peak-hopper",
        "quic",
        "fixed-share",
        "ca-rto",
        "regression",
    ):
        assert name in out.stdout


def test_json_rows_carry_the_documented_keys(write):
    path = write("s.csv", "\n".join(str(100 + (i * 37) % 50) for i in range(300)))
    out = run("evaluate", path, "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["schema"] == "rttlab.evaluate/3"
    assert doc["samples_read"] == 300
    keys = {
        "estimator",
        "floor",
        "floor_s",
        "pareto",
        "samples",
        "mae_s",
        "mae_after_s",
        "mape",
        "bad_timeouts",
        "bad_timeout_rate",
        "expiries",
        "karn_withheld",
        "wait_mean_s",
        "wait_p99_s",
        "rto_mean_s",
    }
    assert all(keys <= row.keys() for row in doc["rows"])
    assert {r["estimator"] for r in doc["rows"]} >= {"rfc6298", "linux", "fixed-share"}
    assert all(r["samples"] == 299 for r in doc["rows"])


def test_parameters_reach_the_estimator(write):
    path = write("s.csv", "\n".join(["50"] * 100))
    low = json.loads(
        run("evaluate", path, "-e", "rfc6298", "-p", "rfc6298.min_rto=100ms", "--json").stdout
    )
    high = json.loads(run("evaluate", path, "-e", "rfc6298", "--json").stdout)
    assert low["rows"][0]["rto_mean_s"] < high["rows"][0]["rto_mean_s"] == pytest.approx(1.0)


@pytest.mark.parametrize(
    "content, expected",
    [
        ("100\n200\nabc\n", "s.csv:3: field 'rtt': 'abc' is not a number"),
        ("100\n-5\n", "s.csv:2: field 'rtt': an RTT must be positive, got -5"),
        ("100\nnan\n", "s.csv:2: field 'rtt': 'nan' is not a finite number"),
        ("", "s.csv: no RTT samples"),
    ],
)
def test_bad_files_give_one_line_naming_file_line_and_field(write, content, expected):
    out = run("evaluate", write("s.csv", content))
    assert out.returncode == 2
    assert expected in out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "args, expected",
    [
        (["evaluate", "/no/such/file.csv"], "/no/such/file.csv: no such file"),
        (["evaluate", "--sample", "-e", "bbr"], "unknown estimator 'bbr'"),
        (["evaluate", "--sample", "-p", "linux.rto_min=fast"], "linux.rto_min: cannot read 'fast'"),
        (["evaluate", "--sample", "-p", "linux.nope=1"], "linux: unknown parameter 'nope'"),
        (["evaluate", "--sample", "-p", "eifel"], "expected ESTIMATOR.KEY=VALUE"),
        (
            ["evaluate", "--sample", "-e", "linux", "-p", "eifel.gain=fixed"],
            "'eifel' is not among the selected estimators",
        ),
        (["evaluate"], "give one or more INPUTS, or --sample"),
        (["evaluate", "--sample", "--plot", "x.gif"], "must end in .png, .svg or .pdf"),
    ],
)
def test_bad_arguments_give_one_clear_line(args, expected):
    out = run(*args)
    assert out.returncode == 2
    assert expected in out.stderr, out.stderr
    assert "Traceback" not in out.stderr


def test_a_plot_is_written_in_the_format_of_its_extension(tmp_path):
    for ext, magic in ((".png", b"\x89PNG"), (".svg", b"<?xml"), (".pdf", b"%PDF")):
        target = tmp_path / f"fig{ext}"
        out = run("evaluate", "--sample", "-e", "rfc6298,fixed-share", "--plot", target)
        assert out.returncode == 0, out.stderr
        assert target.read_bytes().startswith(magic)


def test_estimators_lists_parameters_with_defaults():
    out = run("estimators", "--json")
    doc = json.loads(out.stdout)
    fs = next(e for e in doc["estimators"] if e["name"] == "fixed-share")
    assert {p["name"]: p["default"] for p in fs["params"]}["eta"] == "2"
    text = run("estimators", "linux").stdout
    assert "rto_min" in text and "200ms" in text


def test_every_command_explains_itself():
    for cmd in ([], ["evaluate"], ["estimators"]):
        out = run(*cmd, "--help")
        assert out.returncode == 0 and "Usage" in out.stdout


def test_every_shared_series_evaluates_quickly_with_sane_metrics(shared):
    for path in sorted((shared / "rtt-series").glob("*.csv")):
        start = time.perf_counter()
        out = run("evaluate", path, "--json")
        elapsed = time.perf_counter() - start
        assert out.returncode == 0, out.stderr
        rows = json.loads(out.stdout)["rows"]
        for r in rows:
            assert 0 <= r["bad_timeout_rate"] <= 1 and r["bad_timeouts"] <= r["expiries"]
            assert r["wait_mean_s"] > 0 and r["rto_mean_s"] > 0
            if r["mae_s"] is not None:
                assert r["mae_s"] >= 0 and r["mape"] >= 0
        # The series' own median RTT sets the scale: the best MAE must be below it.
        best = min(r["mae_s"] for r in rows if r["mae_s"] is not None)
        values = sorted(float(v) for v in path.read_text().split())
        assert best < values[len(values) // 2] / 1e3
        assert elapsed < 30, f"{path.name}: {elapsed:.1f} s (CLI start-up included)"


def synthetic_capture() -> bytes:
    """A client-side capture of one connection: handshake, then 20 segments each ACKed 40–59 ms
    later (so 20 seq samples of the path RTT)."""
    from test_capture import ACK, PSH, SYN, T0, pcap, tcp_frame

    frames = [
        (T0, tcp_frame(True, 100, 0, SYN)),
        (T0 + 0.050, tcp_frame(False, 900, 101, SYN | ACK)),
        (T0 + 0.0501, tcp_frame(True, 101, 901, ACK)),
    ]
    t, seq = T0 + 0.1, 101
    for i in range(20):
        frames.append((t, tcp_frame(True, seq, 901, ACK | PSH, 1000)))
        seq += 1000
        frames.append((t + 0.040 + i * 0.001, tcp_frame(False, 901, seq, ACK)))
        t += 0.1
    return pcap(frames)


def test_a_capture_is_scored_per_connection_on_its_path_rtt(write):
    out = run("evaluate", write("c.pcap", synthetic_capture()), "-e", "rfc6298,linux", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["input_kind"] == "capture"
    [conn] = doc["connections"]
    assert conn["vantage"] == "near sender" and conn["method"] == "seq fwd"
    assert conn["samples"] == doc["samples_read"] == 20
    # One connection: the pooled rows are that connection's rows.
    pooled = {r["estimator"]: r for r in doc["rows"]}
    for r in conn["rows"]:
        assert r == pooled[r["estimator"]]
    linux = pooled["linux"]
    assert linux["samples"] == 19 and linux["predicted"] == 19
    # RTTs 40..59 ms: the first scored prediction is 40 ms against 41 ms, and so on.
    assert 0.0 < linux["mae_s"] < 0.02


def test_units_do_not_apply_to_captures(write):
    out = run("evaluate", write("c.pcap", synthetic_capture()), "--unit", "ms")
    assert out.returncode == 2 and "--unit applies to RTT series" in out.stderr


def test_real_captures_evaluate_with_pooled_scores_equal_to_the_sum_of_connections(shared):
    out = run(
        "evaluate", shared / "captures" / "ndpi_sites-multiif.pcapng", "-e", "rfc6298", "--json"
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert len(doc["connections"]) > 10
    scored = sum(max(c["samples"] - 1, 0) for c in doc["connections"])
    assert doc["rows"][0]["samples"] == scored


def test_error_messages_keep_bracketed_user_text(write):
    # rich would swallow "[...]" as markup; the file's own bytes must reach the user intact.
    out = run("flows", write("g.pcap", b"[abc] not a capture"))
    assert out.returncode == 2
    assert "[5b, 61, 62, 63]" in out.stderr, out.stderr


def test_a_scenario_that_is_not_toml_is_one_line_naming_the_file(write):
    path = write("s.toml", "root:x:0:0:root:/root:/bin/bash\n")
    out = run("simulate", path)
    assert out.returncode == 2
    assert (
        out.stderr.strip()
        == f"rttlab: error: {path}: scenario is not valid TOML: line 1, column 32: key with no value, expected `=`"
    )


def test_the_table_shows_floors_the_pareto_front_and_says_when_rows_are_identical():
    out = run("evaluate", "--sample", "-e", "rfc6298,ca-rto,quic,linux")
    assert out.returncode == 0, out.stderr
    assert "SRTT + 200 ms" in out.stdout and "1 s" in out.stdout
    assert "◆" in out.stdout
    assert "rfc6298 and ca-rto: identical on every metric" in out.stdout
    assert "ca-rto: closed-loop only" in out.stdout
    assert "premature" not in out.stdout


def test_min_rto_equalises_every_floor(write):
    # 100 ms RTTs: with every floor at 300 ms, rfc6298 and quic wait 300 ms on a loss.
    path = write("s.csv", "\n".join(["100"] * 50))
    doc = json.loads(
        run("evaluate", path, "-e", "rfc6298,quic,linux", "--min-rto", "300ms", "--json").stdout
    )
    rows = {r["estimator"]: r for r in doc["rows"]}
    assert doc["settings"]["min_rto_s"] == 0.3
    assert rows["rfc6298"]["wait_mean_s"] == pytest.approx(0.3)
    # QUIC's PTO starts above 300 ms (100 + 4·50 + 25 ms) and sinks to the floor within samples.
    assert 0.3 <= rows["quic"]["wait_mean_s"] < 0.301
    assert rows["rfc6298"]["floor"] == "300 ms" and rows["quic"]["floor_s"] == 0.3
    # Linux's floor sits above SRTT: 100 ms + 300 ms.
    assert rows["linux"]["floor"] == "SRTT + 300 ms, ≥ 300 ms"
    assert rows["linux"]["wait_mean_s"] == pytest.approx(0.4, abs=2e-3)
    clash = run("evaluate", path, "-e", "rfc6298", "--min-rto", "300ms", "-p", "rfc6298.min_rto=1s")
    assert clash.returncode == 2 and "both set the floor of rfc6298" in clash.stderr


def test_tick_sets_fixed_share_and_warns_about_samples_above_its_top_expert(write):
    path = write("s.csv", "\n".join(["100"] * 20 + ["900"] * 5))
    out = run("evaluate", path, "-e", "fixed-share,linux", "--tick", "4ms", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert {r["estimator"] for r in doc["rows"]} == {"fixed-share", "linux"}
    assert doc["params"] == {"fixed-share": {"tick": "0.004"}, "linux": {"hz": "250"}}
    assert (
        "5 of 25 samples (20.0%) exceed its top expert (516 ms = 129 ticks of 4 ms)" in out.stderr
    )
    assert "exceed" in " ".join(doc["warnings"])
    clamped = run("evaluate", path, "-e", "fixed-share", "-p", "fixed-share.clamp=top")
    assert clamped.returncode == 0 and "exceed" not in clamped.stderr


def test_the_timer_options_reach_the_replay(write):
    # 100 ms RTTs with one 1.5 s stall: rfc6298 without floor times out once; a 2 s floor never.
    path = write("s.csv", "\n".join(["100"] * 10 + ["1500"] + ["100"] * 10))
    base = ["evaluate", path, "-e", "rfc6298", "-p", "rfc6298.min_rto=0", "--json"]
    karn = json.loads(run(*base).stdout)["rows"][0]
    ts = json.loads(run(*base, "--timestamps").stdout)["rows"][0]
    assert karn["bad_timeouts"] == ts["bad_timeouts"] == 1
    assert json.loads(run(*base).stdout)["settings"]["timestamps"] == "auto"
    assert karn["karn_withheld"] == 1 and ts["karn_withheld"] == 0
    beat = json.loads(run(*base, "--timer-granularity", "500ms").stdout)
    assert beat["settings"]["timer_granularity_s"] == 0.5
    assert beat["rows"][0]["wait_mean_s"] > karn["wait_mean_s"]


def test_ctrl_c_during_a_long_replay_stops_within_a_second(tmp_path):
    import signal

    import numpy as np

    # 2 M samples × every estimator: several seconds of core replay on any machine.
    path = tmp_path / "long.csv"
    rng = np.random.default_rng(1)
    np.savetxt(path, 100 + rng.gamma(2.0, 5.0, 2_000_000), fmt="%.2f")
    p = subprocess.Popen(
        [*RTTLAB, "evaluate", str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(2.0)  # imports and the read are done: the replay is running
    assert p.poll() is None
    sent = time.perf_counter()
    p.send_signal(signal.SIGINT)
    err = p.communicate(timeout=30)[1]
    assert time.perf_counter() - sent < 1.0
    assert p.returncode == 130 and err.strip().endswith("rttlab: error: interrupted")


# ---- units and columns as people write them ----


def _ms_csv(n: int = 300, header: str = "time,rtt") -> str:
    """A `time,rtt` CSV whose RTTs are milliseconds (60–99 ms), its times seconds."""
    rtts = [60 + (i * 37) % 40 for i in range(n)]
    return f"{header}\n" + "".join(f"{0.1 * i:.1f},{r}\n" for i, r in enumerate(rtts))


def test_milliseconds_read_as_seconds_warn_on_stderr_and_are_scored_as_read(write):
    path = write("ms.csv", _ms_csv())
    out = run("evaluate", path, "-e", "rfc6298", "--json")
    assert out.returncode == 0, out.stderr
    assert out.stderr.strip() == (
        f"rttlab: warning: {path}: median RTT 80 s, read in seconds (the default under a header), is "
        "implausible for a network path; if the values are milliseconds, say so: --unit ms, or the header rtt_ms"
    )
    doc = json.loads(out.stdout)
    assert doc["warnings"] == [out.stderr.strip().removeprefix("rttlab: warning: ")]
    assert doc["rows"][0]["mae_s"] > 1  # seconds, as read: the warning changes no number
    told = json.loads(run("evaluate", path, "-e", "rfc6298", "--unit", "ms", "--json").stdout)
    assert told["warnings"] == [] and told["rows"][0]["mae_s"] < 0.1


def test_a_timestamp_rtt_ms_header_is_understood_without_options(write):
    path = write("ms.csv", _ms_csv(header="timestamp,rtt_ms"))
    out = run("evaluate", path, "-e", "rfc6298", "--json")
    assert out.returncode == 0 and out.stderr == "", out.stderr
    plain = json.loads(
        run("evaluate", write("s.csv", _ms_csv()), "-e", "rfc6298", "--unit", "ms", "--json").stdout
    )
    assert json.loads(out.stdout)["rows"] == plain["rows"]


def test_columns_name_the_time_and_rtt_columns(write):
    rows = _ms_csv().replace("time,rtt", "seq,when,lat_ms,rtt").splitlines()
    text = rows[0] + "\n" + "".join(f"{k},{line},999\n" for k, line in enumerate(rows[1:]))
    out = run(
        "evaluate",
        write("c.csv", text),
        "-e",
        "rfc6298",
        "--columns",
        "time=when,rtt=lat_ms",
        "--json",
    )
    assert out.returncode == 0, out.stderr
    plain = json.loads(
        run("evaluate", write("s.csv", _ms_csv()), "-e", "rfc6298", "--unit", "ms", "--json").stdout
    )
    assert json.loads(out.stdout)["rows"] == plain["rows"]


@pytest.mark.parametrize(
    "content, args, expected",
    [
        (
            "time,rtt_ms\n1,20\n",
            ["--columns", "rtt=latency"],
            "s.csv:1: column 'latency' (named for rtt) is not in the header; its columns: 'time', 'rtt_ms'",
        ),
        (
            "time,rtt_ms\n1,20\n",
            ["--columns", "latency"],
            "--columns 'latency': 'latency' is not ROLE=COLUMN",
        ),
        (
            "time,rtt_ms\n1,20\n",
            ["--columns", "delay=x"],
            "unknown role 'delay' (the roles are time and rtt)",
        ),
        (
            "time,rtt_ms\n1,20\n",
            ["--unit", "s"],
            "s.csv:1: column 'rtt_ms' is in ms by its name, but the unit given is s: drop the unit (--unit) or rename the column",
        ),
        ("rtt,rtt\n1,2\n", [], "s.csv:1: the header names rtt column 'rtt' 2 times"),
        ("time,rtt,rtt_ms\n1,2,3\n", [], "choose one with --columns rtt=NAME"),
        (",\n1,2\n", [], "s.csv:1: the header has no 'rtt' column (its columns: '', '')"),
        ("0.5,80\n1.0,90\n", [], "s.csv:1: 2 fields but no header"),
        ("80\n90\n", ["--columns", "rtt=rtt"], "but the file has no header"),
    ],
)
def test_bad_headers_and_column_choices_give_one_line(write, content, args, expected):
    out = run("evaluate", write("s.csv", content), *args)
    assert out.returncode == 2
    assert expected in out.stderr, out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_columns_do_not_apply_to_captures(write):
    out = run("evaluate", write("c.pcap", synthetic_capture()), "--columns", "rtt=x")
    assert out.returncode == 2
    assert "--columns applies to RTT series; " in out.stderr and "c.pcap is a capture" in out.stderr


# ---- several inputs ----


def test_several_inputs_pool_their_samples_and_each_is_kept_alone(write):
    a = write("a.csv", "\n".join(str(100 + (i * 37) % 50) for i in range(300)))
    b = write("b.csv", "timestamp,rtt_ms\n" + "".join(f"{i},{40 + i % 7}\n" for i in range(200)))
    c = write("c.pcap", synthetic_capture())
    out = run("evaluate", a, b, c, "-e", "rfc6298,quic", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["input_kind"] == "inputs" and doc["input"] == f"{a} + {b} + {c}"
    assert [e["input"] for e in doc["inputs"]] == [str(a), str(b), str(c)]
    assert doc["samples_read"] == 300 + 200 + 20
    alone = {
        str(p): json.loads(run("evaluate", p, "-e", "rfc6298,quic", "--json").stdout)
        for p in (a, b, c)
    }
    for e in doc["inputs"]:
        assert e["rows"] == alone[e["input"]]["rows"]
    # Each stream replayed from a fresh estimator and timer: counts add up across inputs.
    pooled = {r["estimator"]: r for r in doc["rows"]}
    for name in ("rfc6298", "quic"):
        own = [next(r for r in alone[str(p)]["rows"] if r["estimator"] == name) for p in (a, b, c)]
        for key in ("samples", "bad_timeouts", "expiries", "lost_segments"):
            assert pooled[name][key] == sum(r[key] for r in own), (name, key)
        w = sum(r["wait_mean_s"] * r["samples"] for r in own) / sum(r["samples"] for r in own)
        assert pooled[name]["wait_mean_s"] == pytest.approx(w)


def test_several_inputs_print_the_pooled_table_then_one_row_per_input(write):
    a = write("a.csv", "\n".join(str(100 + (i * 37) % 50) for i in range(300)))
    b = write("b.csv", "\n".join(str(40 + i % 7) for i in range(200)))
    out = run("evaluate", a, b, "-e", "rfc6298,quic")
    assert out.returncode == 0, out.stderr
    pooled, per_input = out.stdout.split("per input", 1)
    assert "2 inputs — 500 samples, 498 scored" in pooled.replace("\n", " ")
    assert "a.csv" in per_input and "b.csv" in per_input
    assert "the rows pool every scored sample of the 2 inputs" in out.stdout


def test_several_inputs_as_csv_carry_an_input_column(write):
    a = write("a.csv", "\n".join(str(100 + i % 9) for i in range(50)))
    b = write("b.csv", "\n".join(str(40 + i % 7) for i in range(50)))
    out = run("evaluate", a, b, "-e", "rfc6298,quic", "--csv")
    assert out.returncode == 0, out.stderr
    import csv
    import io

    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert [r["input"] for r in rows] == ["", "", str(a), str(a), str(b), str(b)]
    assert [r["samples"] for r in rows] == ["98", "98", "49", "49", "49", "49"]


def test_several_inputs_plot_one_figure_per_input_and_the_pooled_front(write, tmp_path):
    a = write("a.csv", "\n".join(str(100 + i % 9) for i in range(50)))
    b = write("b.csv", "\n".join(str(40 + i % 7) for i in range(50)))
    out = run("evaluate", a, b, "-e", "rfc6298,quic", "--plot", tmp_path / "fig.png")
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in tmp_path.glob("fig*.png")) == [
        "fig-a.png",
        "fig-b.png",
        "fig-front.png",
    ]
    assert "(one per input)" in out.stdout


def test_an_input_given_twice_is_refused(write):
    a = write("a.csv", "100\n110\n")
    out = run("evaluate", a, a)
    assert out.returncode == 2 and f"{a}: given twice" in out.stderr


# ---- the Pareto mark ----


def test_a_short_series_marks_no_row_and_says_how_many_samples_the_mark_needs(write):
    path = write("short.csv", "\n".join(str(50 + (i * 7) % 11) for i in range(49)))
    out = run("evaluate", path)
    assert out.returncode == 0, out.stderr
    assert "◆" not in out.stdout
    assert (
        "rttlab: warning: 48 scored samples: too few to rank estimators by bad timeouts; a 1% bad-timeout "
        "rate is known to ±50 % only from ≈1,522 samples (95 % binomial interval), so no row is marked ◆"
    ) in out.stderr.splitlines()
    doc = json.loads(run("evaluate", path, "--json").stdout)
    assert doc["pareto"] == [] and not any(r["pareto"] for r in doc["rows"])
    assert doc["pareto_min_samples"] == 1522


def test_a_long_enough_series_marks_its_front_and_explains_the_mark_in_one_line():
    out = run("evaluate", "--sample", "-e", "rfc6298,quic,linux,last")
    assert out.returncode == 0, out.stderr
    assert "◆" in out.stdout and "too few" not in out.stderr
    assert (
        "◆ = no other row beats it on both bad TO % and W: a trade-off, not a winner" in out.stdout
    )


def test_one_estimator_alone_has_nothing_to_rank_and_no_mark_warning(write):
    path = write("short.csv", "\n".join(str(50 + i % 11) for i in range(49)))
    out = run("evaluate", path, "-e", "rfc6298")
    assert out.returncode == 0 and out.stderr == "", out.stderr


def test_a_short_connection_shows_why_it_has_no_front(write):
    out = run("evaluate", write("c.pcap", synthetic_capture()), "-e", "rfc6298,linux")
    assert out.returncode == 0, out.stderr
    assert "— (< 1,522 samples)" in out.stdout
    assert "19 scored samples: too few to rank estimators" in out.stderr


def test_several_inputs_mark_the_pooled_front_and_name_short_inputs_in_their_row(write):
    a = write("a.csv", "\n".join(str(100 + (i * 37) % 50) for i in range(1600)))
    b = write("b.csv", "\n".join(str(40 + i % 7) for i in range(100)))
    out = run("evaluate", a, b, "-e", "rfc6298,quic,linux")
    assert out.returncode == 0, out.stderr
    pooled, per_input = out.stdout.split("per input", 1)
    assert "◆" in pooled and "— (< 1,522 samples)" in per_input
    assert "too few" not in out.stderr  # each input's rows are in its own row, not warned twice


def test_plot_flow_draws_the_connection_asked_for_and_names_the_ones_there_are(shared, tmp_path):
    cap = shared / "captures" / "ndpi_KakaoTalk_talk-sll.pcap"
    flows = json.loads(run("flows", cap, "--json").stdout)["flows"]
    small = min((f for f in flows if f["path_samples"] > 1), key=lambda f: f["path_samples"])
    import rttlab

    drawn = rttlab.evaluate(cap, ["rfc6298"], trace=True, trace_conn=small["conn"])
    assert f"connection {small['conn']} " in drawn.trace_title
    assert len(drawn.trace.times_s) == small["path_samples"]
    out = run("evaluate", cap, "-e", "rfc6298", "--plot", tmp_path / "f.png", "--flow", "999")
    assert out.returncode != 0 and out.stderr.count("\n") == 1
    assert "--flow 999: no connection with a path-RTT series has that id (these do: " in out.stderr
    out = run("evaluate", cap, "-e", "rfc6298", "--flow", str(small["conn"]))
    assert out.returncode == 2 and "--flow: only with --plot" in out.stderr
