//! Nodes, duplex links and static shortest-hop routes, plus the dumbbell builder.

use super::agent::Agent;
use super::link::{Channel, ChannelSpec};
use super::packet::NodeId;
use std::collections::VecDeque;

/// A duplex link between `a` and `b`: `forward` carries a→b, `reverse` b→a.
#[derive(Debug, Clone)]
pub struct LinkSpec {
    pub a: NodeId,
    pub b: NodeId,
    pub forward: ChannelSpec,
    pub reverse: ChannelSpec,
}

const NO_ROUTE: u32 = u32::MAX;

/// The built network: channels and a next-hop table (`routes[from·n + to]` = channel index).
#[derive(Debug, Clone)]
pub struct Network {
    pub n_nodes: usize,
    pub channels: Vec<Channel>,
    routes: Vec<u32>,
    /// Node agents the channels' specs asked for, in channel order.
    pub agents: Vec<Agent>,
}

impl Network {
    /// Channels are numbered in link order, forward before reverse. Routes follow the fewest hops;
    /// ties go to the channel listed first, so routing is deterministic.
    pub fn build(n_nodes: usize, links: Vec<LinkSpec>, seed: u64) -> Self {
        let mut channels = Vec::with_capacity(2 * links.len());
        let mut agents = Vec::new();
        for l in links {
            for (from, to, spec) in [(l.a, l.b, l.forward), (l.b, l.a, l.reverse)] {
                let id = channels.len() as u32;
                if let Some(a) = spec.agent {
                    agents.push(a.build(from, id));
                }
                channels.push(Channel::new(id, from, to, spec, seed));
            }
        }
        let mut out_edges: Vec<Vec<u32>> = vec![Vec::new(); n_nodes];
        for (i, c) in channels.iter().enumerate() {
            out_edges[c.from as usize].push(i as u32);
        }
        let mut routes = vec![NO_ROUTE; n_nodes * n_nodes];
        for src in 0..n_nodes {
            // BFS from src, remembering the first channel taken towards each node.
            let mut first = vec![NO_ROUTE; n_nodes];
            let mut seen = vec![false; n_nodes];
            seen[src] = true;
            let mut frontier = VecDeque::from([src]);
            while let Some(u) = frontier.pop_front() {
                for &ch in &out_edges[u] {
                    let v = channels[ch as usize].to as usize;
                    if !seen[v] {
                        seen[v] = true;
                        first[v] = if u == src { ch } else { first[u] };
                        frontier.push_back(v);
                    }
                }
            }
            routes[src * n_nodes..(src + 1) * n_nodes].copy_from_slice(&first);
        }
        Self {
            n_nodes,
            channels,
            routes,
            agents,
        }
    }

    /// The channel a packet at `from` takes towards `to`, if `to` is reachable.
    #[inline]
    pub fn next_hop(&self, from: NodeId, to: NodeId) -> Option<u32> {
        let r = self.routes[from as usize * self.n_nodes + to as usize];
        (r != NO_ROUTE).then_some(r)
    }
}

/// A dumbbell: senders 0..n, left router n, right router n+1, receivers n+2..2n+2.
#[derive(Debug, Clone)]
pub struct Dumbbell {
    pub n_nodes: usize,
    pub senders: Vec<NodeId>,
    pub receivers: Vec<NodeId>,
    pub links: Vec<LinkSpec>,
    /// Index into `links` of the bottleneck (its forward channel is 2·index).
    pub bottleneck: usize,
}

/// Access links are cloned per host pair; `sender_access.forward` runs host→router and
/// `receiver_access.forward` router→host, so "forward" is always the data direction.
pub fn dumbbell(
    n: usize,
    sender_access: &LinkSpec,
    bottleneck: LinkSpec,
    receiver_access: &LinkSpec,
) -> Dumbbell {
    let left = n as NodeId;
    let right = left + 1;
    let senders: Vec<NodeId> = (0..n as NodeId).collect();
    let receivers: Vec<NodeId> = (0..n as NodeId).map(|i| right + 1 + i).collect();
    let mut links = Vec::with_capacity(2 * n + 1);
    links.push(LinkSpec {
        a: left,
        b: right,
        ..bottleneck
    });
    for i in 0..n {
        let named = |spec: &ChannelSpec, name: String| ChannelSpec {
            name,
            ..spec.clone()
        };
        links.push(LinkSpec {
            a: senders[i],
            b: left,
            forward: named(&sender_access.forward, format!("access-s{i}>")),
            reverse: named(&sender_access.reverse, format!("access-s{i}<")),
        });
        links.push(LinkSpec {
            a: right,
            b: receivers[i],
            forward: named(&receiver_access.forward, format!("access-r{i}>")),
            reverse: named(&receiver_access.reverse, format!("access-r{i}<")),
        });
    }
    Dumbbell {
        n_nodes: 2 * n + 2,
        senders,
        receivers,
        links,
        bottleneck: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::error_model::ErrorModel;
    use crate::sim::queue::{droptail::DropTail, Queue};
    use crate::sim::units::Limit;

    fn spec(name: &str) -> ChannelSpec {
        ChannelSpec {
            bandwidth: 1_000_000,
            delay: 1,
            queue: Queue::DropTail(DropTail::new(Limit::Packets(10))),
            errors: ErrorModel::None,
            losses: vec![],
            delay_spikes: vec![],
            variation: Default::default(),
            outages: vec![],
            name: name.into(),
            monitored: false,
            agent: None,
        }
    }

    fn link() -> LinkSpec {
        LinkSpec {
            a: 0,
            b: 0,
            forward: spec("f"),
            reverse: spec("r"),
        }
    }

    #[test]
    fn dumbbell_routes_every_sender_through_the_bottleneck_to_its_receiver() {
        let d = dumbbell(3, &link(), link(), &link());
        let net = Network::build(d.n_nodes, d.links.clone(), 1);
        for i in 0..3 {
            let (s, r) = (d.senders[i], d.receivers[i]);
            let mut at = s;
            let mut hops = Vec::new();
            while at != r {
                let ch = net.next_hop(at, r).expect("reachable");
                hops.push(ch);
                at = net.channels[ch as usize].to;
            }
            assert_eq!(hops.len(), 3);
            assert_eq!(
                hops[1], 0,
                "the middle hop is the bottleneck's forward channel"
            );
            // And the ACK path uses the bottleneck's reverse channel.
            let back = net.next_hop(3 + 1, s).unwrap();
            assert_eq!(back, 1);
        }
    }

    #[test]
    fn unreachable_nodes_have_no_route() {
        let net = Network::build(
            3,
            vec![LinkSpec {
                a: 0,
                b: 1,
                ..link()
            }],
            1,
        );
        assert_eq!(net.next_hop(0, 2), None);
        assert_eq!(net.next_hop(0, 1), Some(0));
        assert_eq!(net.next_hop(1, 0), Some(1));
    }
}
