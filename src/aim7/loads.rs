//! `--load`: the load points of a run. AIM's multitask runs either one load or a series from a
//! start by an increment up to a maximum (aim7.md §3); patchbench takes any mix of single
//! loads and such ranges, comma separated: `3000`, `1,10,100,1000,3000`, `1-100:10` (1, 11,
//! .., 91: START, START+STEP, .. while at most END, as multitask steps its load), `1-5` (step
//! 1). The points run in the order given. A load given twice is refused: a run records one
//! result per load point (`--runs N` repeats every point).

/// The parsed `--load`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loads(pub Vec<u32>);

/// The most points one `--load` may expand to.
const MAX_POINTS: usize = 10_000;

fn number(s: &str, what: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(0) => Err(format!("the {what} must be at least 1 (e.g. --load 3000)")),
        Ok(n) => Ok(n),
        Err(_) => Err(format!(
            "{s:?} is not a number of tasks; give e.g. --load 3000, --load 1,10,100 or --load 1-100:10"
        )),
    }
}

/// Parses `--load`.
pub fn parse(s: &str) -> Result<Loads, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            None => out.push(number(part, "load")?),
            Some((start, rest)) => {
                let (end, step) = rest.split_once(':').unwrap_or((rest, "1"));
                let (start, end, step) = (
                    number(start, "load")?,
                    number(end, "end of a load range")?,
                    number(step, "step of a load range")?,
                );
                if end < start {
                    return Err(format!("the load range {part:?} ends below its start"));
                }
                let points = (end - start) / step + 1;
                if out.len() + points as usize > MAX_POINTS {
                    return Err(format!(
                        "--load {s:?} gives more than {MAX_POINTS} load points"
                    ));
                }
                out.extend((start..=end).step_by(step as usize));
            }
        }
    }
    if out.is_empty() {
        return Err("give at least one load (e.g. --load 3000)".into());
    }
    let mut seen = std::collections::BTreeSet::new();
    if let Some(again) = out.iter().find(|n| !seen.insert(**n)) {
        return Err(format!(
            "load {again} is given twice in --load {s:?}; a run records one result per load \
             point, so give each once (--runs N repeats every point)"
        ));
    }
    Ok(Loads(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_ranges_expand_in_order() {
        assert_eq!(parse("3000"), Ok(Loads(vec![3000])));
        assert_eq!(
            parse("1,10,100,1000,3000").unwrap().0,
            [1, 10, 100, 1000, 3000]
        );
        assert_eq!(
            parse("1-100:10").unwrap().0,
            [1, 11, 21, 31, 41, 51, 61, 71, 81, 91]
        );
        assert_eq!(parse("2-5").unwrap().0, [2, 3, 4, 5]);
        assert_eq!(parse("1, 5-15:5 ,100").unwrap().0, [1, 5, 10, 15, 100]);
    }

    #[test]
    fn bad_loads_say_how_to_write_one() {
        assert!(parse("0").unwrap_err().contains("at least 1"));
        assert!(parse("x").unwrap_err().contains("--load 1-100:10"));
        assert!(parse("10-1").unwrap_err().contains("below its start"));
        assert!(parse("1-10:0").unwrap_err().contains("step"));
        assert!(parse("1-100000").unwrap_err().contains("more than"));
        assert!(parse(",").unwrap_err().contains("at least one"));
        assert!(parse("1,1").unwrap_err().contains("load 1 is given twice"));
        assert!(parse("1-10,5")
            .unwrap_err()
            .contains("load 5 is given twice"));
    }
}
