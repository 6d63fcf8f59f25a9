//! wio-rust-sdk-demo: the Antithesis Rust SDK's assertions, random numbers and lifecycle
//! call, so that a test can see each reach wio's summary: one always (true ten times), one
//! sometimes (true when a drawn number is even), one reachable, setup complete, and the
//! sum of the drawn numbers printed (a function of the seed).

use antithesis_sdk::{antithesis_init, assert_always, assert_reachable, assert_sometimes};
use antithesis_sdk::{lifecycle, random};
use serde_json::json;

fn main() {
    antithesis_init();
    let mut sum = 0u64;
    for i in 0..10u64 {
        let r = random::get_random();
        sum = sum.wrapping_add(r);
        assert_always!(i < 10, "rust: the loop stays in bounds", &json!({ "i": i }));
        assert_sometimes!(r % 2 == 0, "rust: a drawn number is even", &json!({ "r": r }));
    }
    assert_reachable!("rust: the demo ran to its end", &json!({}));
    lifecycle::setup_complete(&json!({ "sdk": "rust" }));
    println!("wio-rust-sdk-demo: sum of the drawn numbers {sum}");
}
