//! Independent packet loss: each packet is lost with probability `per`.

use super::{required, ErrorModel};
use crate::params::ParamSpec;
use crate::sim::component::{Component, Declaration};

pub const COMPONENT: Component<ErrorModel> = Component {
    decl: Declaration {
        name: "bernoulli",
        aliases: &[],
        summary: "each packet lost independently with probability per",
        source: "independent (Bernoulli) packet loss",
        params: &[ParamSpec::float(
            "per",
            "required",
            0.0,
            1.0,
            "packet error rate",
        )],
        defaults: &[],
    },
    build: |a| {
        Ok(ErrorModel::Bernoulli {
            per: required(a, "per")?,
        })
    },
};
