//! Versions of the canonical form: the text a run's content hash is computed from
//! (`Scenario::to_canonical_toml_as`, docs/experiments.md "Canonical form").
//!
//! Version 2 (current) has one rule for every key: its value as read, or its default when absent,
//! in the one registered spelling — every choice by its registered name (aliases respelled), every
//! component's parameter table filled with its declared defaults ([`component::filled_params`]),
//! quantities in the largest exact unit (a parameter's by its declared spelling, a choice's alias
//! as its registered word: [`component::spelled_value`]). A key whose absence means "not used"
//! (`tcp.sample_clock`, `tcp.spurious_detection`, `tcp.max_pacing_rate`, a link's `agent`, a
//! group's `stop`) stays absent until given; given, it is written in its one spelling. "Not used"
//! given as such (`spurious_detection = "off"`, `sample_clock = "0s"`) is written absent, except
//! in a flow group whose `[tcp]` uses the key: there the group's `"off"` must still override
//! `[tcp]` when the text is read back ([`not_used_as`]).
//!
//! A flow group's `stack` is filled with its default (`"kernel"`) as any key with one.
//!
//! Version 1 wrote the `[tcp]` choices named in a family (`cc` and its parameters, `recovery`,
//! `spurious_detection`, `spurious_response`, `delayed_ack`, `sample_clock`, `rto`) as spelled,
//! and left `recovery`, `spurious_response`, `source_quench`, `receiver_ecn`, `rto.policy`, a
//! group's `app`, `bytes` and `stack` absent unless given. Stores written then are keyed by it, so it stays available,
//! byte for byte: version 2 is version 1's table with the rewrites below.

use super::app;
use super::component::{self, canonical, canonical_named, respelled};
use super::config::{AppBytes, RtoCfg, Scenario, TcpCfg};
use super::spelled::{SampleClock, Spelled};
use super::tcp::{self, SpuriousDetection};
use super::units::exact_duration;

/// Which canonical form to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CanonicalForm {
    /// The first form: the `[tcp]` choices as spelled (stores written before version 2).
    V1,
    /// One rule for every key (module docs).
    V2,
}

impl CanonicalForm {
    /// The form new runs are keyed by.
    pub const CURRENT: Self = Self::V2;

    /// The form numbered `n` (1 or 2), as Python's `scenario_schema` counts them.
    pub fn numbered(n: u32) -> Option<Self> {
        match n {
            1 => Some(Self::V1),
            2 => Some(Self::V2),
            _ => None,
        }
    }
}

/// Version 2's rewrites of a scenario that version 1 has already put in canonical form (queues,
/// error models, agents and applications as tagged tables with their defaults).
pub(crate) fn respell(s: &mut Scenario) {
    use super::{agent, error_model, queue};
    let links = s
        .topology
        .bottleneck
        .iter_mut()
        .chain(s.topology.access.iter_mut())
        .chain(s.topology.receiver_access.iter_mut())
        .chain(s.topology.links.iter_mut());
    for link in links {
        link.queue = respelled(&queue::FAMILY, &link.queue);
        link.error = respelled(&error_model::FAMILY, &link.error);
        link.agent = link.agent.as_ref().map(|t| respelled(&agent::FAMILY, t));
    }
    tcp_v2(&mut s.tcp);
    not_used_as(&mut s.tcp, None);
    for group in &mut s.flows {
        if let Some(t) = &mut group.tcp {
            tcp_v2(t);
            not_used_as(t, Some(&s.tcp));
        }
        // A group without `app` is a bulk transfer; without `bytes` (with a bulk application) an
        // unlimited one.
        let table = respelled(
            &app::FAMILY,
            &canonical(
                &app::FAMILY,
                app::DEFAULT_KIND,
                group.app.as_ref().unwrap_or(&toml::Table::new()),
            ),
        );
        let bulk = table.get("kind").and_then(|k| k.as_str()) == Some(app::DEFAULT_KIND);
        group.app = Some(table);
        if bulk && group.bytes.is_none() {
            group.bytes = Some(AppBytes(None));
        }
        // The stack has a default ("kernel", on the testbed; the simulator runs rttlab's sender
        // whichever is named), so it is written as every key with a default is.
        group.stack = Some(group.stack.unwrap_or_default());
    }
}

/// `tcp.spurious_detection` and `tcp.sample_clock` not used ("off", "0s" or absent: the same
/// run, `sim::build`) have one text: absent — except in a flow group whose `[tcp]` uses them,
/// where the group's `"off"` (`"0ns"`) is written, as reading the text back merges `[tcp]`'s
/// keys into the group's table where it has none. `top` is `[tcp]`, already in this form (None:
/// this is `[tcp]`).
fn not_used_as(t: &mut TcpCfg, top: Option<&TcpCfg>) {
    let detects = |t: &TcpCfg| {
        t.spurious_detection
            .as_ref()
            .is_some_and(|d| d.value != SpuriousDetection::Off)
    };
    let clocked = |t: &TcpCfg| t.sample_clock.as_ref().is_some_and(|c| c.value.0 != 0);
    if !detects(t) {
        t.spurious_detection = top
            .filter(|top| detects(top))
            .map(|_| Spelled::new(SpuriousDetection::Off, SpuriousDetection::Off.name()));
    }
    if !clocked(t) {
        t.sample_clock = top
            .filter(|top| clocked(top))
            .map(|_| Spelled::new(SampleClock(0), exact_duration(0)));
    }
}

/// A `[tcp]` table's choices in their registered spelling, defaults filled.
fn tcp_v2(t: &mut TcpCfg) {
    t.cc = Spelled::new(
        t.cc.value.clone(),
        canonical_named(&tcp::cc::FAMILY, "name", t.cc.spelling(), &()),
    );
    let recovery = t
        .recovery
        .as_ref()
        .map_or_else(|| tcp::default_recovery(t.sack, &t.cc.value), |r| r.value);
    t.recovery = Some(Spelled::new(recovery, recovery.name()));
    t.delayed_ack = Spelled::new(
        t.delayed_ack.value,
        t.delayed_ack
            .value
            .0
            .map_or_else(|| "off".to_string(), exact_duration),
    );
    // Its registered word; whether "not used" is written at all is [`not_used_as`]'s to decide.
    t.spurious_detection = t
        .spurious_detection
        .as_ref()
        .map(|d| Spelled::new(d.value, d.value.name()));
    let response = t
        .spurious_response
        .as_ref()
        .map(|r| r.value)
        .unwrap_or_default();
    t.spurious_response = Some(Spelled::new(response, response.name()));
    t.source_quench = Some(t.source_quench.unwrap_or_default());
    t.receiver_ecn = Some(t.receiver_ecn.unwrap_or(true));
    t.sample_clock = t
        .sample_clock
        .as_ref()
        .map(|c| Spelled::new(c.value, exact_duration(c.value.0)));
    t.rto = rto_v2(&t.rto);
}

/// `tcp.rto`: the estimator by its registered name with its declared parameters filled, and the
/// RTO policy (absent: `none`) as a table with its own.
fn rto_v2(rto: &RtoCfg) -> RtoCfg {
    let Some(comp) = crate::rtt::FAMILY.find(&rto.estimator) else {
        return rto.clone();
    };
    let given: toml::Table = rto
        .params
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let params = component::filled_params(comp, &given, &())
        .into_iter()
        .collect();
    let policy = match &rto.policy {
        Some(p) => Spelled::new(
            p.value.clone(),
            canonical_named(&crate::rtt::policy::FAMILY, "name", p.spelling(), &()),
        ),
        None => Spelled::new(
            crate::rtt::policy::Policy::None,
            canonical_named(&crate::rtt::policy::FAMILY, "name", &"none".into(), &()),
        ),
    };
    RtoCfg {
        estimator: comp.name.to_string(),
        policy: Some(policy),
        params,
        built: rto.built.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::CanonicalForm::{V1, V2};
    use crate::sim::config::tests::MINIMAL as BASE;
    use crate::sim::config::Scenario;

    fn v2(extra: &str) -> String {
        let s =
            Scenario::from_toml(&format!("{BASE}\n{extra}"), &[]).unwrap_or_else(|e| panic!("{e}"));
        let text = s.to_canonical_toml_as(V2).unwrap();
        // The text reads back to a scenario with the same canonical form.
        let again = Scenario::from_toml(&text, &[])
            .unwrap_or_else(|e| panic!("{e}\n{text}"))
            .to_canonical_toml_as(V2)
            .unwrap();
        assert_eq!(text, again, "version 2 text does not read back to itself");
        text
    }

    #[test]
    fn an_alias_and_the_registered_name_give_one_version_2_text() {
        assert_eq!(
            v2("[tcp]\nsack = true\nrecovery = \"rfc6675\""),
            v2("[tcp]\nsack = true\nrecovery = \"sack\"")
        );
        assert_eq!(
            v2("[tcp]\ncc = \"new_reno\""),
            v2("[tcp]\ncc = \"newreno\"")
        );
        assert_eq!(
            v2("[tcp]\ncc = \"spec-tcp\""),
            v2("[tcp]\ncc = { name = \"spectcp\" }")
        );
        assert!(v2("[tcp]\ncc = \"smoothtcp\"").contains("name = \"smooth\""));
    }

    #[test]
    fn parameters_omitted_or_spelled_out_at_their_defaults_give_one_version_2_text() {
        let vegas = crate::sim::tcp::cc::FAMILY.find("vegas").unwrap();
        let spelled: Vec<String> = vegas
            .params
            .iter()
            .map(|p| format!("{} = \"{}\"", p.name, p.default))
            .collect();
        assert_eq!(
            v2("[tcp]\ncc = \"vegas\""),
            v2(&format!(
                "[tcp]\ncc = {{ name = \"vegas\", {} }}",
                spelled.join(", ")
            ))
        );
        assert_eq!(
            v2(""),
            v2("[tcp.rto]\nestimator = \"rfc6298\"\nmin_rto = \"1s\"\npolicy = \"none\"")
        );
        assert_eq!(
            v2("[tcp.rto]\npolicy = \"ca-rto\""),
            v2("[tcp.rto]\npolicy = { name = \"ca-rto\" }")
        );
        // Absent and the default value of a key with a default, and "not used" given as such.
        assert_eq!(v2(""), v2("[tcp]\nrecovery = \"newreno\"\nspurious_response = \"linux\"\nsource_quench = \"react\"\nreceiver_ecn = true\ndelayed_ack = \"none\""));
        assert_eq!(
            v2("[tcp]\ndelayed_ack = \"0.2s\""),
            v2("[tcp]\ndelayed_ack = \"200ms\"")
        );
        assert_eq!(
            v2("[tcp]\nsample_clock = \"0.004s\""),
            v2("[tcp]\nsample_clock = \"4ms\"")
        );
    }

    #[test]
    fn a_group_without_app_or_bytes_is_written_as_an_unlimited_bulk_transfer() {
        let plain = v2("");
        let given = Scenario::from_toml(
            &BASE.replace(
                "count = 2",
                "count = 2\napp = { kind = \"bulk\" }\nbytes = \"inf\"",
            ),
            &[],
        )
        .unwrap()
        .to_canonical_toml_as(V2)
        .unwrap();
        assert_eq!(plain, given);
        let onoff = v2("[[flows]]\napp = { kind = \"onoff\", off = \"1s\", burst = \"10KB\" }");
        assert_eq!(
            onoff.matches("bytes = \"inf\"").count(),
            1,
            "an on/off group takes no bytes:\n{onoff}"
        );
    }

    #[test]
    fn version_2_names_every_choice_and_fills_every_default() {
        let text = v2("[tcp]\ncc = \"westwood\"\nsack = true");
        for needle in [
            "name = \"westwood+\"",
            "recovery = \"sack\"",
            "spurious_response = \"linux\"",
            "source_quench = \"react\"",
            "receiver_ecn = true",
            "estimator = \"rfc6298\"",
            "min_rto = \"1s\"",
            "kind = \"bulk\"",
        ] {
            assert!(text.contains(needle), "{needle} missing from\n{text}");
        }
        assert!(
            !text.contains("spurious_detection")
                && !text.contains("sample_clock")
                && !text.contains("max_pacing_rate"),
            "keys that mean 'not used' stay absent:\n{text}"
        );
    }

    #[test]
    fn a_groups_own_choices_survive_reading_the_text_back() {
        // A group naming another congestion control than [tcp] (each a full table in version 2),
        // and a group turning off the detector [tcp] names: read back, each keeps its own.
        let text = v2("[tcp]\ncc = { name = \"vegas\", alpha = 1 }\nsack = true\nspurious_detection = \"frto\"\n[[flows]]\ntcp = { cc = \"reno\", spurious_detection = \"off\" }");
        let s = Scenario::from_toml(&text, &[]).unwrap();
        let group = s.flows[1].tcp.as_ref().unwrap();
        assert_eq!(group.cc.value.name, "reno");
        assert_eq!(
            group.spurious_detection.as_ref().map(|d| d.value),
            Some(crate::sim::tcp::SpuriousDetection::Off)
        );
        crate::sim::build(&s).unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    fn a_parameter_the_component_refuses_beside_another_stays_absent() {
        // regression's form = "paper" refuses k, window and under_penalty being given.
        let text = v2("[tcp.rto]\nestimator = \"regression\"\nform = \"paper\"");
        assert!(
            text.contains("form = \"paper\"")
                && !text.contains("\nk = ")
                && !text.contains("under_penalty"),
            "{text}"
        );
        assert!(v2("[tcp.rto]\nestimator = \"regression\"").contains("under_penalty = \"3ms\""));
        // In a group, beside a [tcp] of the same estimator whose k is written out, it reads back.
        let text = v2("[tcp.rto]\nestimator = \"regression\"\n[[flows]]\ntcp = { rto = { estimator = \"regression\", form = \"paper\" } }");
        crate::sim::build(&Scenario::from_toml(&text, &[]).unwrap())
            .unwrap_or_else(|e| panic!("{e}"));
    }

    /// Version 2 of the minimal scenario with `queue` as the bottleneck's queue table.
    fn v2_queue(queue: &str) -> String {
        let text = BASE.replace(
            "delay = \"20ms\"",
            &format!("delay = \"20ms\"\nqueue = {{ {queue} }}"),
        );
        let s = Scenario::from_toml(&text, &[]).unwrap_or_else(|e| panic!("{e}"));
        let text = s.to_canonical_toml_as(V2).unwrap();
        let again = Scenario::from_toml(&text, &[])
            .unwrap_or_else(|e| panic!("{e}\n{text}"))
            .to_canonical_toml_as(V2)
            .unwrap();
        assert_eq!(text, again, "version 2 text does not read back to itself");
        text
    }

    #[test]
    fn a_choice_parameters_alias_and_its_registered_word_give_one_version_2_text() {
        let onoff = |dist: &str| {
            v2(&format!("[[flows]]\napp = {{ kind = \"onoff\", off = \"1s\", burst = \"10KB\", dist = \"{dist}\" }}"))
        };
        assert_eq!(onoff("exp"), onoff("exponential"));
        assert_eq!(onoff("constant"), onoff("fixed"));
        assert!(onoff("constant").contains("dist = \"fixed\""));
        assert_ne!(onoff("exp"), onoff("fixed"));
    }

    #[test]
    fn a_quantity_parameter_in_two_spellings_gives_one_version_2_text() {
        assert_eq!(v2_queue("limit = 100"), v2_queue("limit = \"100pkts\""));
        assert!(v2_queue("limit = 100").contains("limit = \"100p\""));
        assert_eq!(
            v2_queue("limit = \"64KiB\""),
            v2_queue("limit = \"65536B\"")
        );
        assert_eq!(
            v2_queue("kind = \"red\", mean_packet = \"1.5KB\", byte_mode_max = 1500"),
            v2_queue("kind = \"red\", mean_packet = \"1500B\", byte_mode_max = \"1500B\"")
        );
        let onoff = |load: &str| {
            v2(&format!(
                "[[flows]]\napp = {{ kind = \"onoff\", on = \"1s\", off = \"1s\", {load} }}"
            ))
        };
        assert_eq!(onoff("rate = \"2 Mb/s\""), onoff("rate = \"2000kbps\""));
        assert!(onoff("rate = 2000000").contains("rate = \"2Mbps\""));
        let burst = |b: &str| {
            v2(&format!(
                "[[flows]]\napp = {{ kind = \"onoff\", off = \"1s\", burst = {b} }}"
            ))
        };
        assert_eq!(burst("\"10KB\""), burst("10000"));
        assert!(burst("\"10KB\"").contains("burst = \"10000B\""));
        // A quantity of an estimator's parameter table: regression's probed RTTs and coefficients.
        let paper = |min: &str| {
            v2(&format!(
                "[tcp.rto]\nestimator = \"regression\"\nform = \"paper\"\nmin_rtt = {min}"
            ))
        };
        assert_eq!(paper("0.04"), paper("\"40ms\""));
        let coef = |c: &str| {
            v2(&format!(
                "[tcp.rto]\nestimator = \"regression\"\ncoef = \"{c}\""
            ))
        };
        assert_eq!(coef("1.0, 2, 3e0, -4, 0.5"), coef("1,2,3,-4,0.5"));
    }

    #[test]
    fn version_1_keeps_choice_aliases_and_quantities_as_given() {
        let text = BASE.replace("delay = \"20ms\"", "delay = \"20ms\"\nqueue = { limit = 100 }") + "[[flows]]\napp = { kind = \"onoff\", off = \"1s\", burst = \"10KB\", dist = \"exp\" }";
        let v1 = Scenario::from_toml(&text, &[])
            .unwrap()
            .to_canonical_toml_as(V1)
            .unwrap();
        assert!(
            v1.contains("limit = 100")
                && v1.contains("burst = \"10KB\"")
                && v1.contains("dist = \"exp\""),
            "{v1}"
        );
    }

    #[test]
    fn not_used_given_as_off_or_left_absent_gives_one_version_2_text() {
        let plain = v2("");
        assert_eq!(
            plain,
            v2("[tcp]\nspurious_detection = \"off\"\nsample_clock = \"off\"")
        );
        assert_eq!(plain, v2("[tcp]\nsample_clock = \"0s\""));
        // In a group, beside a [tcp] that does not use them either.
        let group = |own: &str| v2(&format!("[[flows]]\ntcp = {{ cc = \"reno\"{own} }}"));
        assert_eq!(
            group(""),
            group(", spurious_detection = \"off\", sample_clock = \"0ns\"")
        );
        assert!(!group(", spurious_detection = \"off\"").contains("spurious_detection"));
        // Beside a [tcp] that uses them, a group's "off" is written, and read back it stays off.
        let text = v2("[tcp]\nsack = true\nspurious_detection = \"frto\"\nsample_clock = \"4ms\"\n[[flows]]\ntcp = { spurious_detection = \"off\", sample_clock = \"0s\" }");
        let s = Scenario::from_toml(&text, &[]).unwrap();
        let own = s.flows[1].tcp.as_ref().unwrap();
        assert_eq!(
            own.spurious_detection.as_ref().map(|d| d.value),
            Some(crate::sim::tcp::SpuriousDetection::Off),
            "{text}"
        );
        assert_eq!(
            own.sample_clock.as_ref().map(|c| c.value.0),
            Some(0),
            "{text}"
        );
        assert!(
            text.contains("spurious_detection = \"off\"")
                && text.contains("sample_clock = \"0ns\""),
            "{text}"
        );
    }

    #[test]
    fn a_groups_stack_absent_or_given_as_its_default_gives_one_version_2_text() {
        let plain = v2("");
        assert_eq!(plain.matches("stack = \"kernel\"").count(), 1, "{plain}");
        let given = Scenario::from_toml(
            &BASE.replace("count = 2", "count = 2\nstack = \"kernel\""),
            &[],
        )
        .unwrap()
        .to_canonical_toml_as(V2)
        .unwrap();
        assert_eq!(plain, given);
        let v1 = Scenario::from_toml(BASE, &[])
            .unwrap()
            .to_canonical_toml_as(V1)
            .unwrap();
        assert!(!v1.contains("stack"), "version 1 left it absent: {v1}");
    }

    #[test]
    fn version_1_writes_the_choices_as_spelled() {
        let s = Scenario::from_toml(
            &format!("{BASE}\n[tcp]\nsack = true\nrecovery = \"rfc6675\"\ncc = \"new_reno\""),
            &[],
        )
        .unwrap();
        let v1 = s.to_canonical_toml_as(V1).unwrap();
        assert!(
            v1.contains("recovery = \"rfc6675\"") && v1.contains("cc = \"new_reno\""),
            "{v1}"
        );
        assert!(!v1.contains("source_quench") && !v1.contains("app"), "{v1}");
        assert_eq!(
            s.to_canonical_toml().unwrap(),
            s.to_canonical_toml_as(V2).unwrap(),
            "the current form is version 2"
        );
    }
}
