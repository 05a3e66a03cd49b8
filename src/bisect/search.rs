//! The search of a bisection, as a pure state machine: the candidates in first-parent order
//! (oldest first; the last one is the bad endpoint), a mark per candidate (good, bad, or
//! skipped with its reason), which candidate to test next, and when the search is done, with
//! its answer: the first bad commit, or the range it lies in when skipped commits hide it (as
//! `git bisect skip` leaves it).
//!
//! The good endpoint is not a candidate: it stands before candidate 0. A step's judge is
//! behind [`Judge`], so the same search runs on synthetic outcomes (the simulation in
//! tests/bisect_simulation.rs) and on campaigns (`crate::commands::bisect`). Nothing here
//! is stored: the command keeps the marks in the store and rebuilds the search from them, so a
//! bisection resumed after a crash takes the same next step.

use serde::{Deserialize, Serialize};

/// What a tested candidate turned out to be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mark {
    /// At the good endpoint's level: the change came later.
    Good,
    /// At the bad endpoint's level: the change came here or earlier.
    Bad,
    /// Not judged (did not build or boot, its steps failed, or still unsure at the round
    /// bound), with the reason; the search goes around it.
    Skipped(String),
}

/// What the search does next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Test this candidate (an index into the candidates).
    Test(usize),
    /// Nothing left to test.
    Done(Answer),
}

/// Where the change is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Answer {
    /// Candidate `0` is the first bad one: every candidate before it is good (or is the good
    /// endpoint) and it is bad.
    FirstBad(usize),
    /// The first bad candidate is one of `first..=last`: `last` is bad, the ones before it
    /// in the range were skipped, and the one before `first` is good (or is the good endpoint).
    Range { first: usize, last: usize },
}

/// The search over `len` candidates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Search {
    marks: Vec<Option<Mark>>,
}

impl Search {
    /// A search over `len` candidates (at least 1), the last being the bad endpoint.
    pub fn new(len: usize) -> Search {
        let mut marks = vec![None; len.max(1)];
        if let Some(last) = marks.last_mut() {
            *last = Some(Mark::Bad);
        }
        Search { marks }
    }

    /// How many candidates.
    pub fn len(&self) -> usize {
        self.marks.len()
    }

    /// Never: a search has at least the bad endpoint.
    pub fn is_empty(&self) -> bool {
        self.marks.is_empty()
    }

    /// The mark of candidate `i` (None: not tested).
    pub fn mark_of(&self, i: usize) -> Option<&Mark> {
        self.marks.get(i).and_then(Option::as_ref)
    }

    /// Records what candidate `i` turned out to be; an index out of range is ignored.
    pub fn mark(&mut self, i: usize, mark: Mark) {
        if let Some(m) = self.marks.get_mut(i) {
            *m = Some(mark);
        }
    }

    /// The bracket the change lies in: the last good candidate before the first bad one (None:
    /// the good endpoint) and the first bad one. A mark that contradicts the order (a good
    /// candidate after a bad one) cannot arise from [`Search::next`] and is not used.
    pub fn bracket(&self) -> (Option<usize>, usize) {
        let first_bad = self
            .marks
            .iter()
            .position(|m| *m == Some(Mark::Bad))
            .unwrap_or(self.marks.len() - 1);
        let last_good = self.marks[..first_bad]
            .iter()
            .rposition(|m| *m == Some(Mark::Good));
        (last_good, first_bad)
    }

    /// The candidates still to test: untested, inside the bracket.
    pub fn open(&self) -> Vec<usize> {
        let (good, bad) = self.bracket();
        let from = good.map_or(0, |g| g + 1);
        (from..bad).filter(|&i| self.marks[i].is_none()).collect()
    }

    /// The next candidate: of the untested ones inside the bracket, the one nearest its middle
    /// (the lower one on a tie), so each answer halves what is left when nothing is skipped
    /// and comes as near to halving it as the skips allow when something is.
    pub fn next(&self) -> Next {
        let (good, bad) = self.bracket();
        let open = self.open();
        if open.is_empty() {
            let first = good.map_or(0, |g| g + 1);
            return Next::Done(if first == bad {
                Answer::FirstBad(bad)
            } else {
                Answer::Range { first, last: bad }
            });
        }
        // The middle of the bracket, its ends being the good one (or −1) and the bad one.
        let lo = good.map_or(-1, |g| g as i64);
        let twice_mid = lo + bad as i64;
        let best = open
            .iter()
            .copied()
            .min_by_key(|&i| ((2 * i as i64 - twice_mid).abs(), i))
            .unwrap_or(open[0]);
        Next::Test(best)
    }

    /// Steps a plain bisection needs at most for `len` candidates (the last known bad):
    /// ceil(log2 len).
    pub fn plain_steps(len: usize) -> usize {
        let mut steps = 0;
        while (1usize << steps) < len {
            steps += 1;
        }
        steps
    }
}

/// Judges one candidate: builds, boots and measures it, or (in a simulation) draws its outcome.
pub trait Judge {
    /// What candidate `i` is. `search` is the state before this step.
    fn judge(&mut self, search: &Search, i: usize) -> anyhow::Result<Mark>;
}

/// How a bisection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The answer, or None when `max_steps` ran out first.
    pub answer: Option<Answer>,
    /// Candidates judged (each a step, skipped ones included).
    pub steps: usize,
}

/// Runs the search to its end, or for at most `max_steps` judged candidates.
pub fn bisect(
    search: &mut Search,
    judge: &mut dyn Judge,
    max_steps: Option<usize>,
) -> anyhow::Result<Outcome> {
    let mut steps = 0;
    loop {
        match search.next() {
            Next::Done(answer) => {
                return Ok(Outcome {
                    answer: Some(answer),
                    steps,
                })
            }
            Next::Test(i) => {
                if max_steps.is_some_and(|m| steps >= m) {
                    return Ok(Outcome {
                        answer: None,
                        steps,
                    });
                }
                let mark = judge.judge(search, i)?;
                search.mark(i, mark);
                steps += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A judge that knows the first bad candidate and which candidates cannot be judged.
    struct Truth {
        first_bad: usize,
        broken: Vec<usize>,
        asked: Vec<usize>,
    }

    impl Judge for Truth {
        fn judge(&mut self, _: &Search, i: usize) -> anyhow::Result<Mark> {
            self.asked.push(i);
            Ok(if self.broken.contains(&i) {
                Mark::Skipped("does not build".into())
            } else if i >= self.first_bad {
                Mark::Bad
            } else {
                Mark::Good
            })
        }
    }

    fn run(len: usize, first_bad: usize, broken: &[usize]) -> (Outcome, Vec<usize>) {
        let mut s = Search::new(len);
        let mut t = Truth {
            first_bad,
            broken: broken.to_vec(),
            asked: Vec::new(),
        };
        let o = bisect(&mut s, &mut t, None).unwrap();
        (o, t.asked)
    }

    #[test]
    fn a_clean_search_finds_every_culprit_within_the_plain_steps() {
        for len in 1..=70 {
            for first_bad in 0..len {
                let (o, asked) = run(len, first_bad, &[]);
                assert_eq!(
                    o.answer,
                    Some(Answer::FirstBad(first_bad)),
                    "{len} {first_bad}"
                );
                assert!(
                    o.steps <= Search::plain_steps(len),
                    "{len} {first_bad}: {} steps {asked:?}",
                    o.steps
                );
                assert!(
                    !asked.contains(&(len - 1)),
                    "the bad endpoint is never tested"
                );
            }
        }
        assert_eq!(Search::plain_steps(12), 4);
        assert_eq!(Search::plain_steps(16), 4);
        assert_eq!(Search::plain_steps(1), 0);
    }

    #[test]
    fn skips_are_gone_around_and_leave_a_range_only_where_they_hide_the_answer() {
        // The culprit 5 is followed by a broken 6: still found.
        let (o, asked) = run(12, 5, &[6]);
        assert_eq!(o.answer, Some(Answer::FirstBad(5)), "{asked:?}");
        // The culprit's parent is broken: the culprit or its parent, as git says.
        let (o, _) = run(12, 5, &[4]);
        assert_eq!(o.answer, Some(Answer::Range { first: 4, last: 5 }));
        // Everything but the endpoint broken: the whole history.
        let broken: Vec<usize> = (0..11).collect();
        let (o, asked) = run(12, 5, &broken);
        assert_eq!(o.answer, Some(Answer::Range { first: 0, last: 11 }));
        assert_eq!(asked.len(), 11);
        // A broken candidate is asked once.
        let (_, asked) = run(30, 17, &[14, 15, 16]);
        let mut seen = asked.clone();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), asked.len(), "{asked:?}");
    }

    #[test]
    fn the_next_step_is_the_middle_and_max_steps_stops_early() {
        let s = Search::new(12);
        // Bracket (-1, 11): the middle is 5.
        assert_eq!(s.next(), Next::Test(5));
        let mut s2 = s.clone();
        s2.mark(5, Mark::Skipped("x".into()));
        // Nearest the middle after 5: 4 and 6 are equally near; the lower is taken.
        assert_eq!(s2.next(), Next::Test(4));
        let mut s3 = Search::new(100);
        let o = bisect(
            &mut s3,
            &mut Truth {
                first_bad: 40,
                broken: vec![],
                asked: vec![],
            },
            Some(2),
        )
        .unwrap();
        assert_eq!((o.answer, o.steps), (None, 2));
        // Resuming the same search goes on where it stopped.
        let o = bisect(
            &mut s3,
            &mut Truth {
                first_bad: 40,
                broken: vec![],
                asked: vec![],
            },
            None,
        )
        .unwrap();
        assert_eq!(o.answer, Some(Answer::FirstBad(40)));
        // One candidate: the bad endpoint itself, nothing to test.
        assert_eq!(Search::new(1).next(), Next::Done(Answer::FirstBad(0)));
    }
}
