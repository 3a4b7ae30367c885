"""``rttlab red-dimension``: SpecTCP's RED/ECN dimensioning models (Bai, Lilja & Atiquzzaman 2009 §5), each quantity with
its equation."""

from __future__ import annotations

import typer

from rttlab.cli.common import fail, parse_duration, print_json


def red_dimension(
    ssthresh: list[float] = typer.Option(
        ..., "--ssthresh", help="SSthresh_i in packets, once per flow."
    ),
    rtt: list[str] = typer.Option(
        ...,
        "--rtt",
        metavar="DURATION",
        help="RTT r_i (e.g. 59ms): once for all flows or once per flow.",
    ),
    bandwidth: str = typer.Option(
        ..., "--bandwidth", help="Bottleneck bandwidth BW_bn, e.g. 1.5Mbps."
    ),
    packet: str = typer.Option("1040B", "--packet", help="Packet size on the wire (queue unit)."),
    min_th: float = typer.Option(5.0, "--min-th", help="RED min_th, packets."),
    omega: float = typer.Option(0.002, "--omega", help="RED EWMA weight ω."),
    max_p: float = typer.Option(0.1, "--max-p", help="RED max_p (p(t) in eq. 5 unless --p)."),
    p: float = typer.Option(
        None, "--p", help="Marking probability p(t) for eq. 5 (default: max_p)."
    ),
    window: list[float] = typer.Option(
        None, "--window", help="W_i(t) for eq. 5, once per flow (default: r_i·μ̄_i + min_th/m)."
    ),
    share: list[str] = typer.Option(
        None, "--share", help="Per-flow share μ̄_i, e.g. 0.75Mbps, once per flow (default: BW_bn/m)."
    ),
    loss_rate: float = typer.Option(
        None, "--loss-rate", help="Poisson congestion-event rate λ (1/s): μ̄_i from eq. 21 instead."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the quantities as JSON."),
    as_csv: bool = typer.Option(
        False, "--csv", help="Print the quantities as CSV (name, value, unit, equation, note)."
    ),
) -> None:
    """Dimension an ECN-capable RED gateway as SpecTCP's §5 does: buffer (eq. 3), max_th (eq. 8), flow bound (eqs. 10, 21)."""
    from rttlab.cli.common import one_format
    from rttlab.papers.bai_spectcp.red_dimension import (
        DimensionError,
        dimension,
        parse_bandwidth,
        parse_bytes,
    )
    from rttlab.units import number

    one_format(as_json, as_csv)
    try:
        rows = dimension(
            ssthresh=ssthresh,
            rtt=[parse_duration(r, "--rtt") for r in rtt],
            bandwidth_bps=parse_bandwidth(bandwidth),
            packet_bytes=parse_bytes(packet),
            min_th=min_th,
            omega=omega,
            max_p=max_p,
            p=p,
            window=window or None,
            share_bps=[parse_bandwidth(s) for s in share] if share else None,
            loss_rate=loss_rate,
        )
    except DimensionError as e:
        fail(str(e))
    if as_json:
        print_json({"schema": "rttlab.red-dimension/1", "quantities": [q.as_dict() for q in rows]})
        return
    if as_csv:
        from rttlab.cli.common import print_csv

        print_csv([q.as_dict() for q in rows])
        return
    from rich.markup import escape

    from rttlab.cli.table import Col, num, show

    cols = [
        Col("quantity"),
        num("value"),
        Col("unit"),
        Col("equation", priority=2),
        Col("note", priority=1, prose=True),
    ]
    show(
        cols,
        [
            [escape(q.name), number(q.value), escape(q.unit), escape(q.equation), escape(q.note)]
            for q in rows
        ],
        title="RED/ECN dimensioning (Bai, Lilja & Atiquzzaman 2009, §5)",
    )


def register(app: typer.Typer) -> None:
    app.command("red-dimension")(red_dimension)
