//! Reading the files users give: RTT series (this module); captures live in `capture`.

pub mod series;
