#!/usr/bin/env python3
"""Trace one congestion control ACK by ACK in rttlab and in ns-3 3.44, side by side.

    python scripts/ns3_ack_trace.py examples/scenarios/dumbbell-n10-droptail.toml --set tcp.cc=vegas \\
        [--variant ns3::TcpVegasLinuxRtt] [--until 0.6] [--out DIR]

Prints, per flow, its start, BaseRTT at the end (rttlab: the smallest RTT sample the flow took;
ns-3: TcpVegas'/TcpVeno's own m_baseRtt) and goodput; then flow 0's first ACKs up to ``--until``
seconds: cwnd (segments) and the RTT each simulator handed the congestion control (rttlab: the
ACK's own sample; ns-3: what TcpSocketBase passes to PktsAcked, its smoothed RTT, beside its last
sample). ``--variant`` runs an ns-3 variant of rttlab.peers.ns3.ack_trace (a departure from Linux
undone); ``--out`` writes both traces as Parquet. docs/ns3-comparison.md, "Vegas and Veno traced".
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
import rttlab
from rttlab.peers.ns3 import dumbbell as ns3
from rttlab.peers.ns3.ack_trace import VARIANTS


def rttlab_acks(result, flow: int) -> pd.DataFrame:
    """rttlab's flow ``flow``: every RTT sample with the cwnd in force after it and the BaseRTT so far."""
    rtt = result.traces["rtt"]
    rtt = rtt[rtt.flow == flow][["time", "sample"]].reset_index(drop=True)
    win = result.traces["window"]
    win = win[win.flow == flow][["time", "cwnd", "ssthresh"]]
    # The window trace logs a change at the instant of the ACK that made it: take the last at or
    # before each sample.
    out = pd.merge_asof(rtt, win, on="time", direction="backward")
    out["base"] = out["sample"].cummin()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenario", type=Path)
    ap.add_argument("--set", action="append", default=[], dest="overrides")
    ap.add_argument(
        "--variant",
        choices=sorted(VARIANTS),
        help="an ns-3 variant with one departure from Linux undone",
    )
    ap.add_argument(
        "--until", type=float, default=0.0, help="print flow 0's ACKs up to this time (s)"
    )
    ap.add_argument("--out", type=Path, help="write rttlab-acks.parquet and ns3-acks.parquet here")
    args = ap.parse_args()
    scenario = rttlab.Scenario.load(args.scenario).with_(args.overrides).with_(ns3.COMPARABLE)
    ours = rttlab.simulate(scenario)
    n = len(ours.flows)
    try:
        theirs = ns3.simulate(scenario, ack_trace=range(n), cc_type=args.variant)
    except ns3.Ns3Unsupported as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    acks = theirs.tables["ack_trace"].to_pandas()
    mss = int(scenario.resolved()["tcp"]["mss"].removesuffix("B"))
    print(f"{args.scenario} {' '.join(args.overrides)} ns-3 {args.variant or 'as mapped'}")
    b = ours.channels.set_index("name").loc[ours.bottleneck]
    tb = theirs.channels.set_index("name").loc[theirs.bottleneck]
    print(
        f"goodput Mb/s {ours.aggregate_goodput_bps / 1e6:.3f} / {theirs.aggregate_goodput_bps / 1e6:.3f}   "
        f"Jain {ours.jain_index:.3f} / {theirs.jain_index:.3f}   drops {b.drops_overflow + b.drops_aqm} / {tb.drops_overflow}"
    )
    rows = []
    for f in range(n):
        mine = rttlab_acks(ours, f)
        their = acks[acks.flow == f]
        base = their.base_rtt[their.base_rtt > 0]
        rows.append(
            {
                "flow": f,
                "first ACK s (rttlab / ns-3)": f"{mine.time.iloc[0]:.4f} / {their.t.iloc[1] / 1e9:.4f}",
                "BaseRTT ms": f"{mine['sample'].min() * 1e3:.1f} / {base.min() / 1e6:.1f}",
                "goodput Mb/s": f"{ours.flows.goodput_bps.iloc[f] / 1e6:.2f} / {theirs.flows.goodput_bps.iloc[f] / 1e6:.2f}",
            }
        )
    print(pd.DataFrame(rows).to_string(index=False))
    if (acks["diff"] >= 0).any():  # TcpVeno: how often its rules could act
        opened = acks.state == "open"
        # In the open state PktsAcked adds the ACK's sample before IncreaseWindow, which needs 3.
        judged = int((acks.cnt_rtt[opened] + 1 > 2).sum())
        entries = random = 0
        for _, x in acks.groupby("flow"):
            st = x.state.to_numpy()
            at = [
                i for i in range(1, len(st) - 1) if st[i + 1] == "recovery" and st[i] != "recovery"
            ]
            entries += len(at)
            # The diff GetSsThresh used: the state left by the ACK before the one entering recovery.
            random += sum(int(x["diff"].iloc[i + 1] < 3) for i in at)
        print(
            f"ns-3 Veno: {judged} of {int(opened.sum())} open-state ACKs had > 2 samples at IncreaseWindow; "
            f"{random} of {entries} fast recoveries judged random (diff < 3)"
        )
    if args.until > 0:
        mine = rttlab_acks(ours, 0)
        mine = mine[mine.time <= args.until]
        their = acks[(acks.flow == 0) & (acks.t <= args.until * 1e9)].copy()
        # Row k is the state before ACK k: the state after it is row k+1's.
        for col in (
            "cwnd",
            "ssthresh",
            "base_rtt",
            "min_rtt",
            "cnt_rtt",
            "srtt",
            "last_rtt",
            "diff",
        ):
            their[col] = their[col].shift(-1)
        print("\nflow 0, rttlab: time s, RTT sample ms, BaseRTT ms, cwnd after (segments)")
        print(
            pd.DataFrame(
                {
                    "t": mine.time.round(4),
                    "rtt": (mine["sample"] * 1e3).round(3),
                    "base": (mine.base * 1e3).round(3),
                    "cwnd": mine.cwnd // mss,
                }
            ).to_string(index=False)
        )
        print(
            "\nflow 0, ns-3: time s, last sample / SRTT (what PktsAcked gets) ms, BaseRTT, round's minRTT ms, samples in round, cwnd after"
        )
        print(
            pd.DataFrame(
                {
                    "t": (their.t / 1e9).round(4),
                    "last": their.last_rtt / 1e6,
                    "srtt": (their.srtt / 1e6).round(3),
                    "base": their.base_rtt / 1e6,
                    "min": their.min_rtt / 1e6,
                    "cnt": their.cnt_rtt,
                    "cwnd": their.cwnd // mss,
                }
            ).to_string(index=False)
        )
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        pd.concat([rttlab_acks(ours, f).assign(flow=f) for f in range(n)]).to_parquet(
            args.out / "rttlab-acks.parquet"
        )
        acks.assign(state=acks.state.astype(str)).to_parquet(args.out / "ns3-acks.parquet")
    return 0


if __name__ == "__main__":
    sys.exit(main())
