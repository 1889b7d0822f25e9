//! Link options for the `copse-hooks` binary that make each process start faster.
//!
//! Every shim call is a fresh process that an agent spawns, so process start-up is most
//! of what the shim costs (see `benches/shim.rs`). On Linux with glibc two link options
//! cut it, measured in one run on the 2-core CI machine (median of 190 alternated
//! `sh -c 'copse-hooks shim …'` calls with no matching hook, together with the release
//! profile's LTO): 1.61× → 1.46× `sh -c /bin/true`.
//!
//! - `-z pack-relative-relocs` (DT_RELR): the binary is position-independent and has
//!   about 27,000 relative relocations; as RELA entries they are 650 KiB that the loader
//!   reads and applies at every start, as RELR 8 KiB. The linker emits DT_RELR only when
//!   the C library it links against supports it (glibc 2.36), so an older system gets
//!   the ordinary table.
//! - The unwinder linked in statically (`libgcc_eh`, the same unwinder `libgcc_s.so`
//!   carries) instead of `libgcc_s.so`: one shared object less to load, and no
//!   `libgcc_s` constructor, which probes the CPU with `cpuid` (an exit to the
//!   hypervisor on a virtual machine) at every start. Panics still unwind (the shim's
//!   fail-closed answer on an internal error relies on it, and a test checks it).
//!
//! Only the binary gets these (`rustc-link-arg-bins`), and only for a glibc Linux target
//! without `crt-static` (which already links the unwinder statically).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let glibc_linux = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    let crt_static = var("CARGO_CFG_TARGET_FEATURE")
        .split(',')
        .any(|f| f == "crt-static");
    if !glibc_linux || crt_static {
        return;
    }
    println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    // Whole-archive, so every unwinder symbol std needs is defined here and the linker
    // (which rustc runs with --as-needed) drops libgcc_s from the binary's needs.
    println!("cargo:rustc-link-arg-bins=-Wl,--push-state,--whole-archive,-lgcc_eh,--pop-state");
}
