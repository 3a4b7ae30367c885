"""ns-3 flows' sender state at every ACK they receive — cwnd, ssthresh, the congestion state,
ns-3's smoothed and last RTT, and TcpVegas'/TcpVeno's own BaseRTT, minRTT, sample count, Veno's
diff and inc — for comparing a congestion control with rttlab's packet by packet
(docs/ns3-comparison.md, "Vegas and Veno traced"; ``simulate(..., ack_trace=[0])`` in
:mod:`.dumbbell`). C++ in ``ack_trace.cc``, compiled by cppyy on first use.

Each row is the state *before* the ACK of its row is processed (ns-3's socket ``Rx`` trace fires
before TCP runs): the state an ACK left is the next row's. Times are ns; -1 where a field does not
apply or was never set (``Time::Max``)."""

from __future__ import annotations

import ctypes
from importlib import resources
from typing import Any

COLUMNS = (
    "flow",
    "t",
    "ack",
    "cwnd",
    "ssthresh",
    "state",
    "srtt",
    "last_rtt",
    "base_rtt",
    "min_rtt",
    "cnt_rtt",
    "enabled",
    "diff",
    "inc",
)
#: ns-3's TcpSocketState::TcpCongState_t, by value.
STATES = ("open", "disorder", "cwr", "recovery", "loss")

_state: dict[str, Any] = {}


def _compile() -> Any:
    if "gbl" not in _state:
        import cppyy

        cppyy.cppdef(resources.files(__package__).joinpath("ack_trace.cc").read_text())
        _state["gbl"] = cppyy.gbl.rttlab_ack_trace
    return _state["gbl"]


def clear() -> None:
    """Forget the rows recorded so far (before a run)."""
    _compile().Clear()


def attach(app: Any, flow: int, start_s: float) -> None:
    """Trace the socket of ``app`` (a BulkSendApplication starting at ``start_s``) as ``flow``."""
    _compile().Attach(app, int(flow), float(start_s))


def collect():  # -> pandas.DataFrame
    """The rows recorded since :func:`attach` (copies; the C++ vectors may then be reused)."""
    import numpy as np
    import pandas as pd

    b = _compile()
    if str(b.g_error):
        raise RuntimeError(f"ns-3 ACK trace: {b.g_error}")
    out = {}
    for name in COLUMNS:
        vec = getattr(b.g_rows, name)
        n = int(vec.size())
        out[name] = (
            np.ctypeslib.as_array((ctypes.c_int64 * n).from_address(int(b.Data(vec)))).copy()
            if n
            else np.zeros(0, dtype="int64")
        )
    df = pd.DataFrame(out)
    df["state"] = pd.Categorical.from_codes(df["state"], STATES)
    return df


#: ns-3 congestion controls with one departure from Linux undone (``ack_trace.cc``), each with
#: the ns-3 class it derives from.
VARIANTS = {
    "ns3::TcpVegasLinuxRtt": "ns3::TcpVegas",
    "ns3::TcpVenoLinuxRtt": "ns3::TcpVeno",
    "ns3::TcpVenoLinux": "ns3::TcpVeno",
}


def register_variants() -> None:
    """Register :data:`VARIANTS` with ns-3 (``simulate(..., cc_type=...)`` in :mod:`.dumbbell`)."""
    _compile().RegisterVariants()
