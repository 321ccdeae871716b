//! Holds no code: this package exists for its benchmark,
//! `cargo bench -p ad-peer-bench`, which measures easy-ml and ad_trait under the same criterion
//! ids as `cargo bench --bench suite` (see `benches/suite_easy_ml_ad_trait/`).
