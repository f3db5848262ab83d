//! Special functions.
//!
//! `ln Γ` comes from the platform's C library where it has one (`lgamma_r`, re-entrant, on Unix):
//! the MAPTree reference implementation uses the C library's `lgamma`, and bit-for-bit agreement
//! with its published bounds needs the very same function. Elsewhere a pure-Rust port of the same
//! (fdlibm) algorithm is used, which can differ in the last bit.

/// `ln |Γ(x)|`.
#[cfg(unix)]
#[allow(unsafe_code)]
pub fn ln_gamma(x: f64) -> f64 {
    extern "C" {
        fn lgamma_r(x: f64, sign: *mut i32) -> f64;
    }
    let mut sign = 0i32;
    // SAFETY: `lgamma_r` is a pure function of `x` that writes only through the valid, exclusive
    // pointer it is given; it touches no global state (unlike `lgamma`, which sets `signgam`).
    unsafe { lgamma_r(x, &mut sign) }
}

/// `ln |Γ(x)|`.
#[cfg(not(unix))]
pub fn ln_gamma(x: f64) -> f64 {
    libm::lgamma(x)
}

#[cfg(test)]
mod tests {
    use super::ln_gamma;

    #[test]
    fn known_values() {
        assert_eq!(ln_gamma(1.0), 0.0);
        assert_eq!(ln_gamma(2.0), 0.0);
        assert!((ln_gamma(0.5) - 0.5 * std::f64::consts::PI.ln()).abs() < 1e-15);
        assert!((ln_gamma(10.0) - 362_880f64.ln()).abs() < 1e-12);
    }
}
