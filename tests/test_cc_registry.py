"""The congestion-control and RTO-policy registries as Python sees them (for `rttlab components`)."""

from rttlab import _core


def family(name: str) -> dict[str, dict]:
    return {c["name"]: c for c in _core.catalogue() if c["family"] == name}


def test_every_congestion_control_is_listed_with_its_declared_parameters():
    ccs = family("cc")
    assert list(ccs)[:5] == ["reno", "newreno", "westwood+", "vegas", "veno"]
    assert "spectcp" in ccs and "smooth" in ccs
    vegas = {p["name"]: p for p in ccs["vegas"]["params"]}
    assert (vegas["alpha"]["default"], vegas["beta"]["default"], vegas["gamma"]["default"]) == (
        "2",
        "4",
        "1",
    )
    assert ccs["veno"]["params"][0]["name"] == "beta"
    assert [p["name"] for p in ccs["spectcp"]["params"]] == [
        "p",
        "manager",
        "timeout_backoff",
    ] and ccs["spectcp"]["defaults"]["recovery"] == "reno"
    assert (
        ccs["reno"]["defaults"]["recovery"] == "reno"
        and ccs["newreno"]["defaults"]["recovery"] == "newreno"
    )
    assert "westwood" in ccs["westwood+"]["aliases"]


def test_cubic_and_bbr_are_listed_with_their_parameters_and_sources():
    ccs = family("cc")
    cubic = {p["name"]: p for p in ccs["cubic"]["params"]}
    assert list(cubic) == ["beta", "c", "fast_convergence", "tcp_friendliness", "hystart"]
    assert (cubic["beta"]["default"], cubic["c"]["default"], cubic["hystart"]["default"]) == (
        "0.7001953125",
        "0.400390625",
        "linux",
    )
    assert "RFC 9438" in ccs["cubic"]["source"] and "tcp_cubic.c" in ccs["cubic"]["source"]
    assert "tcp_bbr.c" in ccs["bbr"]["source"]
    # Both default to Linux's behaviour; they exist to trace the differences with ns-3 (docs/ns3-comparison.md).
    assert [(p["name"], p["default"]) for p in ccs["bbr"]["params"]] == [
        ("send_quantum", "0"),
        ("initial_min_rtt", "0s"),
    ]


def test_rto_policies_list_ca_rto_with_only_its_own_parameters():
    policies = family("rto-policy")
    assert list(policies) == ["none", "ca-rto"]
    # The estimator's timer parameters (min_rto, …) are not the policy's; its named ambiguities are.
    assert [p["name"] for p in policies["ca-rto"]["params"]] == [
        "scale",
        "max_cwnd",
        "seed",
        "draw",
        "backoff",
    ]


def test_smoothtcp_defaults_are_the_papers_instance():
    smooth = family("cc")["smooth"]
    params = {p["name"]: p["default"] for p in smooth["params"]}
    # Vieira & Bauer 2006 §V: A_a 40, B_a 0.003038, A_q 0, B_q 0.5493, C_q 0.0625, M_q 0, κ 0.005.
    assert (
        params["a_a"],
        params["b_a"],
        params["a_q"],
        params["b_q"],
        params["c_q"],
        params["m_q"],
        params["kappa"],
    ) == ("40", "0.003038", "0", "0.5493", "0.0625", "0", "0.005")
    assert all(params[f"{c}_{m}"] == "0" for m in "jxfe" for c in "abcm"), (
        "only q is a control metric"
    )


def test_the_catalogue_gives_every_family_one_record_shape():
    entries = _core.catalogue()
    families = list(dict.fromkeys(e["family"] for e in entries))
    assert families == [
        "estimator",
        "queue",
        "error",
        "app",
        "agent",
        "cc",
        "recovery",
        "rto-policy",
        "spurious-detection",
        "spurious-response",
        "discriminator-sender",
        "discriminator-receiver",
    ]
    assert all(
        set(e) == {"family", "name", "aliases", "summary", "source", "params", "defaults"}
        for e in entries
    )
    assert all(
        set(p) == {"name", "kind", "default", "range", "unit", "doc"}
        for e in entries
        for p in e["params"]
    )
    assert "rfc6675" in family("recovery")["sack"]["aliases"]
    min_rto = next(p for p in family("estimator")["rfc6298"]["params"] if p["name"] == "min_rto")
    assert (min_rto["kind"], min_rto["unit"]) == ("duration", "s")


def test_the_receiver_side_discriminator_columns_are_the_registered_discriminators():
    from rttlab.trace.discriminators import NAMES

    assert list(NAMES) == list(family("discriminator-receiver"))
    assert list(family("discriminator-sender")) == [
        "bernoulli",
        "vegas",
        "ntg",
        "ndg",
        "veno",
        "two-bit",
    ]
