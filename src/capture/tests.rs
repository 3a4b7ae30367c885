//! End-to-end tests of the capture layer: synthetic captures written here pin exact samples;
//! the real captures in `../shared/captures` must parse without panic and agree with the facts
//! their MANIFEST records (measured independently with tshark).

use super::testutil::*;
use super::wire::{flags::*, linktype};
use super::*;
use crate::time::{MS, SEC, US};

const SYNACK: u8 = SYN | ACK;

/// A two-party conversation written to a capture: client 10.0.0.1:40000, server 10.0.0.2:80.
struct Conv {
    p: Pcap,
    link: u32,
    v6_exts: Option<Vec<(u8, usize)>>,
    vlans: Vec<u16>,
    base: TcpSpec,
}

const T0: u64 = 1_600_000_000_000_000_000;

impl Conv {
    fn new() -> Self {
        Self::on(linktype::ETHERNET, false, vec![], None)
    }

    fn on(link: u32, nanos: bool, vlans: Vec<u16>, v6_exts: Option<Vec<(u8, usize)>>) -> Self {
        Self {
            p: Pcap::new(link, nanos, false),
            link,
            v6_exts,
            vlans,
            base: TcpSpec::default(),
        }
    }

    fn frame(&self, s: &TcpSpec) -> Vec<u8> {
        let (ip, et) = match &self.v6_exts {
            Some(e) => (ipv6_tcp(s, e), 0x86dd),
            None => (ipv4_tcp(s), 0x0800),
        };
        match self.link {
            linktype::ETHERNET => eth_vlan(&self.vlans, et, &ip),
            linktype::LINUX_SLL => sll(et, &ip),
            linktype::LINUX_SLL2 => sll2(et, &ip),
            linktype::NULL => [&2u32.to_le_bytes()[..], &ip].concat(),
            linktype::LOOP => [&2u32.to_be_bytes()[..], &ip].concat(),
            _ => ip,
        }
    }

    /// Send at `t` (ns from start) from the client (`c2s`) or the server.
    #[allow(clippy::too_many_arguments)]
    fn send(
        &mut self,
        t: u64,
        c2s: bool,
        seq: u32,
        ack: u32,
        fl: u8,
        payload: usize,
        edit: impl FnOnce(&mut TcpSpec),
    ) -> &mut Self {
        let mut s = if c2s {
            self.base.clone()
        } else {
            self.base.reversed()
        };
        s.seq = seq;
        s.ack = ack;
        s.flags = fl;
        s.payload = payload;
        edit(&mut s);
        let f = self.frame(&s);
        self.p.packet(T0 + t, &f);
        self
    }

    fn run(&self, cfg: &Config) -> Analysis {
        analyze_bytes(&self.p.bytes, cfg).expect("synthetic capture reads")
    }
}

fn none(_: &mut TcpSpec) {}

/// Rows of (method, dir, rtt ns, ambiguous, seq start, seq end).
fn rows(a: &Analysis) -> Vec<(Method, u8, u64, bool, u32, u32)> {
    let s = &a.samples;
    (0..s.len())
        .map(|i| {
            (
                s.method[i],
                s.dir[i],
                s.rtt[i],
                s.ambiguous[i],
                s.seq_start[i],
                s.seq_end[i],
            )
        })
        .collect()
}

/// Handshake at a client-side capture: SYN/ACK after 100 ms, ACK 0.1 ms later; then two
/// 1000-byte segments 1 ms apart and one ACK for both 100 ms after the second.
fn client_side_transfer(c: &mut Conv, isn: u32) {
    let s = isn;
    c.send(0, true, s, 0, SYN, 0, |t| t.mss = Some(1460))
        .send(100 * MS, false, 5000, s.wrapping_add(1), SYNACK, 0, |t| {
            t.mss = Some(1400)
        })
        .send(
            100 * MS + 100 * US,
            true,
            s.wrapping_add(1),
            5001,
            ACK,
            0,
            none,
        )
        .send(
            101 * MS,
            true,
            s.wrapping_add(1),
            5001,
            ACK | PSH,
            1000,
            none,
        )
        .send(
            102 * MS,
            true,
            s.wrapping_add(1001),
            5001,
            ACK | PSH,
            1000,
            none,
        )
        .send(202 * MS, false, 5001, s.wrapping_add(2001), ACK, 0, none);
}

#[test]
fn a_clean_transfer_gives_the_handshake_legs_and_one_sample_per_exact_ack() {
    let mut c = Conv::new();
    client_side_transfer(&mut c, 1);
    let a = c.run(&Config::default());
    assert_eq!(
        rows(&a),
        vec![
            (Method::Syn, 0, 100 * MS, false, 1, 2),
            (Method::Syn, 1, 100 * US, false, 5000, 5001),
            (Method::Seq, 0, 100 * MS, false, 1002, 2002),
        ]
    );
    assert_eq!(a.samples.frame, vec![2, 3, 6]);
    assert_eq!(a.samples.ref_frame, vec![1, 2, 5]);
    let conn = &a.connections[0];
    assert_eq!(a.connections.len(), 1);
    assert_eq!(conn.handshake_rtt, Some(100 * MS + 100 * US));
    assert!(conn.handshake_seen);
    assert_eq!(conn.packets, [4, 2]);
    assert_eq!(conn.bytes, [2000, 0]);
    assert_eq!(conn.mss, [Some(1460), Some(1400)]);
    assert_eq!((conn.a_port, conn.b_port), (40000, 80));
    assert_eq!(conn.a.to_string(), "10.0.0.1");
    assert_eq!(conn.ttl, [Some(64), Some(64)]);
    assert_eq!(conn.hops, [Some(0), Some(0)]);
    // Capture at the data sender: the data→ACK sample is the path RTT.
    assert_eq!(conn.vantage, Vantage::NearSender);
    assert_eq!(conn.path_rtt, PathRtt::Series(Method::Seq, 0));
    assert_eq!(
        (conn.min_rtt, conn.max_rtt),
        (Some(100 * MS), Some(100 * MS))
    );
}

#[test]
fn sequence_numbers_wrapping_past_two_to_the_32_still_match() {
    let mut c = Conv::new();
    // ISN so that the second segment crosses 2^32.
    client_side_transfer(&mut c, u32::MAX - 1500);
    let a = c.run(&Config::default());
    let r = rows(&a);
    assert_eq!(r.len(), 3);
    assert_eq!(
        r[2],
        (
            Method::Seq,
            0,
            100 * MS,
            false,
            (u32::MAX - 1500).wrapping_add(1001),
            (u32::MAX - 1500).wrapping_add(2001)
        )
    );
    assert!(r[2].5 < r[2].4, "the timed segment itself wraps");
    assert_eq!(a.connections[0].retransmissions, [0, 0]);
}

#[test]
fn every_link_type_vlan_stack_and_ipv6_extension_chain_gives_the_same_samples() {
    let mut reference = Conv::new();
    client_side_transfer(&mut reference, 1);
    let want = rows(&reference.run(&Config::default()));
    let variants = [
        Conv::on(linktype::ETHERNET, true, vec![0x88a8, 0x8100], None),
        Conv::on(
            linktype::ETHERNET,
            false,
            vec![0x8100],
            Some(vec![(0, 8), (43, 24), (60, 16)]),
        ),
        Conv::on(linktype::LINUX_SLL, false, vec![], None),
        Conv::on(linktype::LINUX_SLL2, true, vec![], Some(vec![])),
        Conv::on(linktype::RAW, false, vec![], Some(vec![(60, 8)])),
        Conv::on(linktype::IPV4, false, vec![], None),
        Conv::on(linktype::IPV6, false, vec![], Some(vec![(44, 8)])),
        Conv::on(linktype::NULL, false, vec![], None),
        Conv::on(linktype::LOOP, false, vec![], None),
    ];
    for mut c in variants {
        client_side_transfer(&mut c, 1);
        let a = c.run(&Config::default());
        assert_eq!(
            rows(&a),
            want,
            "link {} vlans {:?} v6 {:?}",
            c.link,
            c.vlans,
            c.v6_exts
        );
        assert_eq!(a.counters.tcp, 6);
        assert_eq!(a.counters.malformed, 0);
    }
}

#[test]
fn header_only_captures_count_payload_from_ip_lengths() {
    for snaplen in [54, 66, 96] {
        let mut c = Conv::new();
        c.p = Pcap::with_snaplen(1, false, false, snaplen);
        client_side_transfer(&mut c, 1);
        let a = c.run(&Config::default());
        assert_eq!(a.connections[0].bytes, [2000, 0], "snaplen {snaplen}");
        assert_eq!(rows(&a).len(), 3, "snaplen {snaplen}");
        // At 54 bytes the SYN's MSS option is cut off, and counted as such.
        assert_eq!(
            a.counters.options_cut > 0,
            snaplen == 54,
            "snaplen {snaplen}"
        );
    }
}

/// Client-side capture: segments A [1,1001) and B [1001,2001) sent at 0 and 1 ms; A is lost.
/// The receiver's duplicate ACKs carry SACK for B; A is retransmitted at 300 ms and the ACK for
/// everything comes at 400 ms.
fn loss_with_sack(c: &mut Conv, sack: bool) {
    c.send(0, true, 1, 1, ACK, 1000, none)
        .send(MS, true, 1001, 1, ACK, 1000, none)
        .send(101 * MS, false, 1, 1, ACK, 0, |t| {
            if sack {
                t.sack = vec![(1001, 2001)]
            }
        })
        .send(300 * MS, true, 1, 1, ACK, 1000, none)
        .send(400 * MS, false, 1, 2001, ACK, 0, none);
}

#[test]
fn karn_excludes_every_sample_from_an_ack_covering_a_retransmission() {
    let mut c = Conv::new();
    loss_with_sack(&mut c, false);
    let a = c.run(&Config::default());
    // The ACK at 400 ms exactly covers B (never retransmitted), but it also covers the
    // retransmitted A: 399 ms would measure the repair, not the path.
    assert_eq!(rows(&a), vec![]);
    assert_eq!(a.counters.ambiguous, 1);
    assert_eq!(a.connections[0].retransmissions, [1, 0]);

    let a = c.run(&Config {
        include_ambiguous: true,
        ..Config::default()
    });
    assert_eq!(rows(&a), vec![(Method::Seq, 0, 399 * MS, true, 1001, 2001)]);
}

#[test]
fn a_sacked_segment_is_timed_by_its_sack_and_never_by_the_later_cumulative_ack() {
    let mut c = Conv::new();
    loss_with_sack(&mut c, true);
    let a = c.run(&Config {
        include_ambiguous: true,
        ..Config::default()
    });
    assert_eq!(
        rows(&a),
        vec![(Method::Seq, 0, 100 * MS, false, 1001, 2001)]
    );
    assert_eq!(a.connections[0].sack_packets, 1);

    let a = c.run(&Config {
        sack_samples: false,
        include_ambiguous: true,
        ..Config::default()
    });
    assert_eq!(
        rows(&a),
        vec![],
        "SACK sampling off: B is still not timed by the cumulative ACK"
    );
}

#[test]
fn a_retransmitted_segment_gives_an_ambiguous_sample_only_on_request() {
    let mut c = Conv::new();
    c.send(0, true, 1, 1, ACK, 500, none)
        .send(200 * MS, true, 1, 1, ACK, 500, none)
        .send(250 * MS, false, 1, 501, ACK, 0, none);
    assert_eq!(rows(&c.run(&Config::default())), vec![]);
    assert_eq!(
        rows(&c.run(&Config {
            include_ambiguous: true,
            ..Config::default()
        })),
        vec![(Method::Seq, 0, 250 * MS, true, 1, 501)]
    );
}

#[test]
fn segments_reordered_before_the_capture_point_are_not_retransmissions() {
    let mut c = Conv::new();
    // B is seen before A (reordered upstream of a capture in the middle); the ACK for both
    // times A, the segment that ends at the ACK... which is B's end: B is timed.
    c.send(0, true, 1, 1, ACK, 10, none) // first packet fixes the sequence origin
        .send(10 * MS, false, 1, 11, ACK, 0, none)
        .send(20 * MS, true, 1011, 1, ACK, 1000, none) // B
        .send(21 * MS, true, 11, 1, ACK, 1000, none) // A fills the hole
        .send(60 * MS, false, 1, 2011, ACK, 0, none);
    let a = c.run(&Config::default());
    assert_eq!(a.connections[0].retransmissions, [0, 0]);
    assert_eq!(
        rows(&a),
        vec![
            (Method::Seq, 0, 10 * MS, false, 1, 11),
            (Method::Seq, 0, 40 * MS, false, 1011, 2011)
        ]
    );
}

#[test]
fn partial_acks_give_no_sample_until_the_end_is_acked_and_the_sample_names_the_segment_sent() {
    let mut c = Conv::new();
    c.send(0, true, 1, 1, ACK, 3000, none)
        .send(50 * MS, false, 1, 1001, ACK, 0, none)
        .send(70 * MS, false, 1, 3001, ACK, 0, none);
    // seq_start is the timed segment's start as sent (1), not where the partial ACK left it.
    assert_eq!(
        rows(&c.run(&Config::default())),
        vec![(Method::Seq, 0, 70 * MS, false, 1, 3001)]
    );
}

#[test]
fn ts_echo_gives_both_partial_rtts_of_the_capture_point() {
    let mut c = Conv::new();
    // Client TSval 100 at 0; server echoes it at 50 ms with its own TSval 9000; the client
    // echoes 9000 after 0.2 ms. Later packets repeat old values and must not match again.
    c.send(0, true, 1, 1, ACK, 100, |t| t.ts = Some((100, 1)))
        .send(MS, true, 101, 1, ACK, 100, |t| t.ts = Some((100, 1)))
        .send(50 * MS, false, 1, 201, ACK, 0, |t| t.ts = Some((9000, 100)))
        .send(50 * MS + 200 * US, true, 201, 1, ACK, 0, |t| {
            t.ts = Some((150, 9000))
        })
        .send(60 * MS, false, 1, 201, ACK, 0, |t| t.ts = Some((9001, 100)));
    let a = c.run(&Config::default());
    let ts: Vec<_> = rows(&a).into_iter().filter(|r| r.0 == Method::Ts).collect();
    assert_eq!(
        ts,
        vec![
            (Method::Ts, 0, 50 * MS, false, 1, 101),
            (Method::Ts, 1, 200 * US, false, 1, 1)
        ]
    );
    assert_eq!(a.connections[0].ts, [true, true]);
}

#[test]
fn a_tsval_seen_again_after_its_echo_is_not_timed_twice() {
    let mut c = Conv::new();
    c.send(0, true, 1, 1, ACK, 100, |t| t.ts = Some((100, 1)))
        .send(40 * MS, false, 1, 101, ACK, 0, |t| t.ts = Some((5, 100)))
        // A late duplicate of the first packet (reordered or resent by the network) with the
        // old TSval, then another echo of it: no second sample from 50 ms.
        .send(50 * MS, true, 1, 1, ACK, 100, |t| t.ts = Some((100, 1)))
        .send(90 * MS, false, 1, 101, ACK, 0, |t| t.ts = Some((6, 100)));
    let a = c.run(&Config::default());
    let ts: Vec<_> = rows(&a).into_iter().filter(|r| r.0 == Method::Ts).collect();
    assert_eq!(ts, vec![(Method::Ts, 0, 40 * MS, false, 1, 101)]);
}

#[test]
fn ts_echoes_of_retransmissions_are_unambiguous() {
    let mut c = Conv::new();
    // The retransmission carries a new TSval; its echo times it (RFC 7323 §4.1).
    c.send(0, true, 1, 1, ACK, 100, |t| t.ts = Some((10, 1)))
        .send(300 * MS, true, 1, 1, ACK, 100, |t| t.ts = Some((310, 1)))
        .send(340 * MS, false, 1, 101, ACK, 0, |t| t.ts = Some((5, 310)));
    let a = c.run(&Config::default());
    let ts: Vec<_> = rows(&a).into_iter().filter(|r| r.0 == Method::Ts).collect();
    assert_eq!(ts, vec![(Method::Ts, 0, 40 * MS, false, 1, 101)]);
}

#[test]
fn a_retransmitted_syn_makes_the_first_handshake_leg_ambiguous() {
    let mut c = Conv::new();
    c.send(0, true, 1, 0, SYN, 0, none)
        .send(1000 * MS, true, 1, 0, SYN, 0, none)
        .send(1080 * MS, false, 77, 2, SYNACK, 0, none)
        .send(1081 * MS, true, 2, 78, ACK, 0, none);
    let a = c.run(&Config::default());
    assert_eq!(rows(&a), vec![(Method::Syn, 1, MS, false, 77, 78)]);
    assert_eq!(a.connections[0].syn_retransmissions, 1);
    assert_eq!(
        a.connections.len(),
        1,
        "a SYN retransmission is not a new connection"
    );
    let a = c.run(&Config {
        include_ambiguous: true,
        ..Config::default()
    });
    assert_eq!(rows(&a)[0], (Method::Syn, 0, 80 * MS, true, 1, 2));
}

#[test]
fn port_reuse_after_fin_or_a_new_isn_starts_a_new_connection() {
    let mut c = Conv::new();
    client_side_transfer(&mut c, 1);
    c.send(300 * MS, true, 2002, 5001, FIN | ACK, 0, none).send(
        400 * MS,
        false,
        5001,
        2003,
        FIN | ACK,
        0,
        none,
    );
    // Same ports, new SYN after the FINs.
    c.send(500 * MS, true, 90_000, 0, SYN, 0, none).send(
        550 * MS,
        false,
        7,
        90_001,
        SYNACK,
        0,
        none,
    );
    // And again without any FIN: a different ISN is enough.
    c.send(600 * MS, true, 190_000, 0, SYN, 0, none);
    let a = c.run(&Config::default());
    assert_eq!(a.connections.len(), 3);
    assert_eq!(a.connections[1].first, 500 * MS as i64);
    assert_eq!(a.samples.conn.iter().filter(|&&c| c == 1).count(), 1);
    // The FIN is a sequence-space byte: its ACK is a seq sample.
    assert!(rows(&a).contains(&(Method::Seq, 0, 100 * MS, false, 2002, 2003)));
}

#[test]
fn a_syn_after_a_long_idle_period_starts_a_new_connection() {
    let mut c = Conv::new();
    c.send(0, true, 1, 0, SYN, 0, none)
        .send(10 * MS, false, 5, 2, SYNACK, 0, none)
        .send(11 * MS, true, 2, 6, ACK, 0, none);
    let idle = 301 * crate::time::SEC;
    c.send(idle, true, 1, 0, SYN, 0, none);
    assert_eq!(c.run(&Config::default()).connections.len(), 2);
    assert_eq!(
        c.run(&Config {
            idle_split: 400 * crate::time::SEC,
            ..Config::default()
        })
        .connections
        .len(),
        1
    );
}

#[test]
fn a_clock_stepping_backwards_drops_the_sample_instead_of_going_negative() {
    let mut c = Conv::new();
    c.send(100 * MS, true, 1, 1, ACK, 100, none)
        .send(99 * MS, false, 1, 101, ACK, 0, none);
    let a = c.run(&Config::default());
    assert_eq!(rows(&a), vec![]);
    assert_eq!(a.counters.negative_rtt, 1);
}

/// Found by `cargo fuzz` (capture target): timestamps centuries apart made `t − sent` overflow.
#[test]
fn timestamps_at_the_ends_of_the_64_bit_range_give_no_sample_and_no_overflow() {
    let data = eth(
        0x0800,
        &ipv4_tcp(&TcpSpec {
            payload: 100,
            ..TcpSpec::default()
        }),
    );
    let ack = eth(
        0x0800,
        &ipv4_tcp(
            &TcpSpec {
                ack: 1100,
                ..TcpSpec::default()
            }
            .reversed(),
        ),
    );
    let mut g = PcapNg::default();
    g.section()
        .interface(1, 65535, Some(9))
        .packet(0, 0, &data[..20], 65535)
        .packet(0, i64::MAX as u64 - 1, &data, 65535)
        .packet(0, (1u64 << 63) + 1, &ack, 65535);
    let a = analyze_bytes(
        &g.bytes,
        &Config {
            include_ambiguous: true,
            ..Config::default()
        },
    )
    .unwrap();
    assert_eq!(rows(&a), vec![]);
    assert_eq!(a.counters.negative_rtt, 1);
}

#[test]
fn a_receiver_side_capture_is_recognised_and_points_at_the_echo_of_the_sender() {
    let mut c = Conv::new();
    // Server sends data; the capture is at the client. The server keeps the pipe full: one
    // segment every 10 ms, each answering (and echoing the TSval of) the client's ACK of 90 ms
    // before, so the path RTT is 90 ms; data→ACK at the client is 0.2 ms.
    c.send(0, true, 1, 0, SYN, 0, |t| t.ts = Some((1, 0)))
        .send(80 * MS, false, 100, 2, SYNACK, 0, |t| t.ts = Some((500, 1)))
        .send(80 * MS + 100 * US, true, 2, 101, ACK, 0, |t| {
            t.ts = Some((2, 500))
        });
    let mut seq = 101u32;
    for i in 0..40u32 {
        let t = 100 * MS + u64::from(i) * 10 * MS;
        // The ACK for segment i leaves at t + 0.2 ms with TSval 10 + i; segment i echoes the
        // ACK of segment i − 9 (sent 89.8 ms earlier), or the handshake ACK's TSval 2.
        let echo = if i >= 9 { 10 + i - 9 } else { 2 };
        c.send(t, false, seq, 2, ACK, 1000, |s| {
            s.ts = Some((600 + i, echo))
        });
        seq += 1000;
        c.send(t + 200 * US, true, 2, seq, ACK, 0, |s| {
            s.ts = Some((10 + i, 600 + i))
        });
    }
    let a = c.run(&Config::default());
    let conn = &a.connections[0];
    assert_eq!(conn.vantage, Vantage::NearReceiver);
    assert_eq!(conn.path_rtt, PathRtt::Series(Method::Ts, 0));
    assert_eq!(conn.bytes, [0, 40_000]);
    assert_eq!(conn.path_rtt_median, Some(89_800 * US));
    // Only the first data segment's echo (of the handshake ACK, after which the server was idle
    // until its application wrote) is excluded.
    assert_eq!(conn.ts_excluded, 1);
}

/// The echo of a TSval first sent on a pure ACK that left the peer idle, after a 24 s
/// application pause: RFC 7323 §4's RTTM rule does not take it as an RTT.
#[test]
fn a_ts_echo_spanning_an_application_pause_is_flagged_counted_and_kept_out_of_the_path() {
    let mut c = Conv::new();
    // Capture at the client (receiver); the server answers each request-less push after its
    // own application's pause: one segment at 100 ms, then one 24 s after the client's ACK.
    c.send(0, true, 1, 0, SYN, 0, |t| t.ts = Some((1, 0)))
        .send(80 * MS, false, 100, 2, SYNACK, 0, |t| t.ts = Some((500, 1)))
        .send(80 * MS + 100 * US, true, 2, 101, ACK, 0, |t| {
            t.ts = Some((2, 500))
        })
        .send(160 * MS, false, 101, 2, ACK | PSH, 100, |t| {
            t.ts = Some((580, 2))
        })
        .send(160 * MS + 200 * US, true, 2, 201, ACK, 0, |t| {
            t.ts = Some((3, 580))
        })
        .send(24_160 * MS, false, 201, 2, ACK | PSH, 100, |t| {
            t.ts = Some((24_580, 3))
        })
        .send(24_160 * MS + 200 * US, true, 2, 301, ACK, 0, |t| {
            t.ts = Some((24_003, 24_580))
        });
    let a = c.run(&Config::default());
    let s = &a.samples;
    let ts: Vec<(u8, u64, bool)> = (0..s.len())
        .filter(|&i| s.method[i] == Method::Ts)
        .map(|i| (s.dir[i], s.rtt[i], s.idle_echo[i]))
        .collect();
    // The handshake ACK's TSval 2 is echoed 79.9 ms later by data (the server had been idle
    // since its SYN/ACK was acknowledged: flagged); TSval 3, 24 s later: flagged.
    assert!(ts.contains(&(0, 24_000 * MS - 200 * US, true)), "{ts:?}");
    assert_eq!(a.counters.idle_echoes, 2);
    let conn = &a.connections[0];
    assert_eq!(conn.ts_excluded, 2);
    // What remains of the path series is the SYN's echo by the SYN/ACK (80 ms); the pause never
    // becomes an RTT.
    assert_eq!(conn.path_rtt, PathRtt::Series(Method::Ts, 0));
    assert_eq!(
        (conn.path_rtt_median, conn.max_rtt),
        (Some(80 * MS), Some(80 * MS))
    );
}

/// tcpdump on the sender over a local link: SYN→SYN/ACK 50 µs, the host's own answer 20 µs.
#[test]
fn a_sender_side_capture_on_a_local_link_is_near_the_sender_and_keeps_its_samples() {
    let mut c = Conv::new();
    c.send(0, true, 1, 0, SYN, 0, none)
        .send(50 * US, false, 100, 2, SYNACK, 0, none)
        .send(70 * US, true, 2, 101, ACK, 0, none);
    let mut seq = 2u32;
    for i in 0..20u64 {
        let t = MS + i * MS;
        c.send(t, true, seq, 101, ACK, 1000, none);
        seq += 1000;
        c.send(t + 60 * US, false, 101, seq, ACK, 0, none);
    }
    let a = c.run(&Config::default());
    let conn = &a.connections[0];
    assert_eq!(conn.vantage, Vantage::NearSender);
    assert_eq!(conn.path_rtt, PathRtt::Series(Method::Seq, 0));
    assert_eq!(conn.path_rtt_median, Some(60 * US));
}

/// Timing alone says "middle" (30 % / 70 %), but only the receiver's packets crossed routers.
#[test]
fn hop_counts_place_a_capture_the_timing_leaves_in_the_middle() {
    let mut c = Conv::new();
    c.send(0, true, 1, 0, SYN, 0, none)
        .send(70 * MS, false, 100, 2, SYNACK, 0, |t| t.ttl = 52)
        .send(100 * MS, true, 2, 101, ACK, 0, none)
        .send(101 * MS, true, 2, 101, ACK, 1000, none)
        .send(171 * MS, false, 101, 1002, ACK, 0, |t| t.ttl = 52);
    let a = c.run(&Config::default());
    let conn = &a.connections[0];
    assert_eq!(conn.hops, [Some(0), Some(12)]);
    assert_eq!(conn.vantage, Vantage::NearSender);
    assert_eq!(conn.path_rtt, PathRtt::Series(Method::Seq, 0));
}

/// A middle capture without timestamps whose SYN was retransmitted: the forward leg is
/// ambiguous and nothing else times the receiver's side, so there is no path RTT at all —
/// the method says "none" rather than naming a sum whose value is missing.
#[test]
fn a_middle_capture_with_an_ambiguous_forward_leg_has_no_path_method() {
    let mut c = Conv::new();
    c.send(0, true, 1, 0, SYN, 0, none)
        .send(SEC, true, 1, 0, SYN, 0, none)
        .send(SEC + 40 * MS, false, 100, 2, SYNACK, 0, |t| t.ttl = 60)
        .send(SEC + 80 * MS, true, 2, 101, ACK, 0, |t| t.ttl = 60);
    let a = c.run(&Config::default());
    let conn = &a.connections[0];
    assert!(conn.handshake_ambiguous);
    assert_eq!(conn.handshake_rtt, None);
    assert_eq!((conn.path_rtt, conn.path_rtt_median), (PathRtt::None, None));
}

/// At the receiver without timestamps, the receiver's own data (requests) acknowledged by the
/// sender times the whole path: that series, not the one handshake leg.
#[test]
fn a_receiver_side_capture_without_timestamps_uses_the_seq_samples_of_the_receivers_data() {
    let mut c = Conv::new();
    c.send(0, true, 1, 0, SYN, 0, none)
        .send(80 * MS, false, 100, 2, SYNACK, 0, none)
        .send(80 * MS + 100 * US, true, 2, 101, ACK, 0, none);
    let (mut cseq, mut sseq) = (2u32, 101u32);
    for i in 0..10u64 {
        let t = 100 * MS + i * 200 * MS;
        // Request (100 bytes) from the client; the server's response (3000 bytes) 80 ms later
        // acknowledges it.
        c.send(t, true, cseq, sseq, ACK | PSH, 100, none);
        cseq += 100;
        c.send(t + 80 * MS, false, sseq, cseq, ACK | PSH, 3000, none);
        sseq += 3000;
        c.send(t + 80 * MS + 100 * US, true, cseq, sseq, ACK, 0, none);
    }
    let a = c.run(&Config::default());
    let conn = &a.connections[0];
    assert_eq!(conn.vantage, Vantage::NearReceiver);
    assert_eq!(conn.path_rtt, PathRtt::Series(Method::Seq, 0));
    assert_eq!(conn.path_rtt_median, Some(80 * MS));
}

/// A server-side capture whose SYN/ACK was retransmitted: the handshake ACK's TSecr echoes the
/// first SYN/ACK, so the second leg starts there (986.3 ms, not the 583.8 ms from the last).
#[test]
fn a_retransmitted_syn_ack_is_resolved_by_the_ts_echo_of_the_handshake_ack() {
    let mut c = Conv::new();
    c.send(0, true, 1, 0, SYN, 0, |t| t.ts = Some((10, 0)))
        .send(100 * US, false, 100, 2, SYNACK, 0, |t| {
            t.ts = Some((5000, 10))
        })
        .send(402_600 * US, false, 100, 2, SYNACK, 0, |t| {
            t.ts = Some((5402, 10))
        })
        .send(986_400 * US, true, 2, 101, ACK, 0, |t| {
            t.ts = Some((996, 5000))
        });
    let a = c.run(&Config::default());
    let conn = &a.connections[0];
    assert!(!conn.handshake_ambiguous);
    assert_eq!(conn.handshake_rtt, Some(100 * US + 986_300 * US));
    let syn: Vec<_> = rows(&a)
        .into_iter()
        .filter(|r| r.0 == Method::Syn)
        .collect();
    assert_eq!(syn[1], (Method::Syn, 1, 986_300 * US, false, 100, 101));
    assert_eq!(
        a.samples.ref_frame[a
            .samples
            .method
            .iter()
            .rposition(|&m| m == Method::Syn)
            .unwrap()],
        2
    );

    // Without timestamps nothing tells which SYN/ACK was answered: ambiguous, no value.
    let mut c = Conv::new();
    c.send(0, true, 1, 0, SYN, 0, none)
        .send(100 * US, false, 100, 2, SYNACK, 0, none)
        .send(402_600 * US, false, 100, 2, SYNACK, 0, none)
        .send(986_400 * US, true, 2, 101, ACK, 0, none);
    let conn = c.run(&Config::default()).connections[0].clone();
    assert!(conn.handshake_ambiguous);
    assert_eq!(conn.handshake_rtt, None);
}

#[test]
fn a_retransmitted_syn_is_resolved_by_the_syn_acks_ts_echo() {
    let mut c = Conv::new();
    c.send(0, true, 1, 0, SYN, 0, |t| t.ts = Some((10, 0)))
        .send(SEC, true, 1, 0, SYN, 0, |t| t.ts = Some((1010, 0)))
        .send(SEC + 80 * MS, false, 100, 2, SYNACK, 0, |t| {
            t.ts = Some((7, 1010))
        })
        .send(SEC + 81 * MS, true, 2, 101, ACK, 0, |t| {
            t.ts = Some((1091, 7))
        });
    let a = c.run(&Config::default());
    assert_eq!(rows(&a)[0], (Method::Syn, 0, 80 * MS, false, 1, 2));
    assert_eq!(a.connections[0].handshake_rtt, Some(81 * MS));
    assert!(!a.connections[0].handshake_ambiguous);
}

#[test]
fn garbage_frames_are_counted_as_malformed_and_never_panic() {
    let mut c = Conv::new();
    client_side_transfer(&mut c, 1);
    let good = ipv4_tcp(&TcpSpec::default());
    let mut bad_ihl = eth(0x0800, &good);
    bad_ihl[14] = 0x43;
    let mut bad_off = eth(0x0800, &good);
    bad_off[14 + 20 + 12] = 0x10;
    c.p.packet(T0 + SEC, &bad_ihl)
        .packet(T0 + SEC, &bad_off)
        .packet(T0 + SEC, &[0xff; 7])
        .packet(T0 + SEC, &eth(0x0806, &[0; 28]));
    let a = c.run(&Config::default());
    assert_eq!(a.counters.malformed, 3);
    assert_eq!(a.counters.not_tcp, 1);
    assert_eq!(rows(&a).len(), 3);
}

#[test]
fn a_file_damaged_mid_way_keeps_the_samples_before_the_damage() {
    let mut c = Conv::new();
    client_side_transfer(&mut c, 1);
    let before = c.p.bytes.len();
    c.send(300 * MS, true, 2001, 5001, ACK, 1000, none);
    let mut bytes = c.p.bytes[..before + 30].to_vec();
    bytes.extend_from_slice(&[]);
    let a = analyze_bytes(&bytes, &Config::default()).unwrap();
    assert_eq!(rows(&a).len(), 3);
    let d = a.damage().unwrap();
    assert_eq!((d.packet, d.offset), (7, before as u64));
}

#[test]
fn a_pcapng_with_mixed_snaplens_and_nanosecond_interfaces_is_read_whole() {
    let mut plain = Conv::new();
    client_side_transfer(&mut plain, 1);
    let want = rows(&plain.run(&Config::default()));
    // Re-write the same frames into a pcapng: odd frames on a µs interface with snaplen 96,
    // even frames on a ns interface with snaplen 65535.
    let mut g = PcapNg::default();
    g.section()
        .interface(1, 96, None)
        .interface(1, 65535, Some(9));
    let mut frames = Vec::new();
    reader::read_frames(&plain.p.bytes, |f| frames.push((f.ts_ns, f.data.to_vec()))).unwrap();
    for (i, (ts, data)) in frames.iter().enumerate() {
        if i % 2 == 0 {
            g.packet(0, *ts as u64 / 1000, data, 96);
        } else {
            g.packet(1, *ts as u64, data, 65535);
        }
    }
    let a = analyze_bytes(&g.bytes, &Config::default()).unwrap();
    assert_eq!(rows(&a), want);
    assert_eq!(a.read.snaplens, vec![96, 65535]);
}

#[test]
fn hop_estimates_use_the_nearest_common_initial_ttl() {
    assert_eq!(track::hops_from_ttl(64), Some(0));
    assert_eq!(track::hops_from_ttl(52), Some(12));
    assert_eq!(track::hops_from_ttl(117), Some(11));
    assert_eq!(track::hops_from_ttl(250), Some(5));
    assert_eq!(track::hops_from_ttl(30), Some(2));
    assert_eq!(
        track::hops_from_ttl(0),
        None,
        "anonymised traces zero the TTL"
    );
}

#[test]
fn serial_number_comparison_wraps() {
    use track::{seq_gt, seq_lt};
    assert!(seq_lt(u32::MAX - 10, 5));
    assert!(seq_gt(5, u32::MAX - 10));
    assert!(!seq_lt(7, 7));
}

// ---- real captures ----

fn shared_captures() -> Option<Vec<std::path::PathBuf>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/captures");
    let Ok(rd) = std::fs::read_dir(&dir) else {
        eprintln!(
            "SKIP: {} is missing; real-capture tests not run",
            dir.display()
        );
        return None;
    };
    let mut v: Vec<_> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
        .collect();
    v.sort();
    Some(v)
}

fn real(name: &str) -> Option<Analysis> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/captures")
        .join(name);
    if !p.exists() {
        eprintln!("SKIP: {} is missing", p.display());
        return None;
    }
    Some(analyze_file(&p, &Config::default()).expect("real capture reads"))
}

#[test]
fn every_real_capture_parses_completely_without_panic() {
    let Some(files) = shared_captures() else {
        return;
    };
    assert!(
        files.len() >= 20,
        "expected the 20 development captures, found {}",
        files.len()
    );
    for f in files {
        let a =
            analyze_file(&f, &Config::default()).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert_eq!(a.damage(), None, "{}", f.display());
        assert!(a.counters.tcp > 0, "{}: no TCP found", f.display());
        assert_eq!(a.counters.malformed, 0, "{}", f.display());
        assert!(
            a.samples.rtt.iter().all(|&r| r < 60 * SEC),
            "{}",
            f.display()
        );
        // Every truncation of the file parses too, keeping a prefix.
        let bytes = std::fs::read(&f).unwrap();
        for cut in [bytes.len() / 3, bytes.len() / 2 + 7, bytes.len() - 1] {
            let part = analyze_bytes(&bytes[..cut], &Config::default()).unwrap();
            assert!(part.damage().is_some(), "{} cut at {cut}", f.display());
            assert!(part.samples.len() <= a.samples.len() + 1);
        }
    }
}

/// Facts from MANIFEST.md (tshark-measured): connection counts, handshake RTTs, vantage.
#[test]
fn real_captures_agree_with_the_manifest() {
    // (file, TCP connections, largest connection's handshake RTT ms, vantage of the largest)
    let cases: &[(&str, usize, f64, Vantage)] = &[
        ("ndpi_bot-vlan.pcap", 1, 106.5, Vantage::NearSender),
        (
            "wireshark-wiki_tcp-ethereal-file1.pcap",
            1,
            115.1,
            Vantage::NearSender,
        ),
        (
            "ndpi_exe_download-2020.pcap",
            1,
            319.5,
            Vantage::NearReceiver,
        ),
        (
            "suricata-verify_http-body-hook-01-ipv6.pcap",
            1,
            15.0,
            Vantage::NearReceiver,
        ),
        (
            "ndpi_yandex_direct-2023.pcapng",
            1,
            7.4,
            Vantage::NearReceiver,
        ),
        ("zeek-tcprs_rto005.pcap", 1, 60.4, Vantage::NearReceiver),
        ("ndpi_zoom2-2023.pcap", 1, 174.8, Vantage::NearSender),
        ("zeek-tcprs_fast012.pcap", 1, 30.4, Vantage::NearSender),
    ];
    for &(name, conns, hs_ms, vantage) in cases {
        let Some(a) = real(name) else { return };
        assert_eq!(a.connections.len(), conns, "{name}");
        let big = a
            .connections
            .iter()
            .max_by_key(|c| c.packets[0] + c.packets[1])
            .unwrap();
        let hs = big
            .handshake_rtt
            .map(|h| h as f64 / 1e6)
            .unwrap_or(f64::NAN);
        assert!(
            (hs - hs_ms).abs() < 0.15,
            "{name}: handshake {hs} ms vs manifest {hs_ms}"
        );
        assert_eq!(big.vantage, vantage, "{name}");
    }
    // VLAN on every frame, pcapng with 126 interfaces and mixed snaplens, SLL: all TCP found.
    let Some(a) = real("zeek_ldap-modify-request-mixedsnaplen.pcapng") else {
        return;
    };
    assert_eq!(a.counters.tcp, 17);
    assert!(a.read.snaplens.len() >= 4);
    let Some(a) = real("ndpi_KakaoTalk_talk-sll.pcap") else {
        return;
    };
    assert_eq!((a.counters.tcp, a.counters.frames), (166, 3203));
    let Some(a) = real("ndpi_reddit-ipv6-2023.pcap") else {
        return;
    };
    assert_eq!(a.connections.len(), 60);
}

#[test]
fn real_sender_side_ack_rtts_match_the_manifest_median() {
    // ackRTT medians (ms) at sender-side captures, MANIFEST.md; our seq samples of the data
    // direction are the same measurement.
    for (name, med_ms, tol) in [
        ("ndpi_bot-vlan.pcap", 106.1, 0.5),
        ("ndpi_zoom2-2023.pcap", 174.3, 2.0),
        ("wireshark-wiki_tcp-ethereal-file1.pcap", 255.1, 10.0),
    ] {
        let Some(a) = real(name) else { return };
        let big = a
            .connections
            .iter()
            .max_by_key(|c| c.packets[0] + c.packets[1])
            .unwrap();
        let m = big
            .path_rtt_median
            .map(|v| v as f64 / 1e6)
            .unwrap_or(f64::NAN);
        assert!((m - med_ms).abs() < tol, "{name}: {m} vs {med_ms}");
    }
}

#[test]
fn state_is_bounded_by_live_connections_not_by_capture_length() {
    // 30 000 short connections, one starting every second, each leaving one segment unacked
    // (so per-segment state exists to be released): the tracker must hold only those active in
    // the last `idle_split` (300 s) plus one sweep interval, not all 30 000.
    let mut tracker = track::Tracker::new(Config::default());
    let mut n = 0;
    let mut max_live = 0;
    for i in 0..30_000u32 {
        let t = i64::from(i) * SEC as i64;
        let base = TcpSpec {
            sport: 1024 + (i % 60_000) as u16,
            src4: [10, 1, (i >> 8) as u8, i as u8],
            ..TcpSpec::default()
        };
        for (dt, s) in [
            (
                0,
                TcpSpec {
                    flags: SYN,
                    seq: 1,
                    ..base.clone()
                },
            ),
            (
                MS as i64,
                TcpSpec {
                    flags: SYNACK,
                    seq: 9,
                    ack: 2,
                    ..base.reversed()
                },
            ),
            (
                2 * MS as i64,
                TcpSpec {
                    flags: ACK,
                    seq: 2,
                    ack: 10,
                    payload: 100,
                    ..base.clone()
                },
            ),
        ] {
            n += 1;
            let frame = eth(0x0800, &ipv4_tcp(&s));
            tracker.on_frame(&reader::Frame {
                number: n,
                ts_ns: T0 as i64 + t + dt,
                linktype: 1,
                data: &frame,
                orig_len: frame.len() as u32,
            });
        }
        max_live = max_live.max(tracker.live_connections());
    }
    // Released once idle for 300 s and 4096 frames; swept every 75 s of capture time (and at
    // least 1024 frames): at most ~(4096 + 1024) / 3 connections of 3 frames each stay live.
    assert!(
        max_live <= (4096 + 1024) / 3 + 2,
        "{max_live} live connections"
    );
    assert!(tracker.live_connections() < 30_000);
    assert!(tracker.held_state() < 30_000);
    let (samples, conns, _, _) = tracker.finish();
    assert_eq!(conns.len(), 30_000);
    assert_eq!(samples.len(), 60_000, "two handshake legs per connection");
}

// ---- robustness: arbitrary and mutated input never panics ----

mod robustness {
    use super::*;
    use proptest::prelude::*;

    fn synthetic() -> Vec<u8> {
        let mut c = Conv::on(linktype::ETHERNET, true, vec![0x8100], None);
        client_side_transfer(&mut c, 7);
        loss_with_sack(&mut c, true);
        c.p.bytes.clone()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn arbitrary_bytes_are_a_typed_error_or_an_analysis(data in proptest::collection::vec(any::<u8>(), 0..600)) {
            let _ = analyze_bytes(&data, &Config::default());
        }

        #[test]
        fn arbitrary_frames_of_every_link_type_decode_or_are_skipped(lt in prop::sample::select(vec![0u32, 1, 12, 14, 101, 108, 113, 228, 229, 276, 9999]), frame in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = wire::decode(lt, &frame);
        }

        #[test]
        fn a_capture_with_corrupted_bytes_never_panics(flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..40), cut in any::<prop::sample::Index>()) {
            let mut data = synthetic();
            for (i, b) in flips {
                let at = i.index(data.len());
                data[at] ^= b;
            }
            let end = cut.index(data.len() + 1);
            if let Ok(a) = analyze_bytes(&data[..end], &Config { include_ambiguous: true, ..Config::default() }) {
                prop_assert!(a.samples.frame.iter().all(|&f| f <= a.read.frames));
                prop_assert_eq!(a.counters.frames, a.read.frames);
            }
        }

        #[test]
        fn a_pcapng_with_corrupted_bytes_never_panics(flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..20)) {
            let mut g = PcapNg::default();
            g.section().interface(1, 96, Some(9)).interface(113, 65535, Some(0x80 | 10));
            let f = eth(0x0800, &ipv4_tcp(&TcpSpec { payload: 30, ts: Some((1, 2)), ..TcpSpec::default() }));
            for i in 0..10u64 {
                g.packet((i % 2) as u32, i * 1000, &f, 96);
            }
            let mut data = g.bytes.clone();
            for (i, b) in flips {
                let at = i.index(data.len());
                data[at] ^= b;
            }
            let _ = analyze_bytes(&data, &Config::default());
        }
    }
}

#[test]
fn streaming_in_batches_gives_the_same_samples_and_summaries_as_one_read() {
    let mut c = Conv::new();
    client_side_transfer(&mut c, 1);
    for i in 0..200u32 {
        c.send(
            300 * MS + u64::from(i) * MS,
            true,
            2001 + i * 100,
            5001,
            ACK,
            100,
            none,
        )
        .send(
            350 * MS + u64::from(i) * MS,
            false,
            5001,
            2101 + i * 100,
            ACK,
            0,
            none,
        );
    }
    let whole = c.run(&Config::default());
    let dir = std::env::temp_dir().join(format!("rttlab-stream-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.pcap");
    std::fs::write(&path, &c.p.bytes).unwrap();
    let mut stream = Stream::open(&path, &Config::default()).unwrap();
    let mut rtts = Vec::new();
    while let Some(batch) = stream.next_batch(7).unwrap() {
        rtts.extend(batch.rtt);
    }
    let rest = stream.finish();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(rtts, whole.samples.rtt);
    assert!(rest.samples.is_empty());
    assert_eq!(rest.connections, whole.connections);
    assert_eq!(rest.counters, whole.counters);
}

// ---- retransmissions and the evidence that they were needed (super::loss) ----

/// Client-side capture: handshake (ISN 0 / 5000), segment A [1, 1001) at 101 ms ACKed at
/// 201 ms, segment B [1001, 2001) sent at 150 ms and resent at `resend` ms. `ts`: timestamps
/// on every packet (TSval = send time in ms), `ack_b`: the ACK that finally covers B, sent at
/// (ms, TSecr, SACK blocks).
fn lost_b(resend: u64, ts: bool, ack_b: (u64, u32, Vec<(u32, u32)>)) -> Analysis {
    let mut c = Conv::new();
    let at = move |ms: u64, ecr: u32| move |t: &mut TcpSpec| t.ts = ts.then_some((ms as u32, ecr));
    c.send(0, true, 0, 0, SYN, 0, at(0, 0))
        .send(50 * MS, false, 5000, 1, SYNACK, 0, at(50, 0))
        .send(100 * MS, true, 1, 5001, ACK, 0, at(100, 50))
        .send(101 * MS, true, 1, 5001, ACK, 1000, at(101, 50))
        .send(150 * MS, true, 1001, 5001, ACK, 1000, at(150, 50))
        .send(201 * MS, false, 5001, 1001, ACK, 0, at(201, 101))
        .send(resend * MS, true, 1001, 5001, ACK, 1000, at(resend, 201));
    let (ms, ecr, sack) = ack_b;
    c.send(ms * MS, false, 5001, 2001, ACK, 0, |t| {
        t.ts = ts.then_some((ms as u32, ecr));
        t.sack = sack;
    });
    c.run(&Config::default())
}

#[test]
fn a_resend_never_acknowledged_before_is_presumed_lost_with_its_timer_started_at_the_last_ack() {
    let a = lost_b(1200, false, (1300, 0, vec![]));
    let [r] = a.retransmissions[..] else {
        panic!("{:?}", a.retransmissions)
    };
    assert_eq!(
        (r.dir, r.seq_start, r.seq_end, r.attempt, r.dupacks),
        (0, 1001, 2001, 1, 0)
    );
    assert_eq!(
        (r.sent, r.resent, r.frame, r.ref_frame),
        (Some(150 * MS as i64), 1200 * MS as i64, 7, 5)
    );
    // B was outstanding when A's ACK came at 201 ms: the timer restarted then (RFC 6298 §5.3).
    assert_eq!(r.timer_start, Some(201 * MS as i64));
    assert_eq!(r.evidence, Evidence::Unacked);
    assert!(r.evidence.needed());
}

#[test]
fn the_ts_echo_of_the_first_ack_covering_a_resend_says_which_transmission_arrived() {
    let lost = lost_b(1200, true, (1300, 1200, vec![]));
    assert_eq!(lost.retransmissions[0].evidence, Evidence::TsResend);
    assert!(lost.retransmissions[0].evidence.needed());
    // The ACK echoes B's original TSval (150): the original arrived, the resend was spurious
    // (RFC 3522's Eifel detection).
    let spurious = lost_b(1200, true, (1300, 150, vec![]));
    assert_eq!(spurious.retransmissions[0].evidence, Evidence::TsOriginal);
    assert!(!spurious.retransmissions[0].evidence.needed());
}

#[test]
fn a_dsack_of_the_resent_range_marks_the_resend_unneeded() {
    let a = lost_b(1200, false, (1300, 0, vec![(1001, 2001)]));
    assert_eq!(a.retransmissions[0].evidence, Evidence::Dsack);
}

#[test]
fn data_acknowledged_at_the_capture_point_before_its_resend_was_not_lost() {
    // B's ACK passes the capture point at 1100 ms (it was lost beyond it), the resend at 1200.
    let mut c = Conv::new();
    c.send(0, true, 1, 5001, ACK, 1000, none)
        .send(100 * MS, false, 5001, 1001, ACK, 0, none)
        .send(200 * MS, true, 1, 5001, ACK, 1000, none);
    let a = c.run(&Config::default());
    let [r] = a.retransmissions[..] else { panic!() };
    assert_eq!(
        (r.evidence, r.sent, r.timer_start),
        (Evidence::Acked, None, None)
    );
}

#[test]
fn a_resend_of_a_resend_is_a_second_attempt_timed_from_the_first_resend_and_dupacks_are_counted() {
    let mut c = Conv::new();
    c.send(0, true, 1, 5001, ACK, 1000, none)
        .send(10 * MS, true, 1001, 5001, ACK, 1000, none);
    for i in 0..3 {
        c.send((100 + i) * MS, false, 5001, 1, ACK, 0, none);
    }
    c.send(200 * MS, true, 1, 5001, ACK, 1000, none).send(
        1200 * MS,
        true,
        1,
        5001,
        ACK,
        1000,
        none,
    );
    let a = c.run(&Config::default());
    let [r1, r2] = a.retransmissions[..] else {
        panic!("{:?}", a.retransmissions)
    };
    // No ACK ever advanced: the first resend's timer started at the original send.
    assert_eq!(
        (r1.attempt, r1.sent, r1.timer_start, r1.dupacks),
        (1, Some(0), Some(0), 3)
    );
    assert_eq!(
        (r2.attempt, r2.sent, r2.ref_frame),
        (2, Some(200 * MS as i64), 6)
    );
}

// ---- reading on several threads ----

/// Every sample (in batches of `rows`, each of exactly `rows` but the last) and the final
/// analysis of a stream on `threads` threads; `mapped` false reads through `read` as a pipe is.
fn stream_all(
    path: &std::path::Path,
    threads: usize,
    mapped: bool,
    rows: usize,
    cfg: &Config,
) -> Result<(Samples, Analysis), CaptureError> {
    stream_all_recycling(path, threads, mapped, rows, cfg, false)
}

/// [`stream_all`], handing each batch back to the stream for reuse once read when `recycle`.
fn stream_all_recycling(
    path: &std::path::Path,
    threads: usize,
    mapped: bool,
    rows: usize,
    cfg: &Config,
    recycle: bool,
) -> Result<(Samples, Analysis), CaptureError> {
    let mut stream = Stream::open_with(path, cfg, threads, mapped)?;
    let mut all = Samples::default();
    let mut short = false;
    while let Some(b) = stream.next_batch(rows)? {
        assert!(!short, "only the last batch may be short");
        short = b.len() < rows;
        for i in 0..b.len() {
            all.push(
                b.conn[i],
                b.dir[i],
                b.time[i],
                b.rtt[i],
                b.method[i],
                b.ambiguous[i],
                b.idle_echo[i],
                (b.seq_start[i], b.seq_end[i]),
                b.frame[i],
                b.ref_frame[i],
            );
        }
        if recycle {
            stream.recycle(b);
        }
    }
    Ok((all, stream.finish()))
}

/// One mapped thread against the two-thread pipeline (reading and decoding on a second thread),
/// 3–4 sharded threads, and reading through `read` (as a pipe is) on one and two threads.
fn assert_same(path: &std::path::Path, rows: usize) {
    // Short idle splits too: connections are released by the sweep (whose schedule every
    // shard must keep) and port pairs reused.
    for cfg in [
        Config {
            include_ambiguous: true,
            ..Config::default()
        },
        Config {
            idle_split: 20 * MS,
            ..Config::default()
        },
    ] {
        let (s1, a1) = stream_all(path, 1, true, rows, &cfg).unwrap();
        // Batches handed back for reuse (as the writers do) change nothing either.
        for (threads, mapped, recycle) in [
            (2, true, false),
            (3, true, false),
            (4, true, false),
            (1, false, false),
            (2, false, false),
            (1, true, true),
            (2, true, true),
            (3, true, true),
            (2, false, true),
        ] {
            let (s2, a2) =
                stream_all_recycling(path, threads, mapped, rows, &cfg, recycle).unwrap();
            let name = format!(
                "{} threads={threads} mapped={mapped} recycle={recycle} idle_split={}",
                path.display(),
                cfg.idle_split
            );
            assert_eq!(s1, s2, "{name}: samples");
            assert_eq!(a1.connections, a2.connections, "{name}: connections");
            assert_eq!(a1.counters, a2.counters, "{name}: counters");
            assert_eq!(
                a1.retransmissions, a2.retransmissions,
                "{name}: retransmissions"
            );
            assert_eq!(a1.read, a2.read, "{name}: read statistics");
            assert_eq!(a1.start_ns, a2.start_ns, "{name}: start");
        }
        // The whole-file calls agree with the stream, and so does a drained stream (summaries
        // only), after a first batch or none.
        let whole = analyze_file_threads(path, &cfg, 2).unwrap();
        assert_eq!((&whole.samples, &whole.connections), (&s1, &a1.connections));
        for (threads, mapped) in [(1, true), (2, true), (3, true), (1, false), (2, false)] {
            for first in [0, rows] {
                let mut stream = Stream::open_with(path, &cfg, threads, mapped).unwrap();
                let taken = if first > 0 {
                    stream.next_batch(first).unwrap().map_or(0, |b| b.len())
                } else {
                    0
                };
                let skipped = stream.drain().unwrap();
                assert!(stream.next_batch(10).unwrap().is_none());
                let a = stream.finish();
                let name = format!(
                    "{} drained threads={threads} mapped={mapped}",
                    path.display()
                );
                assert_eq!(taken as u64 + skipped, s1.len() as u64, "{name}");
                assert!(a.samples.is_empty(), "{name}");
                assert_eq!(
                    (&a.connections, &a.counters, &a.retransmissions),
                    (&a1.connections, &a1.counters, &a1.retransmissions),
                    "{name}"
                );
            }
        }
    }
}

#[test]
fn one_file_on_several_threads_gives_every_result_of_one_thread() {
    // Many connections, more frames than one message of the reading thread, loss and SACK,
    // then damage at the end: everything must come out as one thread gives it.
    let mut c = Conv::new();
    for k in 0..40u32 {
        client_side_transfer(&mut c, 1 + k * 7919);
        loss_with_sack(&mut c, k % 2 == 0);
        for i in 0..300u32 {
            c.send(
                400 * MS + u64::from(i) * MS,
                true,
                2001 + i * 100,
                5001,
                ACK,
                100,
                none,
            )
            .send(
                450 * MS + u64::from(i) * MS,
                false,
                5001,
                2101 + i * 100,
                ACK,
                0,
                none,
            );
        }
    }
    let dir = std::env::temp_dir().join(format!("rttlab-threaded-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.pcap");
    std::fs::write(&path, &c.p.bytes).unwrap();
    assert_same(&path, 1 << 16);
    assert_same(&path, 7);
    let cut = dir.join("cut.pcap");
    std::fs::write(&cut, &c.p.bytes[..c.p.bytes.len() - 30]).unwrap();
    assert_same(&cut, 100);
    let cfg = Config::default();
    assert!(stream_all(&cut, 2, true, 100, &cfg)
        .unwrap()
        .1
        .damage()
        .is_some());
    let junk = dir.join("junk.pcap");
    std::fs::write(&junk, b"not a capture at all").unwrap();
    for (threads, mapped) in [(2, true), (2, false), (1, true)] {
        assert!(matches!(
            stream_all(&junk, threads, mapped, 10, &cfg),
            Err(CaptureError::NotACapture { .. })
        ));
    }
    let empty = dir.join("empty.pcap");
    std::fs::write(&empty, b"").unwrap();
    assert!(matches!(
        stream_all(&empty, 2, true, 10, &cfg),
        Err(CaptureError::Empty)
    ));
    std::fs::remove_dir_all(&dir).unwrap();
    if let Some(files) = shared_captures() {
        for f in files {
            assert_same(&f, 1 << 10);
        }
    }
}

#[test]
fn a_pcapng_block_longer_than_a_mapped_slice_reads_alike_on_every_thread_count() {
    // The mapped reader parses 1 MB slices and doubles one that holds no whole block: a 3 MB
    // frame between a segment and its ACK must neither lose nor repeat a frame, whole or cut.
    let seg = |s: TcpSpec| eth(0x0800, &ipv4_tcp(&s));
    let data = seg(TcpSpec {
        flags: ACK | PSH,
        payload: 100,
        ..TcpSpec::default()
    });
    let ack = seg(TcpSpec {
        ack: 1100,
        ..TcpSpec::default()
    }
    .reversed());
    let big = eth(0x88b5, &vec![0xab; 3 << 20]);
    let mut g = PcapNg::default();
    g.section()
        .interface(1, 0, Some(9))
        .packet(0, T0, &data, usize::MAX)
        .packet(0, T0 + MS, &big, usize::MAX)
        .packet(0, T0 + 2 * MS, &ack, usize::MAX);
    let dir = std::env::temp_dir().join(format!("rttlab-bigblock-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.pcapng");
    std::fs::write(&path, &g.bytes).unwrap();
    let a = analyze_file_threads(&path, &Config::default(), 2).unwrap();
    assert_eq!(
        (
            a.counters.frames,
            a.counters.not_tcp,
            a.samples.rtt.as_slice(),
            a.damage()
        ),
        (3, 1, &[2 * MS][..], None)
    );
    assert_same(&path, 10);
    let cut = dir.join("cut.pcapng");
    std::fs::write(&cut, &g.bytes[..g.bytes.len() - (2 << 20)]).unwrap();
    assert_eq!(
        analyze_file_threads(&cut, &Config::default(), 2)
            .unwrap()
            .damage()
            .map(|d| d.packet),
        Some(2)
    );
    assert_same(&cut, 10);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_threaded_stream_dropped_early_stops_its_reader() {
    let mut c = Conv::new();
    for k in 0..200u32 {
        client_side_transfer(&mut c, 1 + k);
    }
    let dir = std::env::temp_dir().join(format!("rttlab-threaded-drop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.pcap");
    std::fs::write(&path, &c.p.bytes).unwrap();
    for (threads, mapped) in [(2, true), (3, true), (2, false)] {
        let mut stream = Stream::open_with(&path, &Config::default(), threads, mapped).unwrap();
        assert!(stream.next_batch(1).unwrap().is_some());
        drop(stream); // must not hang or panic
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `connections` interleaved connections on reused port pairs (`epochs` incarnations each),
/// mixing IPv4 and IPv6 (with and without extension headers), VLAN-tagged and untagged frames
/// of one connection, timestamps, a retransmission, and frames that are no TCP segment.
fn many_connections(connections: u16, epochs: u32) -> Vec<u8> {
    let mut c = Conv::new();
    for epoch in 0..epochs {
        let base = u64::from(epoch) * 10 * SEC;
        for step in 0..14u32 {
            for k in 0..connections {
                let t = base + u64::from(step) * 10 * MS + u64::from(k) * 37 * US;
                c.base.sport = 40000 + k;
                c.base.src4 = [10, 0, (k % 3) as u8, 1];
                c.v6_exts = match k % 4 {
                    1 => Some(vec![]),
                    3 => Some(vec![(0, 8)]),
                    _ => None,
                };
                c.vlans = if (u32::from(k) + step) % 5 == 0 {
                    vec![0x8100]
                } else {
                    vec![]
                };
                let s = u32::from(k) * 100_000 + epoch * 7;
                let ts =
                    |t: &mut TcpSpec| t.ts = (k % 2 == 0).then_some((step * 10 + 1, step * 10));
                match step {
                    0 => c.send(t, true, s, 0, SYN, 0, |t| t.mss = Some(1460)),
                    1 => c.send(t, false, 5000, s + 1, SYNACK, 0, ts),
                    2 => c.send(t, true, s + 1, 5001, ACK, 0, ts),
                    // Segment 4 is resent at step 9 (one retransmission per connection).
                    3..=8 => c.send(t, true, s + 1 + (step - 3) * 100, 5001, ACK | PSH, 100, ts),
                    9 => c.send(t, true, s + 1 + 100, 5001, ACK | PSH, 100, ts),
                    10 | 11 => c.send(t, false, 5001, s + 1 + (step - 9) * 300, ACK, 0, ts),
                    12 => c.send(t, true, s + 601, 5001, FIN | ACK, 0, ts),
                    _ => c.send(t, false, 5001, s + 602, FIN | ACK, 0, ts),
                };
                if k % 17 == 0 {
                    // Junk, UDP, and TCP cut after its ports (the fast route reads a 4-tuple,
                    // decode finds it malformed): each counted once, by whichever worker.
                    c.p.packet(T0 + t + 1, &[0xff; 42]);
                    let ip = |proto: u8| {
                        vec![
                            0x45,
                            0,
                            0,
                            24,
                            0,
                            0,
                            0,
                            0,
                            64,
                            proto,
                            0,
                            0,
                            10,
                            0,
                            0,
                            1,
                            10,
                            0,
                            0,
                            2,
                            0x9c,
                            0x40 + k as u8,
                            0,
                            80,
                        ]
                    };
                    c.p.packet(T0 + t + 2, &eth(0x0800, &ip(17)));
                    c.p.packet(T0 + t + 3, &eth(0x0800, &ip(6)));
                }
            }
        }
    }
    c.p.bytes.clone()
}

#[test]
fn connections_sharded_across_threads_come_out_numbered_and_ordered_as_one_thread_gives_them() {
    let bytes = many_connections(60, 3);
    let dir = std::env::temp_dir().join(format!("rttlab-shards-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("many.pcap");
    std::fs::write(&path, &bytes).unwrap();
    let one = analyze_bytes(&bytes, &Config::default()).unwrap();
    // The capture is what the test means: 180 connections, every kind of frame, samples.
    assert_eq!(one.connections.len(), 180);
    assert!(
        one.counters.not_tcp > 0 && one.counters.malformed > 0,
        "{:?}",
        one.counters
    );
    assert!(
        one.retransmissions.len() == 180 && one.samples.len() > 700,
        "{} {}",
        one.retransmissions.len(),
        one.samples.len()
    );
    assert!(
        one.connections.iter().any(|c| c.a.is_ipv6())
            && one.connections.iter().any(|c| c.a.is_ipv4())
    );
    assert_same(&path, 1 << 16);
    assert_same(&path, 33);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_connection_released_by_the_sweep_is_released_at_the_same_frame_on_every_thread() {
    // Connection 0 sends a segment, then 6,000 frames of 40 other connections pass (more than
    // the sweep's idle frame count) over 600 ms, then its ACK comes. With a 20 ms idle split the
    // sweep has released connection 0 by then: no sample; with the default split, one. Each
    // shard's tracker must sweep where one tracker sweeps, or the counts differ.
    let mut c = Conv::new();
    c.base.sport = 50000;
    c.send(0, true, 1, 5001, ACK | PSH, 100, none);
    for i in 0..6000u64 {
        c.base.sport = 40000 + (i % 40) as u16;
        let s = 1 + (i / 40) as u32 * 100;
        if i % 2 == 0 {
            c.send(MS + i * 100 * US, true, s, 5001, ACK | PSH, 100, none);
        } else {
            c.send(MS + i * 100 * US, false, 5001, s + 100, ACK, 0, none);
        }
    }
    c.base.sport = 50000;
    c.send(700 * MS, false, 5001, 101, ACK, 0, none);
    let short = Config {
        idle_split: 20 * MS,
        ..Config::default()
    };
    let timed = |a: &Analysis| {
        (0..a.samples.len())
            .filter(|&i| a.connections[a.samples.conn[i] as usize].a_port == 50000)
            .count()
    };
    assert_eq!(
        (timed(&c.run(&Config::default())), timed(&c.run(&short))),
        (1, 0)
    );
    let dir = std::env::temp_dir().join(format!("rttlab-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("sweep.pcap");
    std::fs::write(&path, &c.p.bytes).unwrap();
    for threads in [2, 3] {
        assert_eq!(
            timed(&analyze_file_threads(&path, &short, threads).unwrap()),
            0,
            "{threads} threads"
        );
    }
    assert_same(&path, 500);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_fast_route_reads_the_four_tuple_decode_gives_or_declines() {
    let bytes = many_connections(24, 1);
    let mut routed = 0;
    let mut declined = 0;
    reader::read_frames(&bytes, |f| {
        let fast = wire::route(f.linktype, f.data);
        match (wire::decode(f.linktype, f.data), fast) {
            (Ok(seg), Some(r)) => {
                assert_eq!(
                    r,
                    (seg.src, seg.sport, seg.dst, seg.dport),
                    "frame {}",
                    f.number
                );
                routed += 1;
            }
            (_, None) => declined += 1,
            // A frame decode rejects may take any route: its owner counts it.
            (Err(_), Some(_)) => {}
        }
    })
    .unwrap();
    // Untagged IPv4 and plain IPv6 take the fast path; VLAN tags and extension headers not.
    assert!(routed > 100 && declined > 50, "{routed} {declined}");
}
