//! Tells the tests which CPU features the machine that builds them has, so a test of a kernel
//! the CPU cannot run is reported as ignored, with its reason, instead of passing without
//! running (`cargo test` builds and runs on the same machine). The library never reads these
//! flags: it chooses its kernels at run time.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(typejoin_avx512vbmi)");
    println!("cargo::rerun-if-changed=build.rs");
    #[cfg(target_arch = "x86_64")]
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("x86_64")
        && std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vbmi")
    {
        println!("cargo::rustc-cfg=typejoin_avx512vbmi");
    }
}
