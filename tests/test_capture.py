"""Captures → RTT samples: the Python API, the `flows`/`samples` CLI, and the tshark peer
comparison over every real capture in ../shared/captures."""

from __future__ import annotations

import collections
import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import rttlab
from rttlab import _core
from rttlab.trace.capture import CaptureReader, read_capture

RTTLAB = [sys.executable, "-m", "rttlab.cli.main"]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*RTTLAB, *map(str, args)], capture_output=True, text=True, timeout=300)


# ---- a tiny pcap writer, so the tests pin exact expectations on inputs they made ----

CLIENT, SERVER = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
SYN, ACK, PSH, FIN = 0x02, 0x10, 0x08, 0x01


def tcp_frame(
    c2s: bool,
    seq: int,
    ack: int,
    flags: int,
    payload: int = 0,
    ts: tuple[int, int] | None = None,
    sack: list[tuple[int, int]] | None = None,
) -> bytes:
    src, dst, sport, dport = (CLIENT, SERVER, 40000, 80) if c2s else (SERVER, CLIENT, 80, 40000)
    opts = b""
    if ts is not None:
        opts = bytes([1, 1, 8, 10]) + struct.pack(">II", *ts)
    if sack:
        opts += bytes([1, 1, 5, 2 + 8 * len(sack)]) + b"".join(
            struct.pack(">II", lo, hi) for lo, hi in sack
        )
    tcp = (
        struct.pack(
            ">HHIIBBHHH", sport, dport, seq, ack, (20 + len(opts)) // 4 << 4, flags, 65535, 0, 0
        )
        + opts
    )
    ip = struct.pack(
        ">BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp) + payload, 1, 0x4000, 64, 6, 0, src, dst
    )
    eth = b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00"
    return eth + ip + tcp + b"\xab" * payload


def pcap(packets: list[tuple[float, bytes]], linktype: int = 1) -> bytes:
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, linktype)]
    for t, frame in packets:
        us = round(t * 1e6)
        out.append(
            struct.pack("<IIII", us // 1_000_000, us % 1_000_000, len(frame), len(frame)) + frame
        )
    return b"".join(out)


T0 = 1_600_000_000.0


def transfer() -> list[tuple[float, bytes]]:
    """Client-side capture: handshake (100 ms, 0.5 ms), two segments, one ACK 120 ms after the
    second; timestamps on every packet; then FIN exchange."""
    return [
        (T0 + 0.000, tcp_frame(True, 100, 0, SYN, ts=(1, 0))),
        (T0 + 0.100, tcp_frame(False, 900, 101, SYN | ACK, ts=(7000, 1))),
        (T0 + 0.1005, tcp_frame(True, 101, 901, ACK, ts=(2, 7000))),
        (T0 + 0.101, tcp_frame(True, 101, 901, ACK | PSH, 1000, ts=(3, 7000))),
        (T0 + 0.102, tcp_frame(True, 1101, 901, ACK | PSH, 1000, ts=(4, 7000))),
        (T0 + 0.222, tcp_frame(False, 901, 2101, ACK, ts=(7120, 3))),
        (T0 + 0.300, tcp_frame(True, 2101, 901, FIN | ACK, ts=(5, 7120))),
    ]


def test_read_capture_returns_exact_samples_and_a_connection_summary(write):
    path = write("t.pcap", pcap(transfer()))
    samples, conns = rttlab.read_capture(path)
    got = [
        (r.method, r.direction, round(r.rtt, 6), r.seq_start, r.seq_end, r.frame, r.ref_frame)
        for r in samples.itertuples()
    ]
    assert got == [
        ("syn", "fwd", 0.1, 100, 101, 2, 1),
        ("ts", "fwd", 0.1, 101, 101, 2, 1),
        ("syn", "rev", 0.0005, 900, 901, 3, 2),
        ("ts", "rev", 0.0005, 901, 901, 3, 2),
        ("seq", "fwd", 0.12, 1101, 2101, 6, 5),
        ("ts", "fwd", 0.121, 101, 1101, 6, 4),
        # The FIN echoes the server's ACK TSval 7120: 78 ms on the client side of the path.
        ("ts", "rev", 0.078, 901, 901, 7, 6),
    ]
    assert samples["time"].iloc[-2] == pytest.approx(0.222)
    assert not samples["ambiguous"].any()
    assert len(conns) == 1
    c = conns.iloc[0]
    assert (c.src, c.dst) == ("10.0.0.1:40000", "10.0.0.2:80")
    assert (c.packets_fwd, c.packets_rev, c.bytes_fwd, c.bytes_rev) == (5, 2, 2000, 0)
    assert c.handshake_rtt == pytest.approx(0.1005)
    assert c.vantage == "near sender" and c.path_rtt_method == "seq fwd"
    assert (c.ttl_fwd, c.hops_fwd) == (64, 0)
    assert samples.attrs["warnings"] == []
    assert samples.attrs["counters"]["tcp"] == 7


def test_a_capture_cut_mid_packet_keeps_earlier_samples_and_warns(write):
    data = pcap(transfer())
    path = write("cut.pcap", data[:-20])
    samples, _ = read_capture(path)
    assert (samples["frame"] <= 6).all() and len(samples) == 6  # all but the FIN's echo
    (warning,) = samples.attrs["warnings"]
    assert (
        "damaged at packet 7" in warning
        and f"byte offset {len(data) - len(transfer()[-1][1]) - 16}" in warning
    )

    out = run("flows", path)
    assert out.returncode == 0
    assert "damaged at packet 7" in out.stderr


def test_ppp_captures_as_ns3_writes_them_give_the_ethernet_samples(write):
    """ns-3's point-to-point devices write DLT_PPP (9): a bare 2-byte protocol field, 0x0021 for IPv4."""
    ppp = [(t, b"\x00\x21" + frame[14:]) for t, frame in transfer()]
    eth_samples, _ = read_capture(write("eth.pcap", pcap(transfer())))
    ppp_samples, _ = read_capture(write("ppp.pcap", pcap(ppp, linktype=9)))
    assert len(ppp_samples) == len(eth_samples) > 0 and ppp_samples.attrs["warnings"] == []
    pd.testing.assert_frame_equal(ppp_samples, eth_samples)


def test_frames_of_an_unsupported_link_type_are_counted_and_named_in_a_warning(write):
    path = write("usb.pcap", pcap(transfer(), linktype=189))
    samples, _ = read_capture(path)
    assert samples.empty and samples.attrs["counters"]["unsupported_link"] == len(transfer())
    out = run("flows", path)
    assert out.returncode == 0
    assert f"{len(transfer())} frames of link type 189 were skipped" in out.stderr


@pytest.mark.parametrize(
    "content, expected",
    [
        (b"", "empty file"),
        (b"GIF89a-not-a-capture", "not a pcap or pcapng file"),
        (struct.pack("<I", 0xA1B2C3D4) + b"\x02\x00", "pcap file header is truncated"),
    ],
)
def test_unreadable_files_raise_and_the_cli_prints_one_line(write, content, expected):
    path = write("bad.pcap", content)
    with pytest.raises(rttlab.InputError, match=expected):
        read_capture(path)
    for cmd in ("flows", "samples"):
        out = run(cmd, path)
        assert out.returncode == 2
        assert expected in out.stderr and str(path) in out.stderr
        assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_missing_file_and_bad_options_are_one_line_errors(write):
    path = write("t.pcap", pcap(transfer()))
    for args, expected in [
        (["flows", "/no/such.pcap"], "/no/such.pcap: no such file"),
        (["samples", path, "--method", "rtt"], "--method: 'rtt' is not one of"),
        (["samples", path, "-o", "x.txt"], "must end in .csv, .parquet or .jsonl"),
        (["samples", path, "--flow", "3"], "--flow: no connection 3"),
    ]:
        out = run(*args)
        assert out.returncode == 2, args
        assert expected in out.stderr, out.stderr
        assert "Traceback" not in out.stderr


def test_flows_json_lists_connections_with_the_documented_keys(write):
    path = write("t.pcap", pcap(transfer()))
    out = run("flows", path, "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["schema"] == "rttlab.flows/1"
    (flow,) = doc["flows"]
    for key in (
        "src",
        "dst",
        "packets_fwd",
        "bytes_rev",
        "retransmissions_fwd",
        "sack_permitted",
        "ts_fwd",
        "handshake_rtt",
        "vantage",
        "path_rtt_method",
        "min_rtt",
        "max_rtt",
        "ttl_fwd",
        "hops_fwd",
        "malformed",
    ):
        assert key in flow
    assert flow["vantage"] == "near sender"
    table = run("flows", path)
    assert table.returncode == 0 and "near sender" in table.stdout


def test_samples_filters_by_method_and_flow_and_writes_csv_and_parquet(write, tmp_path):
    path = write("t.pcap", pcap(transfer()))
    out = run("samples", path, "--method", "seq")
    assert out.returncode == 0, out.stderr
    rows = out.stdout.strip().splitlines()
    assert rows[0].startswith("conn,direction,time,rtt,method,ambiguous,seq_start,seq_end")
    assert len(rows) == 2 and ",seq," in rows[1] and "0.120000000" in rows[1]
    for name in ("s.csv", "s.parquet"):
        dest = tmp_path / name
        done = run("samples", path, "-o", dest, "--flow", "0", "--method", "all")
        assert done.returncode == 0, done.stderr
        df = pd.read_csv(dest) if name.endswith(".csv") else pd.read_parquet(dest)
        assert len(df) == 7
        assert set(df["method"].astype(str)) == {"seq", "ts", "syn"}


def test_karn_samples_appear_only_with_include_ambiguous(write):
    pkts = [
        (T0, tcp_frame(True, 1, 1, ACK, 500)),
        (T0 + 0.2, tcp_frame(True, 1, 1, ACK, 500)),  # retransmission
        (T0 + 0.25, tcp_frame(False, 1, 501, ACK)),
    ]
    path = write("k.pcap", pcap(pkts))
    assert len(read_capture(path)[0]) == 0
    amb, _ = read_capture(path, include_ambiguous=True)
    assert list(amb["ambiguous"]) == [True] and amb["rtt"].iloc[0] == pytest.approx(0.25)
    out = run("samples", path, "--include-ambiguous")
    assert out.returncode == 0 and ",True," in out.stdout


def test_every_real_capture_reads_without_warnings(shared):
    for f in sorted((shared / "captures").glob("*.pcap*")):
        samples, conns = read_capture(f)
        assert samples.attrs["warnings"] == [], f.name
        assert len(conns) > 0 and (samples["rtt"] >= 0).all(), f.name


# ---- tshark peer comparison ----

CATEGORIES = {
    "same": "same sample, same value (to timestamp resolution)",
    "karn_ack_covers_retransmission": "the ACK also covers retransmitted bytes: Karn (as Linux applies it) drops it; tshark times the segment ending at the ACK",
    "tshark_times_resent_segment": "tshark times a segment whose bytes were sent before (retransmission, re-segmented 'out-of-order' resend, keep-alive) or from the first of repeated SYNs",
    "timed_earlier_by_sack": "segment first covered by a SACK block: we time it there; tshark (no SACK logic) times it at the later cumulative ACK, which measures loss recovery",
    "ours_sack_sample": "ours only: a SACK block first covers the segment exactly (tshark never samples on SACK)",
    "syn_resolved_by_ts_echo": "a retransmitted SYN or SYN/ACK whose answer's TSecr echoes one transmission's TSval: we time from that one, tshark from another (its first)",
}


def tshark_view(path: Path) -> tuple[dict[int, tuple[float, int, int]], set[int], set[int], int]:
    """tshark's ack_rtt samples {frame: (rtt, acks_frame, stream)}, the frames it flags as
    resent (retransmission, out-of-order, keep-alive, spurious), the frames with SACK, and the
    number of TCP streams."""
    fields = [
        "frame.number",
        "tcp.stream",
        "tcp.analysis.ack_rtt",
        "tcp.analysis.acks_frame",
        "tcp.options.sack_le",
    ]
    out = subprocess.run(
        ["tshark", "-n", "-r", str(path), "-T", "fields", *sum((["-e", f] for f in fields), [])],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    acks: dict[int, tuple[float, int, int]] = {}
    sack: set[int] = set()
    streams: set[str] = set()
    for line in out.splitlines():
        frame, stream, rtt, acked, sle = (line.split("\t") + [""] * 5)[:5]
        if stream:
            streams.add(stream)
        if rtt:
            acks[int(frame)] = (float(rtt), int(acked), int(stream))
        if sle:
            sack.add(int(frame))
    flagged = "tcp.analysis.retransmission || tcp.analysis.out_of_order || tcp.analysis.keep_alive || tcp.analysis.spurious_retransmission"
    out = subprocess.run(
        ["tshark", "-n", "-r", str(path), "-Y", flagged, "-T", "fields", "-e", "frame.number"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    return acks, {int(x) for x in out.split()}, sack, len(streams)


def tshark_ts_echoes(path: Path, frames: set[int]) -> dict[int, set[int]]:
    """For each frame in `frames`: the frames of the same TCP stream, before it and in the other
    direction, whose TSval its TSecr echoes (tshark's decoding, independent of ours)."""
    if not frames:
        return {}
    fields = [
        "frame.number",
        "tcp.stream",
        "tcp.srcport",
        "tcp.options.timestamp.tsval",
        "tcp.options.timestamp.tsecr",
    ]
    out = subprocess.run(
        [
            "tshark",
            "-n",
            "-r",
            str(path),
            "-Y",
            "tcp.options.timestamp.tsval",
            "-T",
            "fields",
            *sum((["-e", f] for f in fields), []),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    seen: dict[tuple[str, str, int], list[int]] = collections.defaultdict(
        list
    )  # (stream, port, tsval) → frames
    echoes: dict[int, set[int]] = {}
    for line in out.splitlines():
        frame, stream, port, tsval, tsecr = line.split("\t")[:5]
        frame_no = int(frame)
        if frame_no in frames and tsecr:
            echoes[frame_no] = {
                f
                for (s, p, v), fs in seen.items()
                if s == stream and p != port and v == int(tsecr.split(",")[0])
                for f in fs
            }
        seen[(stream, port, int(tsval.split(",")[0]))].append(frame_no)
    return echoes


def compare_with_tshark(path: Path) -> tuple[collections.Counter, list[str]]:
    samples, conns = read_capture(path, include_ambiguous=True)
    # tshark's ack_rtt covers data and the handshake, so compare with our seq and syn samples.
    ours = samples[samples["method"].isin(["seq", "syn"])]
    by_frame: dict[int, list] = collections.defaultdict(list)
    by_ref: dict[int, list] = collections.defaultdict(list)
    for r in ours.itertuples():
        by_frame[r.frame].append(r)
        by_ref[r.ref_frame].append(r)
    acks, resent, sack, streams = tshark_view(path)
    ts_echoed = tshark_ts_echoes(
        path, {f for f, rs in by_frame.items() if any(r.method == "syn" for r in rs)}
    )
    counts: collections.Counter = collections.Counter()
    unexplained: list[str] = []
    if len(conns) != streams:
        unexplained.append(f"{len(conns)} connections, tshark has {streams} TCP streams")
    for frame, (rtt, acked, _stream) in acks.items():
        match = [r for r in by_frame.get(frame, []) if r.ref_frame == acked]
        resolved = [
            r
            for r in by_frame.get(frame, [])
            if r.method == "syn" and not r.ambiguous and r.ref_frame != acked
        ]
        if resolved and resolved[0].ref_frame in ts_echoed.get(frame, set()):
            counts["syn_resolved_by_ts_echo"] += 1
        elif match and not match[0].ambiguous:
            if abs(match[0].rtt - rtt) <= 2e-9:
                counts["same"] += 1
            else:
                unexplained.append(f"frame {frame}: tshark {rtt:.9f} s, ours {match[0].rtt:.9f} s")
        elif any(r.ambiguous for r in by_frame.get(frame, [])):
            counts["karn_ack_covers_retransmission"] += 1
        elif acked in resent:
            counts["tshark_times_resent_segment"] += 1
        elif any(r.frame < frame for r in by_ref.get(acked, [])):
            counts["timed_earlier_by_sack"] += 1
        else:
            unexplained.append(
                f"frame {frame}: tshark times frame {acked} ({rtt:.6f} s), we have no sample"
            )
    for r in ours.itertuples():
        if r.ambiguous:
            continue
        t = acks.get(r.frame)
        if t is not None and t[1] == r.ref_frame:
            continue
        if r.method == "syn" and t is not None and r.ref_frame in ts_echoed.get(r.frame, set()):
            continue  # counted above: syn_resolved_by_ts_echo
        if r.method == "seq" and r.frame in sack:
            counts["ours_sack_sample"] += 1
        else:
            unexplained.append(
                f"frame {r.frame}: our {r.method} sample of frame {r.ref_frame} ({r.rtt:.6f} s) has no tshark counterpart"
            )
    return counts, unexplained


def test_seq_samples_match_tshark_on_every_real_capture(shared, capsys):
    if shutil.which("tshark") is None:
        # CI must compare against the peer; a user's machine without tshark skips with the reason.
        assert not os.environ.get("CI"), (
            "tshark is missing in CI: `make test-deps` failed to install it"
        )
        pytest.skip("tshark is not installed (make test-deps installs it from Debian)")
    total: collections.Counter = collections.Counter()
    problems: list[str] = []
    report = []
    for f in sorted((shared / "captures").glob("*.pcap*")):
        counts, unexplained = compare_with_tshark(f)
        total.update(counts)
        problems += [f"{f.name}: {u}" for u in unexplained]
        report.append(f"{f.name}: " + ", ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    with capsys.disabled():
        print("\ntshark peer comparison (ack_rtt vs our seq/syn samples):")
        for line in report:
            print("  " + line)
        for key, why in CATEGORIES.items():
            print(f"  TOTAL {key}={total[key]}: {why}")
    assert not problems, "\n".join(problems[:20])
    # Agreement is the rule, not the exception.
    assert total["same"] > 10 * (sum(total.values()) - total["same"]) / 2


# ---- an independent reference for the seq matcher, on random loss-free transfers ----

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@st.composite
def transfers(draw):
    """A loss-free one-way transfer seen at the sender: segments of random size sent at random
    times; the receiver acknowledges a random subset (delayed ACKs cover several segments) after
    random delays, ACKs leaving in order. ISN anywhere, so sequence numbers may wrap."""
    isn = draw(st.integers(0, 2**32 - 1))
    n = draw(st.integers(1, 40))
    sizes = draw(st.lists(st.integers(1, 1460), min_size=n, max_size=n))
    gaps = draw(st.lists(st.integers(0, 20_000), min_size=n, max_size=n))  # µs between sends
    delays = draw(st.lists(st.integers(1_000, 300_000), min_size=n, max_size=n))  # µs to the ACK
    acked = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    acked[-1] = True
    packets = []  # (time µs, order, c2s, seq, ack, payload)
    t, seq, last_ack_t = 0, isn, 0
    for i in range(n):
        t += gaps[i]
        packets.append((t, 2 * i, True, seq, 1, sizes[i]))
        seq = (seq + sizes[i]) % 2**32
        if acked[i]:
            last_ack_t = max(last_ack_t + 1, t + delays[i])
            packets.append((last_ack_t, 2 * i + 1, False, 1, seq, 0))
    packets.sort()
    return packets


def reference_seq_samples(packets):
    """RFC 6298 timing without retransmissions: an ACK that advances and equals a segment's end
    times that segment (µs). Written independently of the Rust matcher."""
    sent = {}  # end → send time µs
    out, highest = [], None
    for t, _, c2s, seq, ack, payload in packets:
        if c2s:
            sent.setdefault((seq + payload) % 2**32, t)
        else:
            advances = highest is None or 0 < (ack - highest) % 2**32 < 2**31
            if advances:
                if ack in sent:
                    out.append(t - sent[ack])
                highest = ack
    return out


@settings(max_examples=60, deadline=None)
@given(transfers())
def test_seq_samples_match_an_independent_reference_on_random_transfers(tmp_path_factory, packets):
    frames = [
        (T0 + t / 1e6, tcp_frame(c2s, seq, ack, ACK, payload))
        for t, _, c2s, seq, ack, payload in packets
    ]
    path = tmp_path_factory.mktemp("ref") / "r.pcap"
    path.write_bytes(pcap(frames))
    samples, _ = read_capture(path)
    got = [round(r * 1e6) for r in samples.loc[samples["method"] == "seq", "rtt"]]
    assert got == reference_seq_samples(packets)


# TS-echo path RTTs in MANIFEST.md (median ms, largest connection), measured there independently
# with the same definition: first packet carrying TSval v → first packet of the other side
# carrying TSecr v. At a sender-side capture the path RTT is the echo *by the ACKer*; at a
# receiver-side capture it is the echo *by the data sender*.
MANIFEST_TS_PATH_RTT = [
    ("zeek-tcprs_rto001.pcap", "by_acker", 120.1),
    ("zeek-tcprs_fast012.pcap", "by_acker", 30.9),
    ("zeek-tcprs_comp025.pcap", "by_acker", 518.6),
    ("zeek-tcprs_fack030.pcap", "by_acker", 847.7),
    ("ndpi_zoom2-2023.pcap", "by_acker", 174.7),
    ("suricata-verify_http-body-hook-01-ipv6.pcap", "by_sender", 31.5),
    ("ndpi_reddit-ipv6-2023.pcap", "by_sender", 43.9),
    ("ndpi_yandex_direct-2023.pcapng", "by_sender", 21.2),
    ("ndpi_ftp-2019.pcap", "by_sender", 30.5),
]


@pytest.mark.parametrize("name, echoed, manifest_ms", MANIFEST_TS_PATH_RTT)
def test_ts_echo_path_rtt_matches_the_manifest(shared, name, echoed, manifest_ms):
    samples, conns = read_capture(shared / "captures" / name)
    big = conns.loc[(conns["packets_fwd"] + conns["packets_rev"]).idxmax()]
    data = "fwd" if big["bytes_fwd"] >= big["bytes_rev"] else "rev"
    # A TSval sent in direction d is echoed by the far end of d.
    timed_dir = data if echoed == "by_acker" else ("rev" if data == "fwd" else "fwd")
    ts = samples[
        (samples["conn"] == big["conn"])
        & (samples["method"] == "ts")
        & (samples["direction"] == timed_dir)
    ]
    median_ms = ts["rtt"].median() * 1e3
    assert median_ms == pytest.approx(manifest_ms, rel=0.02, abs=0.2)
    # And the vantage guess points at exactly this series as the path RTT.
    assert big["path_rtt_method"] in (f"seq {data}", f"ts {timed_dir}", f"syn {timed_dir}")


def test_the_path_rtt_series_of_a_capture_feeds_evaluate(shared, tmp_path):
    cap = shared / "captures" / "ndpi_bot-vlan.pcap"
    samples, conns = read_capture(cap)
    path = rttlab.capture.path_samples(samples, conns)
    # Sender-side capture: the path RTT is the data direction's seq series (server → client).
    assert set(path["method"].astype(str)) == {"seq"} and set(path["direction"].astype(str)) == {
        "rev"
    }
    assert len(path) == ((samples["method"] == "seq") & (samples["direction"] == "rev")).sum()
    assert path["time"].is_monotonic_increasing
    dest = tmp_path / "path.csv"
    out = run("samples", cap, "--path", "--flow", "0", "-o", dest)
    assert out.returncode == 0, out.stderr
    scored = run("evaluate", dest, "-e", "rfc6298,linux", "--json")
    assert scored.returncode == 0, scored.stderr
    doc = json.loads(scored.stdout)
    assert doc["samples_read"] == len(path)
    # ~106 ms with little jitter (MANIFEST.md): RFC 6298's 1 s floor dominates its RTO.
    assert {r["estimator"]: r["rto_mean_s"] for r in doc["rows"]}["rfc6298"] == pytest.approx(
        1.0, abs=0.01
    )


def test_several_captures_read_in_parallel_equal_reading_each_alone(shared):
    paths = sorted((shared / "captures").glob("*.pcap*"))[:6]
    together = rttlab.read_captures(paths, threads=2)
    for path, (samples, conns) in zip(paths, together):
        alone_samples, alone_conns = rttlab.read_capture(path)
        pd.testing.assert_frame_equal(samples, alone_samples)
        pd.testing.assert_frame_equal(conns, alone_conns)


def test_flows_and_samples_take_several_files(write):
    a, b = write("a.pcap", pcap(transfer())), write("b.pcap", pcap(transfer()[:3]))
    out = run("flows", a, b, "--json")
    assert out.returncode == 0, out.stderr
    docs = json.loads(out.stdout)
    assert [d["capture"] for d in docs] == [str(a), str(b)]
    out = run("samples", a, b, "--method", "syn")
    rows = out.stdout.strip().splitlines()
    assert rows[0].startswith("capture,conn,")
    assert {r.split(",")[0] for r in rows[1:]} == {str(a), str(b)}


def independent_ts_pairs(path: Path) -> set[tuple[int, int]]:
    """TS-echo samples computed here from tshark's decoded fields, independently of the Rust
    matcher: per connection and direction, the first packet carrying each TSval (counting only
    TSvals newer than any seen, RFC 7323 serial order) is matched with the first packet of the
    other direction whose TSecr echoes it; an echo older than one already seen in that direction
    (a reordered ACK) gives no sample, as in pping; waits over 30 s are dropped. Returns
    (echoing frame, echoed frame) pairs."""
    fields = [
        "frame.number",
        "frame.time_relative",
        "tcp.stream",
        "ip.src",
        "ipv6.src",
        "tcp.srcport",
        "tcp.options.timestamp.tsval",
        "tcp.options.timestamp.tsecr",
    ]
    out = subprocess.run(
        [
            "tshark",
            "-r",
            str(path),
            "-Y",
            "tcp.options.timestamp.tsval",
            "-T",
            "fields",
            *[a for f in fields for a in ("-e", f)],
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    newer = lambda a, b: a != b and ((a - b) & 0xFFFFFFFF) < 0x80000000  # noqa: E731
    first: dict = {}
    newest: dict = {}
    newest_echo: dict = {}
    ends: dict = {}
    echoed: set = set()
    pairs: set[tuple[int, int]] = set()
    for line in out.splitlines():
        f = line.split("\t")
        frame, t, stream, src = int(f[0]), float(f[1]), f[2], (f[3] or f[4]) + ":" + f[5]
        tsval, tsecr = int(f[6].split(",")[0]), int(f[7].split(",")[0] or 0)
        sides = ends.setdefault(stream, [])
        if src not in sides:
            sides.append(src)
        key = (stream, src)
        if key not in newest or newer(tsval, newest[key]):
            first.setdefault(key, {}).setdefault(tsval, (frame, t))
            newest[key] = tsval
        other = next((s for s in sides if s != src), None)
        if not tsecr or other is None:
            continue
        if key in newest_echo and newer(newest_echo[key], tsecr):
            continue  # a reordered ACK echoing an older TSval
        newest_echo[key] = tsecr
        ref = first.get((stream, other), {}).get(tsecr)
        if ref and (stream, other, tsecr) not in echoed:
            echoed.add((stream, other, tsecr))
            if t - ref[1] <= 30:
                pairs.add((frame, ref[0]))
    return pairs


def test_ts_echo_samples_match_an_independent_pairing_on_every_real_capture(shared):
    if shutil.which("tshark") is None:
        assert not os.environ.get("CI"), (
            "tshark is missing in CI: `make test-deps` failed to install it"
        )
        pytest.skip("tshark is not installed (make test-deps installs it from Debian)")
    total = 0
    for path in sorted((shared / "captures").glob("*.pcap*")):
        samples, _ = rttlab.read_capture(path)
        ts = samples[samples["method"] == "ts"]
        ours = set(zip(ts["frame"].tolist(), ts["ref_frame"].tolist()))
        theirs = independent_ts_pairs(path)
        assert ours == theirs, (
            f"{path.name}: ours only {sorted(ours - theirs)[:5]}, reference only {sorted(theirs - ours)[:5]}"
        )
        total += len(ours)
    assert total > 2000  # the development captures hold 2,703 TS-echo samples


# ---- capture edge cases seen from Python and the CLI ----


def modified_pcap(packets: list[tuple[float, bytes]], big_endian: bool = False) -> bytes:
    """The "modified" (Kuznetsov, patched libpcap) format: magic a1b2cd34 and 24-byte records
    (the usual 16 bytes plus ifindex, protocol, pkt_type and padding)."""
    e = ">" if big_endian else "<"
    out = [struct.pack(e + "IHHiIII", 0xA1B2CD34, 2, 4, 0, 0, 65535, 1)]
    for t, frame in packets:
        us = round(t * 1e6)
        out.append(
            struct.pack(
                e + "IIIIiHBx",
                us // 1_000_000,
                us % 1_000_000,
                len(frame),
                len(frame),
                2,
                0x0800,
                0,
            )
            + frame
        )
    return b"".join(out)


def bulk(n: int = 30) -> list[tuple[float, bytes]]:
    """Sender-side capture of n segments, each acknowledged 50 ms later."""
    pkts = [
        (T0, tcp_frame(True, 100, 0, SYN)),
        (T0 + 0.05, tcp_frame(False, 900, 101, SYN | ACK)),
        (T0 + 0.0501, tcp_frame(True, 101, 901, ACK)),
    ]
    for i in range(n):
        t = T0 + 0.1 + i * 0.01
        pkts.append((t, tcp_frame(True, 101 + 1000 * i, 901, ACK | PSH, 1000)))
        pkts.append((t + 0.05 + i * 1e-4, tcp_frame(False, 901, 101 + 1000 * (i + 1), ACK)))
    pkts.sort(key=lambda p: p[0])
    return pkts


@pytest.mark.parametrize("big_endian", [False, True])
def test_a_modified_pcap_is_a_capture_for_every_command(write, big_endian):
    path = write("kuznetsov.pcap", modified_pcap(bulk(), big_endian))
    assert rttlab.capture.capture_format(path) == "pcap"
    samples, conns = read_capture(path)
    plain, _ = read_capture(write("plain.pcap", pcap(bulk())))
    pd.testing.assert_frame_equal(samples, plain)
    out = run("evaluate", path, "-e", "rfc6298", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["input_kind"] == "capture"


def test_a_gzip_compressed_capture_says_so_everywhere(write):
    import gzip

    path = write("t.pcap.gz", gzip.compress(pcap(transfer())))
    with pytest.raises(rttlab.InputError, match="gzip-compressed; decompress it first"):
        read_capture(path)
    for cmd in ("flows", "samples", "evaluate"):
        out = run(cmd, path)
        assert out.returncode == 2, cmd
        assert f"{path}: gzip-compressed; decompress it first" in out.stderr, out.stderr
        assert len(out.stderr.strip().splitlines()) == 1


def test_flows_json_writes_integer_fields_as_integers_and_missing_ones_as_null(write):
    path = write("t.pcap", pcap(transfer()))
    (flow,) = json.loads(run("flows", path, "--json").stdout)["flows"]
    # The transfer's SYNs carry no MSS option: null, not NaN; TTL and hops are integers.
    assert flow["mss_fwd"] is None and flow["ttl_fwd"] == 64 and flow["hops_rev"] == 0
    assert isinstance(flow["ttl_rev"], int) and isinstance(flow["packets_fwd"], int)
    assert '"ttl_fwd": 64,' in run("flows", path, "--json").stdout


def test_a_retransmitted_syn_ack_is_resolved_by_the_ts_echo_or_marked_ambiguous(write):
    # Server-side capture: the SYN/ACK is sent twice; the ACK echoes the first one's TSval.
    pkts = [
        (T0, tcp_frame(True, 100, 0, SYN, ts=(10, 0))),
        (T0 + 0.0001, tcp_frame(False, 900, 101, SYN | ACK, ts=(5000, 10))),
        (T0 + 0.4026, tcp_frame(False, 900, 101, SYN | ACK, ts=(5402, 10))),
        (T0 + 0.9864, tcp_frame(True, 101, 901, ACK, ts=(996, 5000))),
    ]
    _, conns = read_capture(write("hs.pcap", pcap(pkts)))
    assert conns["handshake_rtt"].iloc[0] == pytest.approx(0.9864)
    assert not conns["handshake_ambiguous"].iloc[0]
    no_ts = [
        (t, tcp_frame(c2s, seq, ack, fl))
        for (t, _), (c2s, seq, ack, fl) in zip(
            pkts,
            [
                (True, 100, 0, SYN),
                (False, 900, 101, SYN | ACK),
                (False, 900, 101, SYN | ACK),
                (True, 101, 901, ACK),
            ],
        )
    ]
    path = write("hs-nots.pcap", pcap(no_ts))
    _, conns = read_capture(path)
    assert conns["handshake_ambiguous"].iloc[0] and pd.isna(conns["handshake_rtt"].iloc[0])
    (flow,) = json.loads(run("flows", path, "--json").stdout)["flows"]
    assert flow["handshake_ambiguous"] is True and flow["handshake_rtt"] is None
    assert "amb." in run("flows", path).stdout


def test_ts_echoes_spanning_an_application_pause_never_enter_the_path_series(write):
    # Receiver-side capture: a push, the client's ACK, then 24 s of server silence.
    pkts = [
        (T0, tcp_frame(True, 1, 0, SYN, ts=(1, 0))),
        (T0 + 0.08, tcp_frame(False, 100, 2, SYN | ACK, ts=(500, 1))),
        (T0 + 0.0801, tcp_frame(True, 2, 101, ACK, ts=(2, 500))),
        (T0 + 0.16, tcp_frame(False, 101, 2, ACK | PSH, 100, ts=(580, 2))),
        (T0 + 0.1602, tcp_frame(True, 2, 201, ACK, ts=(3, 580))),
        (T0 + 24.16, tcp_frame(False, 201, 2, ACK | PSH, 100, ts=(24580, 3))),
        (T0 + 24.1602, tcp_frame(True, 2, 301, ACK, ts=(24003, 24580))),
    ]
    samples, conns = read_capture(write("pause.pcap", pcap(pkts)))
    idle = samples[samples["idle_echo"]]
    assert len(idle) == 2 and idle["rtt"].max() == pytest.approx(23.9998)
    assert samples.attrs["counters"]["idle_echoes"] == 2 and conns["ts_excluded"].iloc[0] == 2
    path = rttlab.capture.path_samples(samples, conns)
    assert len(path) > 0 and path["rtt"].max() < 1.0


def test_seq_start_after_a_partial_ack_is_the_timed_segments_start(write):
    pkts = [
        (T0, tcp_frame(True, 1, 1, ACK, 3000)),
        (T0 + 0.05, tcp_frame(False, 1, 1001, ACK)),
        (T0 + 0.07, tcp_frame(False, 1, 3001, ACK)),
    ]
    samples, _ = read_capture(write("partial.pcap", pcap(pkts)))
    assert list(samples[["seq_start", "seq_end"]].itertuples(index=False, name=None)) == [(1, 3001)]


def test_the_capture_reader_streams_batches_equal_to_one_read(write):
    path = write(
        "b.pcap", pcap(bulk(2000))
    )  # ~350 kB: the core checks for a full batch every 64 kB
    whole, conns = read_capture(path)
    reader = rttlab.capture.CaptureReader(path, batch_rows=7)
    batches = list(reader.batches())
    assert len(batches) > 3 and all(len(b) >= 7 for b in batches[:-1])
    pd.testing.assert_frame_equal(pd.concat(batches, ignore_index=True), whole, check_like=False)
    streamed = reader.connections()
    pd.testing.assert_frame_equal(streamed, conns)
    with pytest.raises(ValueError, match="batch_rows"):
        rttlab.capture.CaptureReader(path, batch_rows=0)


def test_samples_write_json_lines_and_empty_selections_stay_valid_files(write, tmp_path):
    path = write("b.pcap", pcap(bulk(20)))
    csv, jsonl = tmp_path / "s.csv", tmp_path / "s.jsonl"
    assert run("samples", path, "-o", csv).returncode == 0
    out = run("samples", path, "-o", jsonl)
    assert out.returncode == 0, out.stderr
    a, b = pd.read_csv(csv), pd.read_json(jsonl, lines=True)
    assert len(a) == len(b) > 20 and list(a.columns) == list(b.columns)
    assert (a["rtt"] - b["rtt"]).abs().max() < 1e-9
    empty = tmp_path / "none.parquet"
    assert run("samples", path, "--method", "ts", "-o", empty).returncode == 0  # no TS in bulk()
    assert len(pd.read_parquet(empty)) == 0 and "rtt" in pd.read_parquet(empty).columns
    header_only = run("samples", path, "--method", "ts")
    assert (
        header_only.stdout.strip().startswith("conn,direction,time,rtt")
        and len(header_only.stdout.strip().splitlines()) == 1
    )


def test_the_flows_table_of_a_huge_capture_is_truncated_with_a_note(write):
    pkts = [
        (
            T0 + i * 1e-3,
            tcp_frame(True, 1, 0, SYN)[:34]
            + struct.pack(">HH", 10000 + i, 80)
            + tcp_frame(True, 1, 0, SYN)[38:],
        )
        for i in range(250)
    ]
    path = write("many.pcap", pcap(pkts))
    out = run("flows", path)
    assert out.returncode == 0, out.stderr
    assert (
        "250 TCP connections" in out.stdout
        and "showing the 200 largest of 250 connections" in out.stdout
    )
    doc = json.loads(run("flows", path, "--json").stdout)
    assert len(doc["flows"]) == 250 and doc["flows"][0]["src"] == "10.0.0.1:10000"


def many_transfers(n: int) -> list[tuple[float, bytes]]:
    """`transfer()` on n client ports, interleaved (more frames than the reading thread sends
    at once)."""
    packets = []
    for k in range(n):
        for t, frame in transfer():
            frame = bytearray(frame)
            frame[34:36] = (
                struct.pack(">H", 1024 + k)
                if frame[23] == 6 and frame[26:30] == CLIENT
                else frame[34:36]
            )
            frame[36:38] = struct.pack(">H", 1024 + k) if frame[26:30] == SERVER else frame[36:38]
            packets.append((t + k * 1e-4, bytes(frame)))
    return sorted(packets, key=lambda p: p[0])


def on_port(
    packets: list[tuple[float, bytes]], port: int, dt: float = 0.0
) -> list[tuple[float, bytes]]:
    """The same packets with the client's port `port` (a connection of its own), `dt` later."""
    out = []
    for t, frame in packets:
        frame = bytearray(frame)
        at = 34 if frame[26:30] == CLIENT else 36
        frame[at : at + 2] = struct.pack(">H", port)
        out.append((t + dt, bytes(frame)))
    return out


def varied() -> list[tuple[float, bytes]]:
    """One small capture with something of every column: handshakes with timestamps, SYN/ACK
    retransmissions with and without a TS echo to resolve them, Karn-ambiguous and SACK-timed
    data, duplicate ACKs, an idle echo, a partial ACK, a connection with no handshake (unknown
    MSS, TTL-based hops, handshake RTT) — each on a port of its own, interleaved in time."""
    karn = [
        (T0, tcp_frame(True, 1, 1, ACK, 500)),
        (T0 + 0.2, tcp_frame(True, 1, 1, ACK, 500)),
        (T0 + 0.25, tcp_frame(False, 1, 501, ACK)),
    ]
    syn_ack_twice = [
        (T0, tcp_frame(True, 100, 0, SYN, ts=(10, 0))),
        (T0 + 0.0001, tcp_frame(False, 900, 101, SYN | ACK, ts=(5000, 10))),
        (T0 + 0.4026, tcp_frame(False, 900, 101, SYN | ACK, ts=(5402, 10))),
        (T0 + 0.9864, tcp_frame(True, 101, 901, ACK, ts=(996, 5000))),
    ]
    no_ts = [
        (T0, tcp_frame(True, 100, 0, SYN)),
        (T0 + 0.0001, tcp_frame(False, 900, 101, SYN | ACK)),
        (T0 + 0.4026, tcp_frame(False, 900, 101, SYN | ACK)),
        (T0 + 0.9864, tcp_frame(True, 101, 901, ACK)),
    ]
    pause = [
        (T0, tcp_frame(True, 1, 0, SYN, ts=(1, 0))),
        (T0 + 0.08, tcp_frame(False, 100, 2, SYN | ACK, ts=(500, 1))),
        (T0 + 0.0801, tcp_frame(True, 2, 101, ACK, ts=(2, 500))),
        (T0 + 0.16, tcp_frame(False, 101, 2, ACK | PSH, 100, ts=(580, 2))),
        (T0 + 0.1602, tcp_frame(True, 2, 201, ACK, ts=(3, 580))),
        (T0 + 4.16, tcp_frame(False, 201, 2, ACK | PSH, 100, ts=(4580, 3))),
        (T0 + 4.1602, tcp_frame(True, 2, 301, ACK, ts=(4003, 4580))),
    ]
    partial = [
        (T0, tcp_frame(True, 1, 1, ACK, 3000)),
        (T0 + 0.05, tcp_frame(False, 1, 1001, ACK)),
        (T0 + 0.07, tcp_frame(False, 1, 3001, ACK)),
    ]
    # A lost segment: later ones SACKed (timed by their SACK), three duplicate ACKs, the resend.
    sack = [
        (T0, tcp_frame(True, 100, 0, SYN)),
        (T0 + 0.03, tcp_frame(False, 900, 101, SYN | ACK)),
        (T0 + 0.0301, tcp_frame(True, 101, 901, ACK)),
    ]
    for i in range(5):
        sack.append((T0 + 0.04 + i * 0.001, tcp_frame(True, 101 + 1000 * i, 901, ACK | PSH, 1000)))
    for i in range(1, 5):
        sack.append(
            (T0 + 0.07 + i * 0.001, tcp_frame(False, 901, 101, ACK, sack=[(1101, 1101 + 1000 * i)]))
        )
    sack += [
        (T0 + 0.08, tcp_frame(True, 101, 901, ACK | PSH, 1000)),
        (T0 + 0.11, tcp_frame(False, 901, 5101, ACK)),
    ]
    packets = [
        *many_transfers(40),
        *on_port(karn, 3001, 0.01),
        *on_port(syn_ack_twice, 3002, 0.02),
        *on_port(no_ts, 3003, 0.03),
        *on_port(pause, 3004, 0.04),
        *on_port(partial, 3005, 0.05),
        *on_port(sack, 3006, 0.06),
    ]
    return sorted(packets, key=lambda p: p[0])


def test_samples_csv_and_parquet_are_what_pandas_writes_from_the_dataframe(write, tmp_path):
    # The command line formats CSV and builds Arrow batches in Rust (no pandas), Python frames the
    # Arrow tables the core hands over: both come from one column declaration
    # (src/capture/tables.rs), and the result must be exactly what pandas writes from
    # read_capture's DataFrame.
    cap = write("varied.pcap", pcap(varied()))
    frame, conns = read_capture(cap, include_ambiguous=True)
    assert (
        frame["ambiguous"].any()
        and frame["idle_echo"].any()
        and set(frame["method"]) == {"seq", "ts", "syn"}
    )
    assert (
        conns["mss_fwd"].isna().any() and conns["handshake_rtt"].isna().any() and len(conns) == 46
    )
    out = run("samples", cap, "--include-ambiguous")
    assert out.returncode == 0, out.stderr
    assert out.stdout == frame.to_csv(index=False, float_format="%.9f")
    dest = tmp_path / "varied.parquet"
    assert run("samples", cap, "--include-ambiguous", "-o", dest).returncode == 0
    got = pd.read_parquet(dest)
    # The categories come back in the order their values first appear in the file (the
    # parquet crate's dictionary pages; docs/capture.md): compare them as the values.
    for name in ("direction", "method"):
        assert isinstance(got[name].dtype, pd.CategoricalDtype)
        got[name], frame[name] = got[name].astype(str), frame[name].astype(str)
    pd.testing.assert_frame_equal(got, frame, check_like=False)


def test_the_tables_cross_from_the_core_as_arrow_with_the_declared_columns(write):
    import pyarrow as pa

    raw = rttlab.capture.analyze(write("varied.pcap", pcap(varied())), include_ambiguous=True)
    assert all(isinstance(raw[k], pa.Table) for k in ("samples", "connections", "retransmissions"))
    assert raw["samples"].schema.equals(pa.schema(_core.sample_schema()))
    assert raw["connections"].column_names == [name for name, *_ in _core.connection_columns()]
    assert (
        len(raw["retransmissions"]) > 0
        and raw["retransmissions"].schema.field("evidence").type.value_type == pa.string()
    )
    capture = read_capture(
        write("v.pcap", pcap(varied())), include_ambiguous=True, retransmissions=True
    )
    samples, conns, rtx = capture
    assert samples.dtypes.astype(str).tolist() == [
        "int64",
        "category",
        "float64",
        "float64",
        "category",
        "bool",
        "int64",
        "int64",
        "int64",
        "int64",
        "bool",
    ]
    assert list(samples["direction"].cat.categories) == ["fwd", "rev"] and list(
        samples["method"].cat.categories
    ) == ["seq", "ts", "syn"]
    assert (
        str(conns["conn"].dtype) == "int64"
        and str(conns["packets_fwd"].dtype) == "uint64"
        and str(conns["mss_fwd"].dtype) == "Int64"
    )
    assert str(conns["handshake_rtt"].dtype) == "float64" and conns["src"].map(type).eq(str).all()
    assert list(rtx["evidence"].cat.categories) == list(
        rttlab.capture.EVIDENCE
    ) and "unacked" in set(rtx["evidence"])
    assert rtx["sent"].dtype == "float64" and rtx["needed"].dtype == "bool"


def test_one_file_on_several_threads_gives_the_output_of_one(shared, write, tmp_path):
    big = write("many.pcap", pcap(many_transfers(2000)))
    # Cut mid-record: the damage warning and the samples before it, alike on every thread count.
    cut = write("cut.pcap", big.read_bytes()[:-20])
    # Every shared capture is compared inside the core (src/capture/tests.rs); here the command
    # line end to end on a few (2 threads: the read/decode + track pipeline; 3 and 4: sharded),
    # and a pipe (read, not mapped).
    for cap in [big, cut, *sorted((shared / "captures").glob("*.pcap*"))[:3]]:
        for args in (
            ["samples", cap],
            ["samples", cap, "-m", "ts", "--flow", "0"],
            ["flows", cap, "--json"],
        ):
            one = run(*args, "--threads", "1")
            assert one.returncode == 0, one.stderr
            assert ("damaged at packet" in one.stderr) == (cap == cut)
            for n in ("2", "3", "4"):
                more = run(*args, "--threads", n)
                assert (one.stdout, one.stderr) == (more.stdout, more.stderr), (cap.name, args, n)
        # Parquet is written batch by batch: the same batches make the same file.
        files = [tmp_path / f"{cap.name}.{n}.parquet" for n in (1, 2)]
        for n, dest in zip((1, 2), files):
            assert run("samples", cap, "-o", dest, "--threads", str(n)).returncode == 0
        assert files[0].read_bytes() == files[1].read_bytes(), cap.name
    piped = subprocess.run(
        f"cat {big} | {sys.executable} -m rttlab.cli.main samples /dev/stdin --threads 2",
        shell=True,
        capture_output=True,
        text=True,
    )
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout == run("samples", big, "--threads", "1").stdout
    reader = CaptureReader(big, batch_rows=1000, threads=2)
    sizes = [len(b) for b in reader.batches()]
    assert sizes[:-1] == [1000] * (len(sizes) - 1) and 0 < sizes[-1] <= 1000
    with pytest.raises(ValueError, match="threads must be a positive integer"):
        CaptureReader(big, threads=0)
    flows = json.loads(run("flows", big, "--json").stdout)["flows"]
    assert len(flows) == 2000 and all(f["handshake_rtt"] == pytest.approx(0.1005) for f in flows)
    assert run("samples", big, "--threads", "0").returncode == 2


def test_the_default_is_two_threads_for_a_large_regular_file_with_two_cores_to_spare(
    tmp_path, monkeypatch
):
    from rttlab.cli import capture as cli

    small, large = tmp_path / "small.pcap", tmp_path / "large.pcap"
    small.write_bytes(b"\0" * 1000)
    with large.open("wb") as f:
        f.truncate(cli.PIPELINE_BYTES)  # sparse: only its size matters here
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    monkeypatch.setattr(cli, "_cores", lambda: 2)
    assert [cli._threads(None, p) for p in (large, small, fifo, tmp_path / "missing")] == [
        2,
        1,
        1,
        1,
    ]
    # Two files read at once on two cores: one thread each; --threads always wins.
    assert (
        cli._threads(None, large, at_once=2),
        cli._threads(3, small),
        cli._threads(1, large),
    ) == (1, 3, 1)
    monkeypatch.setattr(cli, "_cores", lambda: 1)
    assert cli._threads(None, large) == 1
    # `taskset -c 0` leaves one core, whatever the machine has.
    if shutil.which("taskset"):
        one = subprocess.run(
            [
                "taskset",
                "-c",
                "0",
                sys.executable,
                "-c",
                "from rttlab.cli.capture import _cores; print(_cores())",
            ],
            capture_output=True,
            text=True,
        )
        assert one.stdout.strip() == "1", one.stderr
