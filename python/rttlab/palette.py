"""The one place figures take their colours from: a fixed, colour-blind-safe colour per estimator
and per congestion control, the same in every figure and in the HTML report.

Colours come from Okabe & Ito's palette ("Color Universal Design", 2008; distinguishable under
protanopia, deuteranopia and tritanopia) and, past its seven usable hues, from the darker members
of Paul Tol's "muted" scheme (https://personal.sron.nl/~pault/, also designed for colour-blind
readers) and one dark brown. Okabe–Ito's yellow (#F0E442) is left out: too pale for a thin line
on white. tests/test_figures.py checks the choice: simulated with Machado, Oliveira & Fernandes's
(2009) full-severity protanopia, deuteranopia and tritanopia, every two estimators (and every two
congestion controls) stay at least 15 CIE76 ΔE apart (the least pair now: ≈ 16).

Choices where the sources leave us free (docs/figures.md says the same):

- estimators and congestion controls each get the palette from its start, so ``rfc6298`` and
  ``reno`` share blue: the two families never share a figure's legend;
- a name outside the tables (a new estimator, a peer simulator) gets a colour picked by a stable
  digest of the name (SHA-256, not Python's salted ``hash``) from the extended list, so it is the
  same in every process and every figure;
- measured samples are drawn in :data:`SAMPLE_GREY`, which no estimator or fallback uses.
"""

from __future__ import annotations

import hashlib

#: Okabe–Ito (without yellow) then Tol muted's darker hues: the order names are assigned in.
OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
TOL_MUTED = ("#882255", "#332288", "#44AA99", "#AA4499", "#117733", "#CC6677", "#999933")
#: A dark brown of our own choosing for the tenth estimator: among Tol muted's hues none kept
#: every pair of estimators as far apart under simulated colour blindness (tests/test_figures.py).
DARK_BROWN = "#661100"
EXTENDED = OKABE_ITO + TOL_MUTED + (DARK_BROWN,)

#: Raw RTT samples, beneath every estimator's line; a neutral grey no estimator is given.
SAMPLE_GREY = "#A0A0A0"

#: Estimators (the registry's names, docs/algorithms.md), most compared first.
ESTIMATORS = {
    "rfc6298": "#0072B2",  # blue
    "linux": "#D55E00",  # vermillion
    "eifel": "#009E73",  # bluish green
    "peak-hopper": "#CC79A7",  # reddish purple
    "quic": "#E69F00",  # orange
    "fixed-share": "#56B4E9",  # sky blue
    "ca-rto": "#000000",  # black
    "regression": "#882255",  # wine
    "last": DARK_BROWN,  # dark brown
    "constant": "#332288",  # indigo
    # The eleventh and twelfth are our own: no hue left in Okabe–Ito or Tol muted kept 15 ΔE from
    # every other estimator under the three simulated deficiencies; these two were the best of a
    # search over a 16-step RGB grid (darker than L* 62, so a thin line still shows on white):
    # least pair ≈ 24 ΔE.
    "conformal": "#9900FF",  # violet
    "quantile-experts": "#DD0044",  # crimson
    # The thirteenth, by the same search against the twelve above: ≈ 24 ΔE from the nearest.
    "freebsd": "#9977FF",  # lavender
}

#: Congestion controls (the simulator's names and aliases).
CONGESTION_CONTROLS = {
    "reno": "#0072B2",
    "newreno": "#D55E00",
    "new_reno": "#D55E00",
    "westwood+": "#009E73",
    "westwood": "#009E73",
    "vegas": "#CC79A7",
    "veno": "#E69F00",
    "spectcp": "#56B4E9",
    "spec-tcp": "#56B4E9",
    "spec_tcp": "#56B4E9",
    "smooth": "#000000",
    "smoothtcp": "#000000",
    "cubic": "#882255",  # wine
    "bbr": "#332288",  # indigo
}

#: Simulators beside each other (a reproduction's peer comparison).
SIMULATORS = {"rttlab": "#0072B2", "ns3": "#D55E00", "ns-3": "#D55E00"}

_KNOWN = {**SIMULATORS, **CONGESTION_CONTROLS, **ESTIMATORS}


def base_name(label: str) -> str:
    """The registry name a label starts with (``"linux (hz=250)"`` → ``"linux"``,
    ``"fixed-share[eta=2]"`` → ``"fixed-share"``), else the label itself, lower-cased."""
    text = label.strip().lower()
    if text in _KNOWN:
        return text
    best = max(
        (k for k in _KNOWN if text.startswith(k) and not text[len(k) : len(k) + 1].isalnum()),
        key=len,
        default=None,
    )
    return best or text


def colour(name: str) -> str:
    """The fixed colour (``#RRGGBB``) of an estimator, congestion control or simulator, by its
    name or a label that starts with it; any other name gets a stable colour from the extended
    palette (never :data:`SAMPLE_GREY`)."""
    key = base_name(name)
    if key in _KNOWN:
        return _KNOWN[key]
    digest = hashlib.sha256(key.encode()).digest()
    return EXTENDED[int.from_bytes(digest[:4], "big") % len(EXTENDED)]


def colours(names: list[str]) -> dict[str, str]:
    """``colour`` of each name, as a dict in the given order."""
    return {n: colour(n) for n in names}
