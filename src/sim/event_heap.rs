//! The event queue's min-heap: 4-ary, keys apart from payloads, children picked without branches.
//!
//! Popping is the event loop's largest single cost (≈ 30 % of a 10-flow dumbbell run with
//! `std::collections::BinaryHeap`, by `perf`): a binary heap's sift-down takes one unpredictable
//! branch per level. Here a level holds four children whose keys are contiguous (64 bytes), the
//! smallest is chosen with comparisons that compile to conditional moves, and the tree is half as
//! deep; the one remaining branch per level (is the moved-down key larger than the smallest
//! child?) is almost always taken, since the moved key is the heap's last. Keys are unique (the
//! engine's (time, sequence number)), so the pop order is exactly that of any other correct heap.

/// Children per node.
const D: usize = 4;

/// A min-heap of `u128` keys with `Copy` payloads. `keys[len..]` holds at least `D` slots of
/// `u128::MAX`, so a node's last group of children can be compared as a full group.
#[derive(Debug, Clone)]
pub struct EventHeap<T: Copy> {
    keys: Vec<u128>,
    vals: Vec<T>,
}

impl<T: Copy> Default for EventHeap<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy> EventHeap<T> {
    pub fn new() -> Self {
        Self {
            keys: vec![u128::MAX; D],
            vals: Vec::new(),
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.vals.len()
    }

    /// The smallest key, if any.
    #[inline]
    pub fn peek_key(&self) -> Option<u128> {
        (!self.vals.is_empty()).then(|| self.keys[0])
    }

    #[inline]
    pub fn push(&mut self, key: u128, val: T) {
        let mut i = self.vals.len();
        self.vals.push(val);
        self.keys.push(u128::MAX); // keep D padding slots past the end
        while i > 0 {
            let p = (i - 1) / D;
            if self.keys[p] <= key {
                break;
            }
            self.keys[i] = self.keys[p];
            self.vals[i] = self.vals[p];
            i = p;
        }
        self.keys[i] = key;
        self.vals[i] = val;
    }

    /// Remove and return the entry with the smallest key.
    #[inline]
    pub fn pop(&mut self) -> Option<(u128, T)> {
        let last_val = self.vals.pop()?;
        let n = self.vals.len();
        let top = (self.keys[0], if n == 0 { last_val } else { self.vals[0] });
        let key = self.keys[n];
        self.keys.pop(); // the slot at n becomes padding: drop one of the D + 1 now past the end
        self.keys[n] = u128::MAX;
        if n == 0 {
            return Some(top);
        }
        // Sift the last entry down from the root.
        let mut i = 0;
        loop {
            let c = D * i + 1;
            if c >= n {
                break;
            }
            let k = &self.keys[c..c + D];
            let a = (k[1] < k[0]) as usize;
            let b = 2 + (k[3] < k[2]) as usize;
            let m = c + if k[b] < k[a] { b } else { a };
            if self.keys[m] >= key {
                break;
            }
            self.keys[i] = self.keys[m];
            self.vals[i] = self.vals[m];
            i = m;
        }
        self.keys[i] = key;
        self.vals[i] = last_val;
        Some(top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Component, Stream};

    #[test]
    fn pops_every_key_in_ascending_order_under_interleaved_pushes_and_pops() {
        let mut rng = Stream::new(7, Component::ChannelErrors(0));
        let mut heap = EventHeap::new();
        let mut reference = std::collections::BinaryHeap::new();
        for round in 0..20_000u64 {
            // Mostly keys above the last popped one (as in a simulation), some below, some bursts.
            let pushes = 1 + (rng.uniform() * 3.0) as u64;
            for j in 0..pushes {
                let key = ((rng.uniform() * 1000.0) as u128) << 64 | (round * 4 + j) as u128;
                heap.push(key, round as u32);
                reference.push(std::cmp::Reverse((key, round as u32)));
            }
            for _ in 0..(rng.uniform() * 3.0) as u64 {
                assert_eq!(heap.pop(), reference.pop().map(|r| r.0));
                assert_eq!(heap.len(), reference.len());
            }
        }
        while let Some(r) = reference.pop() {
            assert_eq!(heap.peek_key(), Some(r.0 .0));
            assert_eq!(heap.pop(), Some(r.0));
        }
        assert!(heap.len() == 0 && heap.pop().is_none() && heap.peek_key().is_none());
        assert!(
            heap.keys.iter().all(|&k| k == u128::MAX) && heap.keys.len() == D,
            "the padding is restored"
        );
    }
}
