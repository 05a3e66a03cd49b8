//! Double-precision Whetstone — UnixBench's "Double-Precision Whetstone" (`whetstone-double`).
//!
//! # What it is
//! Roy Longbottom's C/C++ Whetstone benchmark (1996/97, after Curnow and Wichmann's 1972
//! original) as UnixBench builds it from `whets.c` with `-DDP -DGTODay -DUNIXBENCH`: double
//! precision, wall-clock section timing, 10 s target, 0.5 s calibration threshold, no input.
//! `whetstones(xtra, x100 = 100)` runs eight sections, each an outer loop of `xtra` passes
//! around an inner loop of `n_i = c_i × x100` iterations, `c = {12, 14, 345, 210, 32, 899, 616,
//! 93}`:
//!
//! | section | work per inner iteration | ops counted | rate |
//! |---|---|---|---|
//! | N1 floating point | four array-element updates of `e1[4]` (run `10 × n1` times, time ÷ 10) | 16 | MFLOPS |
//! | N2 floating point | procedure `pa(e1, t, t2)`: the same updates 6 times over an array parameter | 96 | MFLOPS |
//! | N3 if then else | three `if/else` on an integer | 3 | MOPS |
//! | N4 fixed point | integer `*`/`-`/`+` on `j, k, l` and two array stores | 15 | MOPS |
//! | N5 sin,cos etc. | `x`, `y` through `atan(t2·sin·cos / (cos + cos − 1))`, `i` from 1 | 26 | MOPS |
//! | N6 floating point | procedure `p3(&x, &y, &z, t, t1, t2)` | 6 | MFLOPS |
//! | N7 assignments | procedure `po(e1, j, k, l)`: three array assignments | 3 | MOPS |
//! | N8 exp,sqrt etc. | `x = sqrt(exp(log(x) / t1))` | 4 | MOPS |
//!
//! Constants: `t = t0 = 0.49999975`, `t1 = 0.50000025`, `t2 = 2.0`; N1, N2 and N5 apply
//! `t = 1 − t` after each outer pass (against underflow) and restore `t = t0` afterwards.
//! `TimeUsed` is the sum of the eight section times (N1's already divided by 10).
//!
//! Calibration (as in `main` of `whets.c`): `xtra = 1`; up to 10 times run `whetstones`, stop once
//! `TimeUsed` exceeds the threshold, else `xtra ×= 5`. Then `xtra = duration × xtra / TimeUsed`
//! (truncated, at least 1), one more timed run, and `MWIPS = xtra × x100 / (10 × TimeUsed)`.
//! UnixBench fixes duration = 10 s and threshold = 0.5 s; [`run`] takes the duration and scales
//! the threshold as `duration / 20` (floor 0.02 s).
//!
//! # Unit and baseline
//! **MWIPS** (millions of Whetstone instructions per second), timebase 0: the divisor is the
//! program's own measured `TimeUsed` (summed section time, ≈ the duration), reported by
//! UnixBench as `COUNT|<MWIPS>|0|MWIPS` and `TIME|<TimeUsed>`, not the process lifetime (which
//! also includes calibration). Index baseline **55.0 MWIPS**, report name "Double-Precision
//! Whetstone" (unixbench spec §4.2).
//!
//! # Which work: the two variants
//! [`Variant::Gcc`] (the `whetstone-double` test) does the work of UnixBench's own binary,
//! built by gcc with `-O3 -ffast-math -march=native`, because that binary's scores are the
//! ones people publish and compare with: gcc deletes section N4's loop (its starting values
//! `j, k, l = 1, 2, 3` are a fixed point of the body, so only the two array stores remain and
//! the section takes 0.000 s) and folds N8's `sqrt(exp(log(x) / t1))` into
//! `exp(log(x) × (0.5 / t1))` (fast-math turns `sqrt(exp(a))` into `exp(a / 2)` and the
//! division by a constant into a multiplication; read from gcc 12's code for whets.c).
//! [`Variant::Strict`] runs every section as written, in IEEE order (N4's loop, N8's division
//! and square root); its work does not depend on what a compiler folds, but it scores about
//! 12% below UnixBench's binary. Everything else is common to both.
//!
//! Measured on the machine this was written on (2-core AMD EPYC VM, znver3, shared; gcc 12.2,
//! rustc 1.95), section by section in thread CPU time at the same `xtra` = 1000 against the C
//! reference in benches/c/whetstone.c (built as UnixBench builds whets.c), five runs each:
//! `TimeUsed` 1.097 s (Gcc variant) and 1.285 s (Strict) against gcc's 1.132 s, i.e. MWIPS
//! ratios 1.03 and 0.88. The Gcc variant's sections match gcc's within 6% except two, which
//! partly cancel: N7 takes 0.020 s against gcc's 0.068 s (gcc's loop moves the three values
//! through general registers, `vmovq` to and from a GPR, which costs it ~3 times our plain
//! register moves; 4% of `TimeUsed`), and N6 takes 0.443 s against 0.418 s (gcc contracts
//! two of p3's five operations into FMAs under `-march=native`; Rust never contracts).
//!
//! # How this Rust build differs from UnixBench's `gcc -O3 -ffast-math -march=native`
//! * **No fast-math.** Rust never reassociates floating-point expressions and does not set
//!   flush-to-zero/denormals-are-zero (gcc links `crtfastmath.o`, which does; no section
//!   produces denormals). N8's fast-math folding is written out by hand in the Gcc variant.
//!   Divisions by the constant `t2 = 2.0` become multiplications by 0.5 in both builds (that
//!   one is exact). The one-pass results match the double-precision table in `whets.c`'s header
//!   within 4e-14 (the Gcc variant's N8 within 1e-13).
//! * **libm.** `sin`, `cos`, `atan`, `exp`, `log` are the platform libm's (glibc on Linux) via
//!   std, as with the C build's `-lm`; `sqrt` is the hardware instruction. Both compilers merge
//!   N5's `sin(x)` and `cos(x)` into one `sincos` call.
//! * **Dead-code elimination.** Every section's starting values pass through
//!   [`std::hint::black_box`] after the section's start time is taken, and its result passes
//!   through `black_box` before the end time is taken: the compiler can neither precompute a
//!   section nor move its work out of the timed interval (the Gcc variant's N4 stores stand
//!   for gcc's, in the same place). Two sections need more because their loops are
//!   algebraically trivial and LLVM (unlike gcc 12) removes them even with opaque inputs: in
//!   N3 two iterations are the identity once `j` is 0 or 1, so its constants 0..3 are opaque
//!   values (loaded once, compared in registers, the work gcc's loop does); in N7 the three
//!   assignments with constant indices are pure register renaming, so after each `po` call an
//!   empty `asm!` (no instruction) makes the compiler forget the three values, keeping three
//!   register moves per iteration. The loop-invariant constants (`t`, `t1`, `t2`) stay visible,
//!   as in C, so no per-iteration cost is added elsewhere.
//! * **Bounds checks.** The Strict variant's N4 stores `e1[l − 2]`, `e1[k − 2]` are
//!   bounds-checked (the indices are opaque); elsewhere indices are constants and the checks
//!   vanish.
//! * `pa`, `po`, `p3` are in the same translation unit as `whetstones` in C and gcc inlines
//!   them at `-O3`; they are `#[inline]` here.
//! * **Timer.** `std::time::Instant` (`CLOCK_MONOTONIC`) instead of `gettimeofday`; both are
//!   wall clock, so with more copies than CPUs the score drops as in UnixBench ≥ 2016.
//! * The "Result" column of the printed table is, as in `whets.c`, the value from the *first*
//!   calibration pass (`xtra = 1`); [`Section::result`] is the value of the timed run.

use std::hint::black_box;
use std::io::{self, Write};
use std::time::Instant;

/// Which work the sections do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// The work of UnixBench's own binary (`gcc -O3 -ffast-math -march=native`), whose scores
    /// people publish: section N4 does no work (gcc deletes its loop, whose starting values
    /// are a fixed point, and keeps the two stores), and N8 computes `exp(log(x) × (0.5/t1))`
    /// (gcc's fast-math folding of `sqrt(exp(log(x)/t1))`). `whetstone-double` runs this.
    Gcc,
    /// Every section as written in whets.c, in IEEE order: N4's loop runs (about 5% of
    /// `TimeUsed`) and N8 takes the square root and divides. Independent of what a compiler
    /// folds, so comparable across compilers; not comparable with UnixBench's scores.
    Strict,
}

/// One row of the Whetstone table.
#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    /// Section name, e.g. "N1 floating point".
    pub name: &'static str,
    /// The section's check value after the run (`e1[3]`, `j`, `e1[0] + e1[1]`, `y`, `z`,
    /// `e1[2]` or `x`); deterministic for a given `xtra`.
    pub result: f64,
    /// MFLOPS (N1, N2, N6) or MOPS (the others): counted ops × xtra / (10⁶ × seconds).
    pub mflops_or_mops: f64,
    /// True when `mflops_or_mops` is MFLOPS, false when it is MOPS.
    pub is_mflops: bool,
    /// Section time in seconds (N1's measured time divided by 10).
    pub seconds: f64,
}

/// The outcome of a Whetstone run.
#[derive(Clone, Debug, PartialEq)]
pub struct WhetstoneResult {
    /// `xtra × 100 / (10 × time_used)`.
    pub mwips: f64,
    /// `TimeUsed`: the sum of the eight section times, seconds.
    pub time_used: f64,
    /// Outer passes of the timed run.
    pub xtra: u64,
    /// The eight sections, N1..N8.
    pub sections: Vec<Section>,
    /// When the timed run (after calibration) started and ended, CLOCK_MONOTONIC nanoseconds.
    pub window: (u64, u64),
}

/// `duration_s` replaces UnixBench's fixed 10 s (the calibration threshold scales as
/// duration_s/20, i.e. 0.5 s at 10 s, with a floor of 0.02 s); `log` receives the calibration
/// steps and the 8-row table as UnixBench prints to stdout.
pub fn run(duration_s: f64, variant: Variant, log: &mut dyn Write) -> io::Result<WhetstoneResult> {
    if !(duration_s.is_finite() && duration_s > 0.0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("whetstone duration must be a positive number of seconds, got {duration_s}"),
        ));
    }
    let threshold = (duration_s / 20.0).max(MIN_CALIBRATION_THRESHOLD_S);

    writeln!(log, "Calibrate")?;
    let mut xtra: u64 = 1;
    let mut count = MAX_CALIBRATION_STEPS;
    // `results[]` of whets.c: filled by the first calibration pass only (`calibrate == 1`).
    let mut first_pass_results: Option<[f64; 8]> = None;
    let mut time_used;
    loop {
        let pass = whetstones(xtra, variant);
        time_used = pass.time_used();
        if first_pass_results.is_none() {
            first_pass_results = Some(pass.results());
        }
        writeln!(
            log,
            "{:11.2} Seconds {:10.0}   Passes (x 100)",
            time_used, xtra as f64
        )?;
        count -= 1;
        if time_used > threshold {
            break;
        }
        // As in whets.c, xtra grows even after the last step (a quirk that matters only when
        // ten steps never reach the threshold).
        xtra = xtra.saturating_mul(5);
        if count == 0 {
            break;
        }
    }

    if time_used > 0.0 {
        xtra = (duration_s * xtra as f64 / time_used) as u64;
    }
    xtra = xtra.max(1);

    writeln!(log, "\nUse {xtra}  passes (x 100)")?;
    writeln!(
        log,
        "\n          Double Precision C/C++ Whetstone Benchmark"
    )?;
    writeln!(
        log,
        "\nLoop content                  Result              MFLOPS      MOPS   Seconds\n"
    )?;

    let started = crate::clock::monotonic_ns();
    let pass = whetstones(xtra, variant);
    let mut result = pass.to_result(xtra);
    result.window = (started, crate::clock::monotonic_ns());
    let printed = first_pass_results.unwrap_or_else(|| pass.results());
    for ((section, heading), shown) in result.sections.iter().zip(HEADINGS).zip(printed) {
        write!(log, "{heading} {shown:24.17}    ")?;
        if section.is_mflops {
            writeln!(
                log,
                " {:9.3}          {:9.3}",
                section.mflops_or_mops, section.seconds
            )?;
        } else {
            writeln!(
                log,
                "           {:9.3}{:9.3}",
                section.mflops_or_mops, section.seconds
            )?;
        }
    }
    writeln!(
        log,
        "\nMWIPS            {:39.3}{:19.3}\n",
        result.mwips, result.time_used
    )?;
    if pass.results().iter().sum::<f64>() == 0.0 {
        write!(log, "Wrong answer  ")?;
    }
    Ok(result)
}

/// Runs `whetstones(xtra, 100)` once, without calibration or output, and returns its timing and
/// check values (`xtra` below 1 is taken as 1). The section results depend only on `xtra`.
pub fn run_fixed(xtra: u64, variant: Variant) -> WhetstoneResult {
    let xtra = xtra.max(1);
    whetstones(xtra, variant).to_result(xtra)
}

// ------------------------------------------------------------------------------------------

/// Inner-loop multiplier `x100`.
const X100: u64 = 100;
/// `n1 .. n8 = C[i] × x100`.
const LOOP_CONSTANTS: [u64; 8] = [12, 14, 345, 210, 32, 899, 616, 93];
/// Operations counted per inner iteration, for MFLOPS/MOPS (`pout`'s `ops`).
const OPS_PER_ITERATION: [u64; 8] = [16, 96, 3, 15, 26, 6, 3, 4];
/// MFLOPS rows (type 1 in `pout`); the rest are MOPS.
const IS_MFLOPS: [bool; 8] = [true, true, false, false, false, true, false, false];
/// N1 runs this many times longer; its time is divided by it.
const N1_MULT: u64 = 10;
/// Section names.
const NAMES: [&str; 8] = [
    "N1 floating point",
    "N2 floating point",
    "N3 if then else",
    "N4 fixed point",
    "N5 sin,cos etc.",
    "N6 floating point",
    "N7 assignments",
    "N8 exp,sqrt etc.",
];
/// The 17-character headings `whets.c` prints.
const HEADINGS: [&str; 8] = [
    "N1 floating point",
    "N2 floating point",
    "N3 if then else  ",
    "N4 fixed point   ",
    "N5 sin,cos etc.  ",
    "N6 floating point",
    "N7 assignments   ",
    "N8 exp,sqrt etc. ",
];
/// UnixBench's `count = 10` calibration steps.
const MAX_CALIBRATION_STEPS: u32 = 10;
/// Floor of the calibration threshold.
const MIN_CALIBRATION_THRESHOLD_S: f64 = 0.02;

const T: f64 = 0.49999975;
const T0: f64 = T;
const T1: f64 = 0.50000025;
const T2: f64 = 2.0;

/// Check value and seconds of the eight sections of one `whetstones` call.
struct Pass {
    result: [f64; 8],
    seconds: [f64; 8],
}

impl Pass {
    fn time_used(&self) -> f64 {
        self.seconds.iter().sum()
    }

    fn results(&self) -> [f64; 8] {
        self.result
    }

    fn to_result(&self, xtra: u64) -> WhetstoneResult {
        let time_used = self.time_used();
        // MWIPS. One unit of the classic Whetstone loop parameter (the "I" multiplying the
        // constants 12, 14, 345, ... in Curnow & Wichmann's program) is 100,000 Whetstone
        // instructions: the original reports KWIPS = 100 × LOOP / seconds, so LOOP = 10 is one
        // million. Here the parameter is x100 × xtra (every inner count is C[i] × x100, repeated
        // xtra times), hence MWIPS = x100 × xtra × 10⁵ / 10⁶ / TimeUsed
        // = xtra × x100 / (10 × TimeUsed). (N1's tenfold repetition is not part of this factor:
        // it is undone by dividing N1's time by 10 before it enters TimeUsed.)
        let mwips = if time_used > 0.0 {
            xtra as f64 * X100 as f64 / (10.0 * time_used)
        } else {
            0.0
        };
        let sections = (0..8)
            .map(|i| {
                let ops = (LOOP_CONSTANTS[i] * X100 * OPS_PER_ITERATION[i]) as f64 * xtra as f64;
                let secs = self.seconds[i];
                Section {
                    name: NAMES[i],
                    result: self.result[i],
                    mflops_or_mops: if secs > 0.0 { ops / (1e6 * secs) } else { 0.0 },
                    is_mflops: IS_MFLOPS[i],
                    seconds: secs,
                }
            })
            .collect();
        WhetstoneResult {
            mwips,
            time_used,
            xtra,
            sections,
            window: (0, 0),
        }
    }
}

/// `whetstones(xtra, x100, calibrate)`: the eight timed sections.
fn whetstones(xtra: u64, variant: Variant) -> Pass {
    let n1 = LOOP_CONSTANTS[0] * X100;
    let n2 = LOOP_CONSTANTS[1] * X100;
    let n3 = LOOP_CONSTANTS[2] * X100;
    let n4 = LOOP_CONSTANTS[3] * X100;
    let n5 = LOOP_CONSTANTS[4] * X100;
    let n6 = LOOP_CONSTANTS[5] * X100;
    let n7 = LOOP_CONSTANTS[6] * X100;
    let n8 = LOOP_CONSTANTS[7] * X100;
    let mut result = [0.0f64; 8];
    let mut seconds = [0.0f64; 8];
    let mut t = T;

    // Section 1, array elements.
    let mut e1: [f64; 4] = [1.0, -1.0, -1.0, -1.0];
    let start = Instant::now();
    e1 = black_box(e1);
    for _ in 0..xtra {
        for _ in 0..n1 * N1_MULT {
            e1[0] = (e1[0] + e1[1] + e1[2] - e1[3]) * t;
            e1[1] = (e1[0] + e1[1] - e1[2] + e1[3]) * t;
            e1[2] = (e1[0] - e1[1] + e1[2] + e1[3]) * t;
            e1[3] = (-e1[0] + e1[1] + e1[2] + e1[3]) * t;
        }
        t = 1.0 - t;
    }
    t = T0;
    e1 = black_box(e1);
    seconds[0] = start.elapsed().as_secs_f64() / N1_MULT as f64;
    result[0] = e1[3];

    // Section 2, array as parameter.
    let start = Instant::now();
    e1 = black_box(e1);
    for _ in 0..xtra {
        for _ in 0..n2 {
            pa(&mut e1, t, T2);
        }
        t = 1.0 - t;
    }
    t = T0;
    e1 = black_box(e1);
    seconds[1] = start.elapsed().as_secs_f64();
    result[1] = e1[3];

    // Section 3, conditional jumps. The constants are opaque (see the module docs): with
    // literal 0..3 LLVM proves that two iterations are the identity once j is 0 or 1 and
    // deletes the inner loop.
    let start = Instant::now();
    let (c0, c1, c2, c3): (i64, i64, i64, i64) = black_box((0, 1, 2, 3));
    let mut j = c1;
    for _ in 0..xtra {
        for _ in 0..n3 {
            if j == c1 {
                j = c2;
            } else {
                j = c3;
            }
            if j > c2 {
                j = c0;
            } else {
                j = c1;
            }
            if j < c1 {
                j = c1;
            } else {
                j = c0;
            }
        }
    }
    let j = black_box(j);
    seconds[2] = start.elapsed().as_secs_f64();
    result[2] = j as f64;

    // Section 4, integer arithmetic.
    let start = Instant::now();
    e1 = black_box(e1);
    match variant {
        Variant::Gcc => {
            // (1, 2, 3) is a fixed point of the loop body, so gcc keeps only its stores:
            // e1[l - 2] = j + k + l and e1[k - 2] = j * k * l, i.e. e1[1] = e1[0] = 6.
            if xtra > 0 && n4 > 0 {
                e1[1] = 6.0;
                e1[0] = 6.0;
            }
        }
        Variant::Strict => {
            let (mut j, mut k, mut l): (i64, i64, i64) = black_box((1, 2, 3));
            for _ in 0..xtra {
                for _ in 0..n4 {
                    j = j * (k - j) * (l - k);
                    k = l * k - (l - j) * k;
                    l = (l - k) * (k + j);
                    e1[(l - 2) as usize] = (j + k + l) as f64;
                    e1[(k - 2) as usize] = (j * k * l) as f64;
                }
            }
        }
    }
    e1 = black_box(e1);
    seconds[3] = start.elapsed().as_secs_f64();
    result[3] = e1[0] + e1[1];

    // Section 5, trig functions.
    let start = Instant::now();
    let (mut x, mut y): (f64, f64) = black_box((0.5, 0.5));
    for _ in 0..xtra {
        for _ in 1..n5 {
            x = t * (T2 * x.sin() * x.cos() / ((x + y).cos() + (x - y).cos() - 1.0)).atan();
            y = t * (T2 * y.sin() * y.cos() / ((x + y).cos() + (x - y).cos() - 1.0)).atan();
        }
        t = 1.0 - t;
    }
    t = T0;
    let y = black_box(y);
    seconds[4] = start.elapsed().as_secs_f64();
    result[4] = y;

    // Section 6, procedure calls.
    let start = Instant::now();
    let (mut x, mut y, mut z): (f64, f64, f64) = black_box((1.0, 1.0, 1.0));
    for _ in 0..xtra {
        for _ in 0..n6 {
            p3(&mut x, &mut y, &mut z, t, T1, T2);
        }
    }
    let z = black_box(z);
    seconds[5] = start.elapsed().as_secs_f64();
    result[5] = z;

    // Section 7, array references. With the constant indices 0, 1, 2 (as in C) the three
    // assignments are pure register renaming, and two passes leave the array unchanged, so
    // LLVM would delete the loop; `opaque_elements` makes the compiler forget the three values
    // after every call, at no instruction cost (see its docs).
    let (j, k, l) = (0usize, 1usize, 2usize);
    e1[0] = 1.0;
    e1[1] = 2.0;
    e1[2] = 3.0;
    let start = Instant::now();
    e1 = black_box(e1);
    for _ in 0..xtra {
        for _ in 0..n7 {
            po(&mut e1, j, k, l);
            opaque_elements(&mut e1);
        }
    }
    e1 = black_box(e1);
    seconds[6] = start.elapsed().as_secs_f64();
    result[6] = e1[2];

    // Section 8, standard functions.
    let start = Instant::now();
    let mut x: f64 = black_box(0.75);
    match variant {
        Variant::Gcc => {
            // gcc -ffast-math: sqrt(exp(a)) = exp(a / 2) and the division by the constant t1
            // becomes a multiplication, so one log, one multiply and one exp per iteration.
            let c = black_box(0.5 / T1);
            for _ in 0..xtra {
                for _ in 0..n8 {
                    x = (x.ln() * c).exp();
                }
            }
        }
        Variant::Strict => {
            for _ in 0..xtra {
                for _ in 0..n8 {
                    x = (x.ln() / T1).exp().sqrt();
                }
            }
        }
    }
    let x = black_box(x);
    seconds[7] = start.elapsed().as_secs_f64();
    result[7] = x;

    Pass { result, seconds }
}

/// `pa(e, t, t2)`: the N1 updates six times over an array parameter, the last divided by `t2`.
#[inline]
fn pa(e: &mut [f64; 4], t: f64, t2: f64) {
    for _ in 0..6 {
        e[0] = (e[0] + e[1] + e[2] - e[3]) * t;
        e[1] = (e[0] + e[1] - e[2] + e[3]) * t;
        e[2] = (e[0] - e[1] + e[2] + e[3]) * t;
        e[3] = (-e[0] + e[1] + e[2] + e[3]) / t2;
    }
}

/// `po(e1, j, k, l)`: three array assignments.
#[inline]
fn po(e1: &mut [f64; 4], j: usize, k: usize, l: usize) {
    e1[j] = e1[k];
    e1[k] = e1[l];
    e1[l] = e1[j];
}

/// Makes the optimiser treat `e[0..3]` as unknown values without moving them out of
/// registers: an empty `asm!` that takes each element in a floating-point register and
/// "returns" it in the same register. It emits no instruction. `std::hint::black_box` would do
/// the same job but goes through memory (a store and a reload per call), which in N7's loop
/// would add a store-forwarding chain several times longer than the work gcc's code does.
#[inline(always)]
fn opaque_elements(e: &mut [f64; 4]) {
    let [a, b, c, _] = e;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the template is only an assembler comment naming the operands, so no instruction
    // is executed; it reads and writes nothing but its three register operands (each returned
    // unchanged), touches no memory or stack, and leaves the flags alone, as the options state.
    unsafe {
        std::arch::asm!(
            "/* {0} {1} {2} */",
            inout(xmm_reg) * a,
            inout(xmm_reg) * b,
            inout(xmm_reg) * c,
            options(nomem, nostack, preserves_flags),
        );
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: as for x86_64 above: an assembler comment, no instruction, register operands only.
    unsafe {
        std::arch::asm!(
            "/* {0:d} {1:d} {2:d} */",
            inout(vreg) * a,
            inout(vreg) * b,
            inout(vreg) * c,
            options(nomem, nostack, preserves_flags),
        );
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        *a = black_box(*a);
        *b = black_box(*b);
        *c = black_box(*c);
    }
}

/// `p3(&x, &y, &z, t, t1, t2)`.
#[inline]
fn p3(x: &mut f64, y: &mut f64, z: &mut f64, t: f64, t1: f64, t2: f64) {
    *x = *y;
    *y = *z;
    *x = t * (*x + *y);
    *y = t1 * (*x + *y);
    *z = (*x + *y) / t2;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_run_reports_positive_times_and_a_table() {
        let mut log = Vec::new();
        let r = match run(0.2, Variant::Gcc, &mut log) {
            Ok(r) => r,
            Err(e) => panic!("whetstone run failed: {e}"),
        };
        assert!(r.mwips > 0.0);
        assert!(r.time_used > 0.0);
        assert!(r.xtra >= 1);
        assert_eq!(r.sections.len(), 8);
        for s in &r.sections {
            // Every section but N4 (no work in gcc's build) did measurable work.
            if s.name != "N4 fixed point" {
                assert!(s.seconds > 0.0, "{} took no time", s.name);
                assert!(s.mflops_or_mops > 0.0, "{} has no rate", s.name);
            }
        }
        let total: f64 = r.sections.iter().map(|s| s.seconds).sum();
        assert!((total - r.time_used).abs() <= 1e-12 * total.max(1.0));
        let expected = r.xtra as f64 * 100.0 / (10.0 * r.time_used);
        assert!((r.mwips - expected).abs() <= 1e-9 * expected);

        let text = String::from_utf8_lossy(&log);
        assert!(text.starts_with("Calibrate\n"));
        assert!(text.contains("Passes (x 100)"));
        assert!(text.contains(&format!("Use {}  passes (x 100)", r.xtra)));
        assert!(text.contains("Double Precision C/C++ Whetstone Benchmark"));
        for h in HEADINGS {
            assert!(text.contains(h), "missing row {h}");
        }
        assert!(text.contains("\nMWIPS "));
        assert!(!text.contains("Wrong answer"));
        // The table's Result column is the first calibration pass (xtra = 1), as in whets.c.
        assert!(text.contains(&format!("N4 fixed point    {:24.17}", 12.0)));
    }

    #[test]
    fn results_are_deterministic_for_a_given_xtra() {
        for variant in [Variant::Gcc, Variant::Strict] {
            let a = run_fixed(3, variant);
            let b = run_fixed(3, variant);
            assert_eq!(a.xtra, 3);
            for (x, y) in a.sections.iter().zip(&b.sections) {
                assert_eq!(x.name, y.name);
                assert_eq!(x.result.to_bits(), y.result.to_bits(), "{}", x.name);
            }
        }
        // The strict variant does every section's work, N4 included.
        for s in &run_fixed(3, Variant::Strict).sections {
            assert!(s.seconds > 0.0, "{} took no time", s.name);
        }
    }

    #[test]
    fn one_pass_matches_published_double_precision_values() {
        // Values from the double-precision table in whets.c's header (xtra = 1); they were
        // produced with x87 arithmetic, so allow for differences in the last digits.
        for variant in [Variant::Gcc, Variant::Strict] {
            check_published_values(&run_fixed(1, variant));
        }
    }

    fn check_published_values(r: &WhetstoneResult) {
        let expected = [
            -1.123_982_556_673_919,
            -1.121_870_798_892_844,
            1.0,
            12.0,
            0.499_029_372_815_151_4,
            0.999_999_878_908_028_2,
            3.0,
            0.751_001_630_184_578_7,
        ];
        for (s, e) in r.sections.iter().zip(expected) {
            assert!(
                (s.result - e).abs() < 1e-9,
                "{}: {} vs {}",
                s.name,
                s.result,
                e
            );
        }
        // Integer sections are exact.
        assert_eq!(r.sections[2].result, 1.0);
        assert_eq!(r.sections[3].result, 12.0);
        assert_eq!(r.sections[6].result, 3.0);
    }

    #[test]
    fn invalid_duration_is_rejected() {
        let mut log = Vec::new();
        assert!(run(0.0, Variant::Gcc, &mut log).is_err());
        assert!(run(f64::NAN, Variant::Gcc, &mut log).is_err());
        assert!(run(-1.0, Variant::Strict, &mut log).is_err());
        assert!(log.is_empty());
    }

    #[test]
    fn run_fixed_clamps_xtra() {
        assert_eq!(run_fixed(0, Variant::Gcc).xtra, 1);
    }
}
