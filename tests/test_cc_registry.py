"""The congestion-control and RTO-policy registries as Python sees them (for `rttlab components`)."""

from rttlab import _core


def test_every_congestion_control_is_listed_with_its_declared_parameters():
    ccs = {c["name"]: c for c in _core.congestion_controls()}
    assert list(ccs) == ["reno", "newreno", "westwood+", "vegas", "veno", "spectcp"]
    vegas = {p["name"]: p for p in ccs["vegas"]["params"]}
    assert (vegas["alpha"]["default"], vegas["beta"]["default"], vegas["gamma"]["default"]) == ("2", "4", "1")
    assert ccs["veno"]["params"][0]["name"] == "beta"
    assert [p["name"] for p in ccs["spectcp"]["params"]] == ["p", "manager"] and ccs["spectcp"]["recovery"] == "reno"
    assert ccs["reno"]["recovery"] == "reno" and ccs["newreno"]["recovery"] == "newreno"
    assert "westwood" in ccs["westwood+"]["aliases"]


def test_rto_policies_list_ca_rto_with_only_its_own_parameters():
    policies = {p["name"]: p for p in _core.rto_policies()}
    assert list(policies) == ["none", "ca-rto"]
    # The estimator's timer parameters (min_rto, …) are not the policy's; its named ambiguities are.
    assert [p["name"] for p in policies["ca-rto"]["params"]] == ["scale", "max_cwnd", "seed", "draw", "backoff"]
