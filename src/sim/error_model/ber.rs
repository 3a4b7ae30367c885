//! Independent bit errors: a packet of b bytes survives with probability (1 − ber)^(8·b).

use super::{required, ErrorModel};
use crate::params::ParamSpec;
use crate::sim::component::{Component, Declaration};

pub const COMPONENT: Component<ErrorModel> = Component {
    decl: Declaration {
        name: "ber",
        aliases: &[],
        summary: "bit errors: a packet of b bytes is lost with probability 1 − (1 − ber)^(8·b)",
        source: "independent bit errors",
        params: &[ParamSpec::float(
            "ber",
            "required",
            0.0,
            1.0,
            "bit error rate",
        )],
        defaults: &[],
    },
    build: |a| {
        Ok(ErrorModel::Ber {
            ber: required(a, "ber")?,
        })
    },
};

/// 1 − (1 − ber)^(8·bytes), computed through ln_1p so tiny BERs keep their digits.
pub fn loss(ber: f64, bytes: u32) -> f64 {
    -(8.0 * bytes as f64 * (-ber).ln_1p()).exp_m1()
}
