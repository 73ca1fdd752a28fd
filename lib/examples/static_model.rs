//! How long the built-in semantic model takes to load and to embed, in this process:
//! `cargo run --release -p toolctl-lib --example static_model`. Prints the load time (the
//! vocabulary read into a hash map, once per process), then the median time to embed a
//! request and a tool's text.

#![allow(clippy::print_stdout)] // a benchmark prints its figures

use std::time::Instant;
use toolctl_lib::index::static_model::Model;

fn main() -> Result<(), toolctl_lib::index::static_model::Error> {
    let started = Instant::now();
    let model = Model::builtin()?;
    let load = started.elapsed();
    println!("load: {:.2} ms", load.as_secs_f64() * 1e3);
    let texts = [
        (
            "a 10-word request",
            "find cheap flights from Oslo to Paris next friday morning",
        ),
        (
            "a tool's text",
            "weatherapi forecast: Get the weather forecast for up to 14 days for a city, \
             a postcode or coordinates. q: the place, as a city name, postcode or lat,lon. \
             days: how many days, 1 to 14. lang: the language of the condition text.",
        ),
    ];
    for (what, text) in texts {
        let mut times: Vec<f64> = (0..2001)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(model.embed(std::hint::black_box(text)));
                t.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        times.sort_by(f64::total_cmp);
        println!(
            "embed {what}: {:.1} µs (median of {})",
            times[times.len() / 2],
            times.len()
        );
    }
    Ok(())
}
