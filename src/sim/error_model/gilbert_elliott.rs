//! Gilbert–Elliott bursty loss: a two-state (good/bad) Markov chain with one transition per
//! packet before the loss draw, and a loss probability per state.

use super::{required, ErrorModel};
use crate::params::ParamSpec;
use crate::sim::component::{Component, Declaration};

pub const COMPONENT: Component<ErrorModel> = Component {
    decl: Declaration {
        name: "gilbert-elliott",
        aliases: &[],
        summary: "two-state Markov chain, one transition per packet before the loss draw",
        source: "Gilbert 1960, Elliott 1963",
        params: &[
            ParamSpec::float(
                "p_gb",
                "required",
                0.0,
                1.0,
                "good → bad transition probability per packet",
            ),
            ParamSpec::float(
                "p_bg",
                "required",
                0.0,
                1.0,
                "bad → good transition probability per packet",
            ),
            ParamSpec::float(
                "loss_good",
                "0",
                0.0,
                1.0,
                "loss probability in the good state",
            ),
            ParamSpec::float(
                "loss_bad",
                "1",
                0.0,
                1.0,
                "loss probability in the bad state",
            ),
        ],
        defaults: &[],
    },
    build: |a| {
        Ok(ErrorModel::GilbertElliott {
            p_gb: required(a, "p_gb")?,
            p_bg: required(a, "p_bg")?,
            loss_good: a.float("loss_good")?,
            loss_bad: a.float("loss_bad")?,
            bad: false,
        })
    },
};

/// The stationary loss rate: π_bad = p_gb / (p_gb + p_bg), loss = (1 − π_bad)·loss_good + π_bad·loss_bad.
pub fn mean_loss(p_gb: f64, p_bg: f64, loss_good: f64, loss_bad: f64) -> f64 {
    let pi_bad = if p_gb + p_bg > 0.0 {
        p_gb / (p_gb + p_bg)
    } else {
        0.0
    };
    (1.0 - pi_bad) * loss_good + pi_bad * loss_bad
}
