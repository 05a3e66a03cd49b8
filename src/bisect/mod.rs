//! Bisecting a performance change: which commit between a good and a bad kernel made it
//! slower (or faster), with a paired campaign at every step.
//!
//! - [`search`]: the search as a pure state machine over the candidates in first-parent
//!   order: the marks (good, bad, skipped with its reason), what to test next, when it is
//!   done, and the answer (a commit, or a range when skips hide it); a step's judge is a trait.
//! - [`rule`]: how the endpoints establish the change D and how a step is judged from its
//!   paired interval against D/2 (good, bad, unsure with more rounds up to a bound), and how
//!   many rounds a step needs.
//!
//! - [`state`]: what a bisection keeps in the store: its spec and its path (one step per
//!   campaign), from which the search is rebuilt after any interruption.
//! - [`flow`]: from the spec to the answer: endpoints, steps, confirmations, each a campaign
//!   of kernels built from the tree ([`flow::Kernels`]), resumable at every point.
//! - [`kernels`]: the kernels from the build cache, one config for every commit.
//! - [`git`]: what is read of the user's tree (never written).
//!
//! docs/bisect.md explains the rule and gives the simulation's figures.

pub mod flow;
pub mod git;
pub mod kernels;
pub mod rule;
pub mod search;
pub mod state;

#[cfg(test)]
mod tests;
