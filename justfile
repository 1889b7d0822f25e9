# Everyday commands (https://github.com/casey/just). `just` lists them.

default:
    @just --list

# The main job: an example session through the example hooks.
demo:
    cargo run --release -p copse-hooks-cli -- demo

# The tests (what CI runs last).
test:
    cargo test --workspace

# Only the CLI's integration tests, or one module: `just test-cli notices::`.
test-cli filter="":
    cargo test -p copse-hooks-cli --test it -- {{filter}}

# Only the engine's integration tests, or one module: `just test-engine spine::`.
test-engine filter="":
    cargo test -p copse-hooks --test it -- {{filter}}

fmt:
    cargo fmt --all

lint:
    cargo clippy --workspace --all-targets -- -D warnings

doc:
    RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps

# Everything CI checks, in CI's order.
ci:
    .ci/run

# Benchmarks print ratios against a baseline measured in the same run.
bench:
    cargo bench --workspace

install:
    cargo install --path crates/copse-hooks-cli --locked
