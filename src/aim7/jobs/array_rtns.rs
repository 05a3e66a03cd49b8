//! AIM7 `array_rtns` ("Linear Systems Solved", args "20", factor 20): one job clears AIM's two
//! static 100×101 double matrices `a` and `a_orig`, then solves 20 systems of size h = 5, 10,
//! .., 100 (stored row-major with width h+1, the last column the right-hand side): fill the
//! h×(h+1) entries with the sequence v ← v·1.00001 + 1 (v starts at 1.0 each job, less 1e19
//! whenever it passes 1e20), copy the whole array to `a_orig`, run Gauss-Jordan elimination
//! without pivoting (scale row i by its pivot, subtract it from every lower row over the full
//! width, then from every higher row), and check every original row: |rhs − Σ a_ij·b_j| must
//! be at most 0.5, else the job fails, as in AIM (so the work cannot be dropped). About 10^7
//! floating-point operations per job.

use super::{Factor, Fail, Job, TaskCtx};

/// Rows and columns of AIM's static matrices.
const ROWS: usize = 100;
const COLS: usize = 101;

pub const JOB: Job = Job {
    name: "array_rtns",
    args: "20",
    factor: Factor::Fixed(20),
    units: "Linear Systems Solved",
    counters: &["systems", "equations"],
    run,
    ..Job::BASE
};

/// Subtracts `factor` × row `from` from row `into` (rows of width `w`).
fn subtract(a: &mut [f64], w: usize, from: usize, into: usize, factor: f64) {
    let (src, dst) = if from < into {
        let (lo, hi) = a.split_at_mut(into * w);
        (&lo[from * w..from * w + w], &mut hi[..w])
    } else {
        let (lo, hi) = a.split_at_mut(from * w);
        (&hi[..w], &mut lo[into * w..into * w + w])
    };
    for (d, s) in dst.iter_mut().zip(src) {
        *d -= factor * s;
    }
}

/// Gauss-Jordan without pivoting on the h×(h+1) system in `a`; the solution is left in the
/// last column.
fn solve(a: &mut [f64], h: usize) -> Result<(), Fail> {
    let w = h + 1;
    for i in 0..h {
        let pivot = a[i * w + i];
        if pivot == 0.0 {
            return Err(Fail::wrong("zero pivot"));
        }
        a[i * w + i..i * w + w].iter_mut().for_each(|x| *x /= pivot);
        for k in i + 1..h {
            subtract(a, w, i, k, a[k * w + i]);
        }
    }
    for i in (1..h).rev() {
        for k in 0..i {
            subtract(a, w, i, k, a[k * w + i]);
        }
    }
    Ok(())
}

/// Whether the solution in `a` satisfies every row of the original system `orig`.
fn solved(orig: &[f64], a: &[f64], h: usize) -> bool {
    let w = h + 1;
    orig.chunks(w).take(h).all(|row| {
        let lhs: f64 = row[..h]
            .iter()
            .enumerate()
            .map(|(j, x)| x * a[j * w + h])
            .sum();
        (row[h] - lhs).abs() <= 0.5
    })
}

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    let systems: usize = ctx.arg(0)?;
    let m = &mut ctx.statics.matrices;
    if m.is_empty() {
        m.resize(2 * ROWS * COLS, 0.0);
    }
    let (a, orig) = m.split_at_mut(ROWS * COLS);
    a.fill(0.0);
    orig.fill(0.0);
    let mut v = 1.0f64;
    for n in 0..systems.min(ROWS / 5) {
        let h = 5 * (n + 1);
        for x in &mut a[..h * (h + 1)] {
            v = v * 1.00001 + 1.0;
            if v > 1e20 {
                v -= 1e19;
            }
            *x = v;
        }
        orig.copy_from_slice(a);
        solve(a, h)?;
        if !solved(orig, a, h) {
            return Err(Fail::wrong("linear system check"));
        }
        ctx.counters[0] += 1;
        ctx.counters[1] += h as u64;
    }
    Ok(())
}
