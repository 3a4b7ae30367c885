"""The canonical form's versions: form 2 (one rule for every key) keys new runs; form 1 stays
byte for byte what stores written before were keyed by, and such a store resumes with nothing to run."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import pytest
import rttlab
from rttlab import _core
from rttlab.sim import versions

ROOT = Path(__file__).resolve().parent.parent
N1 = ROOT / "examples" / "scenarios" / "dumbbell-n1-droptail.toml"


def examples() -> list[Path]:
    """Every example file that is a scenario (the live and other directories included)."""
    out = []
    for p in sorted((ROOT / "examples").rglob("*.toml")):
        try:
            _core.resolve_scenario(p.read_text(), form=1)
        except _core.ScenarioError:
            continue
        out.append(p)
    return out


#: The examples that existed when form 1 was frozen: the pin below is over exactly these (an
#: example added later has no form-1 store to be found by, and must not move the pin).
FORM1_EXAMPLES = [
    "internet-cc/dumbbell-n10-bbr.toml",
    "internet-cc/dumbbell-n10-cubic.toml",
    "live/outage.toml",
    "live/spike.toml",
    *(
        f"scenarios/dumbbell-n{n}-{q}.toml"
        for n in (1, 10, 50)
        for q in ("droptail", "red-ecn", "red")
    ),
    "scenarios/parking-lot.toml",
    "spectcp/lossy-link.toml",
    "spurious/spikes.toml",
]


def test_form_1_of_every_example_is_byte_for_byte_what_stores_were_keyed_by():
    # Pinned from the code before form 2 (`_core.resolve_scenario(text)` of every example, the
    # same digest): form 1 must never change, or runs stored under it are no longer found.
    h = hashlib.sha256()
    files = sorted(ROOT / "examples" / name for name in FORM1_EXAMPLES)
    assert set(files) <= set(examples())
    for p in files:
        h.update(
            p.relative_to(ROOT).as_posix().encode()
            + b"\0"
            + _core.resolve_scenario(p.read_text(), form=1).encode()
            + b"\0"
        )
    assert (len(files), h.hexdigest()) == (
        16,
        "4269cf8ddad24a65e118d8abcad765f6326c4cb63325b6653e97fe4bcaf7eede",
    )


@pytest.mark.parametrize(
    "path", examples(), ids=lambda p: p.relative_to(ROOT / "examples").as_posix()
)
def test_form_2_reads_back_to_itself_and_runs_as_form_1_does(path):
    text = path.read_text()
    v1 = _core.resolve_scenario(text, ["simulation.duration=1s"], form=1)
    v2 = _core.resolve_scenario(text, ["simulation.duration=1s"], form=2)
    assert _core.resolve_scenario(v2, form=2) == v2
    assert _core.resolve_scenario(v1, form=2) == v2, "form 2 of the form-1 text is the same text"
    a, b = (
        rttlab.simulate(rttlab.Scenario.from_toml(v1)),
        rttlab.simulate(rttlab.Scenario.from_toml(v2)),
    )
    assert a.event_hash == b.event_hash and a.tables["flows"].equals(b.tables["flows"])


@pytest.mark.parametrize("form", [1, 2])
def test_the_table_the_core_hands_over_is_what_tomllib_reads_from_the_text(form):
    # The hash is computed from this table; JSON text compares types too (1 vs 1.0 vs true).
    import json
    import tomllib

    for p in examples():
        text, table = _core.resolve_scenario_table(p.read_text(), form=form)
        assert json.dumps(table, sort_keys=True) == json.dumps(
            tomllib.loads(text), sort_keys=True
        ), p


def test_an_unknown_form_is_refused():
    with pytest.raises(ValueError, match="canonical form 3 is not 1 or 2"):
        _core.resolve_scenario(N1.read_text(), form=3)


def test_an_alias_and_parameters_at_their_defaults_are_one_run_under_form_2_but_were_two_under_form_1():
    s = rttlab.Scenario.load(N1).with_({"tcp.sack": True})
    alias = s.with_({"tcp.recovery": "rfc6675", "tcp.cc": "new_reno"})
    named = s.with_({"tcp.recovery": "sack", "tcp.cc": {"name": "newreno"}})
    assert alias.hash == named.hash and alias.form1_hash != named.form1_hash
    vegas = rttlab.Scenario.load(N1).with_({"tcp.cc": "vegas", "tcp.rto": {"estimator": "linux"}})
    spelled = vegas.with_(
        {
            "tcp.cc": {"name": "vegas", "alpha": 2, "beta": 4, "gamma": 1},
            "tcp.rto": {"estimator": "linux", "policy": "none"},
        }
    )
    assert _core.resolve_scenario(vegas.to_toml()) == _core.resolve_scenario(spelled.to_toml())
    assert vegas.hash == spelled.hash
    assert s.hash != s.form1_hash, "the form is part of the key"


def test_a_choice_alias_and_a_quantity_in_two_spellings_are_one_run_under_form_2_but_were_two_under_form_1():
    s = rttlab.Scenario.load(N1)
    pairs = [
        (
            {
                "flows": [
                    {
                        "count": 1,
                        "app": {"kind": "onoff", "off": "1s", "burst": "10KB", "dist": "exp"},
                    }
                ]
            },
            {
                "flows": [
                    {
                        "count": 1,
                        "app": {
                            "kind": "onoff",
                            "off": "1s",
                            "burst": "10000B",
                            "dist": "exponential",
                        },
                    }
                ]
            },
        ),
        (
            {"topology.bottleneck.queue": {"kind": "red", "limit": 100, "mean_packet": "1.5KB"}},
            {"topology.bottleneck.queue": {"kind": "red", "limit": "100p", "mean_packet": "1500B"}},
        ),
        (
            {"topology.bottleneck.queue.limit": "64KiB"},
            {"topology.bottleneck.queue.limit": "65536B"},
        ),
    ]
    for given, spelled in pairs:
        a, b = s.with_(given), s.with_(spelled)
        assert a.hash == b.hash and a.form1_hash != b.form1_hash, given
        assert _core.resolve_scenario(b.to_toml(), form=2) == _core.resolve_scenario(
            _core.resolve_scenario(a.to_toml(), form=2), form=2
        )
    # The one spelling is what the text says, and it runs as the spelling given does.
    a = s.with_({"simulation.duration": "2s", **pairs[0][0]})
    text = _core.resolve_scenario(a.to_toml(), form=2)
    assert 'dist = "exponential"' in text and 'burst = "10000B"' in text
    x, y = rttlab.simulate(a), rttlab.simulate(rttlab.Scenario.from_toml(text))
    assert x.event_hash == y.event_hash


def test_off_and_absent_are_one_run_under_form_2_and_a_groups_off_beside_a_tcp_detector_stays_written():
    s = rttlab.Scenario.load(N1).with_({"tcp.sack": True, "simulation.duration": "2s"})
    off = s.with_({"tcp.spurious_detection": "off", "tcp.sample_clock": "0s"})
    assert off.hash == s.hash and off.form1_hash != s.form1_hash
    frto = s.with_(
        {
            "tcp.spurious_detection": "frto",
            "flows": [{"count": 1}, {"count": 1, "tcp": {"spurious_detection": "off"}}],
        }
    )
    text = _core.resolve_scenario(frto.to_toml(), form=2)
    assert (
        text.count('spurious_detection = "off"') == 1
        and _core.resolve_scenario(text, form=2) == text
    )
    x, y = rttlab.simulate(frto), rttlab.simulate(rttlab.Scenario.from_toml(text))
    assert x.event_hash == y.event_hash


def test_a_groups_stack_absent_or_given_as_kernel_is_one_run_under_form_2():
    s = rttlab.Scenario.load(N1)
    kernel = s.with_({"flows.0.stack": "kernel"})
    assert kernel.hash == s.hash and kernel.form1_hash != s.form1_hash
    assert 'stack = "kernel"' in _core.resolve_scenario(s.to_toml(), form=2)


def test_a_store_written_under_form_1_resumes_under_form_2_with_nothing_to_run_and_is_read(
    tmp_path, monkeypatch
):
    # A store as rttlab wrote it before form 2 (the hash read with versions.SCENARIO_SCHEMA = 1),
    # under another sweep's name; then the reproduction's own sweep under form 2: nothing runs,
    # its memberships point at the stored (form-1) runs, and its comparison reads them.
    from distributed import Client, LocalCluster
    from rttlab.experiments.reproduce import Reproduction
    from rttlab.experiments.store import Store
    from rttlab.experiments.sweep import as_stored, execute

    rep = Reproduction.load("mathis", quick=True)
    with (
        LocalCluster(
            n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
        ) as lc,
        Client(lc) as client,
    ):
        monkeypatch.setattr(versions, "SCENARIO_SCHEMA", 1)
        earlier = dataclasses.replace(rep.sweep(), name="earlier")
        with Store(tmp_path / "r.duckdb") as store:
            first = execute(earlier, store, client)
        assert (first.ok, first.skipped) == (6, 0)
        monkeypatch.setattr(versions, "SCENARIO_SCHEMA", 2)
        now = rep.sweep()
        with Store(tmp_path / "r.duckdb") as store:
            assert store.stored_hashes(scenario_schema=1) == {r.hash for r in earlier.runs}
            assert not {r.hash for r in now.runs} & store.stored_hashes(), (
                "form-2 keys differ from form-1 keys"
            )
            assert {r.hash for r in as_stored(now, store).runs} == {r.hash for r in earlier.runs}
            again = execute(now, store, client)
            assert (again.total, again.skipped, again.ok, again.failed) == (6, 6, 0, 0)
            assert len(store.runs(now.name)) == 6, "memberships recorded under the stored keys"
            assert rep.planned(store, now) == [r.hash for r in as_stored(now, store).runs]
            runs, flows = rep.stored(store, now)  # what a reproduction's tables and figures read
            assert len(runs) == 6 and len(flows) == 6
            rows = rep.compare(runs, flows, store.series)
    assert sorted(r["n"] for r in rows) == [3, 3]


def test_the_form_1_key_is_not_computed_when_the_store_holds_no_form_1_run(tmp_path, monkeypatch):
    from rttlab.experiments.store import Store
    from rttlab.experiments.sweep import Sweep, as_stored
    from rttlab.sim.scenario import Scenario

    s = Sweep.from_dict({"sweep": {"name": "fresh", "scenario": str(N1), "seeds": [1, 2]}})

    def refuse(self):
        raise AssertionError("form-1 key computed")

    monkeypatch.setattr(Scenario, "form1_hash", property(refuse))
    with Store(tmp_path / "r.duckdb") as store:
        assert as_stored(s, store) is s


def test_form_2_of_every_quick_reproductions_scenario_reads_back_to_itself():
    from rttlab.experiments.reproduce import Reproduction, ReproductionError, available

    texts = set()
    for name in available():
        try:
            sweep = Reproduction.load(name, quick=True).sweep()
        except ReproductionError:  # a reproduction of measured series, with no scenario to run
            continue
        texts |= {r.scenario.to_toml() for r in sweep.runs if hasattr(r.scenario, "to_toml")}
    assert len(texts) > 100
    for text in texts:
        v2 = _core.resolve_scenario(text, form=2)
        assert _core.resolve_scenario(v2, form=2) == v2, text
